// The Kubernetes "restricted" Pod Security Standard (v1.31), as the field checks the standard
// lists (https://kubernetes.io/docs/concepts/security/pod-security-standards/): every violation
// of a pod spec as "path: what". Used for the sandbox Pod and for the chart's workloads.

type Obj = Record<string, unknown>;
const SAFE_SYSCTLS = new Set(['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.ip_unprivileged_port_start', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_local_reserved_ports', 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes']);
const RESTRICTED_VOLUMES = new Set(['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret']);

export function restrictedViolations(podSpec: Obj): string[] {
  const out: string[] = [];
  const podSc = (podSpec.securityContext ?? {}) as Obj;
  for (const host of ['hostNetwork', 'hostPID', 'hostIPC']) if (podSpec[host] === true) out.push(`spec.${host}: must not be true`);
  for (const [i, v] of ((podSpec.volumes ?? []) as Obj[]).entries()) {
    const kind = Object.keys(v).find((k) => k !== 'name');
    if (!kind || !RESTRICTED_VOLUMES.has(kind)) out.push(`spec.volumes[${i}]: type ${kind} is not allowed`);
  }
  for (const s of ((podSc.sysctls ?? []) as { name: string }[])) if (!SAFE_SYSCTLS.has(s.name)) out.push(`spec.securityContext.sysctls: ${s.name} is not safe`);
  const podSeccomp = (podSc.seccompProfile as Obj | undefined)?.type;
  if (podSeccomp !== undefined && !['RuntimeDefault', 'Localhost'].includes(podSeccomp as string)) out.push('spec.securityContext.seccompProfile: must be RuntimeDefault or Localhost');
  if (podSc.runAsUser === 0) out.push('spec.securityContext.runAsUser: must not be 0');
  const containers = [...((podSpec.initContainers ?? []) as Obj[]), ...((podSpec.containers ?? []) as Obj[]), ...((podSpec.ephemeralContainers ?? []) as Obj[])];
  for (const c of containers) {
    const at = `container ${String(c.name)}`;
    const sc = (c.securityContext ?? {}) as Obj;
    if (sc.privileged === true) out.push(`${at}: privileged`);
    if (sc.allowPrivilegeEscalation !== false) out.push(`${at}: allowPrivilegeEscalation must be false`);
    const runAsNonRoot = sc.runAsNonRoot ?? podSc.runAsNonRoot;
    if (runAsNonRoot !== true) out.push(`${at}: runAsNonRoot must be true (pod or container)`);
    if (sc.runAsUser === 0) out.push(`${at}: runAsUser must not be 0`);
    const seccomp = ((sc.seccompProfile as Obj | undefined)?.type ?? podSeccomp) as string | undefined;
    if (!seccomp || !['RuntimeDefault', 'Localhost'].includes(seccomp)) out.push(`${at}: seccompProfile must be RuntimeDefault or Localhost (pod or container)`);
    const caps = (sc.capabilities ?? {}) as { drop?: string[]; add?: string[] };
    if (!(caps.drop ?? []).includes('ALL')) out.push(`${at}: capabilities must drop ALL`);
    for (const cap of caps.add ?? []) if (cap !== 'NET_BIND_SERVICE') out.push(`${at}: capability ${cap} may not be added`);
    if (sc.procMount !== undefined && sc.procMount !== 'Default') out.push(`${at}: procMount must be Default`);
    const appArmor = (sc.appArmorProfile as Obj | undefined)?.type;
    if (appArmor !== undefined && !['RuntimeDefault', 'Localhost'].includes(appArmor as string)) out.push(`${at}: appArmorProfile must be RuntimeDefault or Localhost`);
    for (const p of ((c.ports ?? []) as Obj[])) if (p.hostPort !== undefined && p.hostPort !== 0) out.push(`${at}: hostPort ${String(p.hostPort)}`);
  }
  return out;
}
