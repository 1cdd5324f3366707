// How the simulated node turns a Pod's container into a local process: argv, environment and
// working directory, resolved the way a kubelet resolves them (image defaults, envFrom, env with
// secretKeyRef/configMapKeyRef/fieldRef, $(VAR) expansion), plus the two stand-ins a process
// needs instead of a container: image paths mapped to local commands, and emptyDir mount paths
// rewritten to local directories. No I/O beyond the injected lookups.
import type { KObject } from '../status.js';
import { withoutTrailingSlashes } from '../../lib/trailing-slashes.js';

/** What a real node would read from the image's config. */
export interface ImageConfig {
  /** ENTRYPOINT */
  entrypoint?: string[];
  /** CMD */
  cmd?: string[];
  /** ENV (PATH should be here: the process finds its programs through it) */
  env?: Record<string, string>;
  /** WORKDIR */
  workingDir?: string;
  /** USER, numeric (default 0, as an image without USER) */
  user?: number;
  /**
   * Local paths the image holds at `target`, shown read-only to a jailed container (an
   * unjailed one sees this machine as it is; a jailed one sees only the toolchain and these).
   */
  files?: { source: string; target: string }[];
}

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  ports?: { name?: string; containerPort: number; protocol?: string }[];
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean; subPath?: string }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  resources?: { limits?: Record<string, string>; requests?: Record<string, string> };
  terminationMessagePolicy?: string;
  [key: string]: unknown;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: KeyRef;
    configMapKeyRef?: KeyRef;
    fieldRef?: { fieldPath: string; apiVersion?: string };
    resourceFieldRef?: { resource: string; containerName?: string };
  };
}
export interface KeyRef { name: string; key: string; optional?: boolean }
export interface EnvFromSource {
  prefix?: string;
  secretRef?: { name: string; optional?: boolean };
  configMapRef?: { name: string; optional?: boolean };
}

export interface Probe {
  httpGet?: { path?: string; port: number | string; host?: string; scheme?: string; httpHeaders?: { name: string; value: string }[] };
  tcpSocket?: { port: number | string; host?: string };
  exec?: { command: string[] };
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
}

/** Reads of the pod's namespace: decoded Secret data and ConfigMap data, undefined when absent. */
export interface ConfigSources {
  secret(name: string): Promise<Record<string, string> | undefined>;
  configMap(name: string): Promise<Record<string, string> | undefined>;
}

/** A container the node cannot start as configured (kubelet: CreateContainerConfigError). */
export class ContainerConfigError extends Error {}

export interface ProcessSpec {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
}

export interface ResolveInput {
  pod: KObject;
  container: Container;
  image: ImageConfig;
  podIP: string;
  hostIP: string;
  /** mountPath -> local directory of each emptyDir mount of the container */
  mounts: Record<string, string>;
  /** image path (argv[0]) -> local command words replacing it */
  commands: Record<string, string[]>;
  /** working directory when neither the container nor the image names one */
  defaultCwd: string;
  sources: ConfigSources;
}

/** `$(NAME)` is replaced by a defined variable, `$$` is a literal `$`; anything else stays. */
export function expandVars(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (match, name: string | undefined) => {
    if (name === undefined) return '$';
    return Object.prototype.hasOwnProperty.call(vars, name) ? vars[name]! : match;
  });
}

/** A path inside an emptyDir mount becomes the same path inside the mount's local directory. */
export function rewriteMountPath(value: string, mounts: Record<string, string>): string {
  // the longest mount path wins, as with nested mounts
  const paths = Object.keys(mounts).sort((a, b) => b.length - a.length);
  for (const mountPath of paths) {
    const root = withoutTrailingSlashes(mountPath);
    if (value === root || value === mountPath) return mounts[mountPath]!;
    if (value.startsWith(`${root}/`)) return mounts[mountPath]! + value.slice(root.length);
  }
  return value;
}

function fieldValue(pod: KObject, fieldPath: string, podIP: string, hostIP: string): string {
  const meta = pod.metadata ?? {};
  const spec = (pod.spec ?? {}) as { nodeName?: string; serviceAccountName?: string };
  const mapKey = /^metadata\.(labels|annotations)\['([^']+)'\]$/.exec(fieldPath);
  if (mapKey) return (meta[mapKey[1] as 'labels' | 'annotations'] ?? {})[mapKey[2]!] ?? '';
  switch (fieldPath) {
    case 'metadata.name': return meta.name ?? '';
    case 'metadata.namespace': return meta.namespace ?? '';
    case 'metadata.uid': return meta.uid ?? '';
    case 'spec.nodeName': return spec.nodeName ?? '';
    case 'spec.serviceAccountName': return spec.serviceAccountName ?? 'default';
    case 'status.podIP':
    case 'status.podIPs': return podIP;
    case 'status.hostIP':
    case 'status.hostIPs': return hostIP;
    default: throw new ContainerConfigError(`fieldRef ${fieldPath} is not supported by the node simulator`);
  }
}

async function keyRef(kind: 'Secret' | 'ConfigMap', ref: KeyRef, sources: ConfigSources, namespace: string): Promise<string | undefined> {
  const data = kind === 'Secret' ? await sources.secret(ref.name) : await sources.configMap(ref.name);
  if (data === undefined) {
    if (ref.optional) return undefined;
    throw new ContainerConfigError(`${kind.toLowerCase()} "${ref.name}" not found`);
  }
  if (!Object.prototype.hasOwnProperty.call(data, ref.key)) {
    if (ref.optional) return undefined;
    throw new ContainerConfigError(`couldn't find key ${ref.key} in ${kind} ${namespace}/${ref.name}`);
  }
  return data[ref.key];
}

/** The container's environment, in the kubelet's order: image ENV, envFrom, then env. */
export async function resolveEnv(input: ResolveInput): Promise<Record<string, string>> {
  const { pod, container, image, sources } = input;
  const namespace = pod.metadata?.namespace ?? 'default';
  const env: Record<string, string> = { ...(image.env ?? {}) };
  for (const from of container.envFrom ?? []) {
    const ref = from.secretRef ?? from.configMapRef;
    if (!ref) continue;
    const kind = from.secretRef ? 'Secret' : 'ConfigMap';
    const data = kind === 'Secret' ? await sources.secret(ref.name) : await sources.configMap(ref.name);
    if (data === undefined) {
      if (ref.optional) continue;
      throw new ContainerConfigError(`${kind.toLowerCase()} "${ref.name}" not found`);
    }
    for (const [key, value] of Object.entries(data)) env[`${from.prefix ?? ''}${key}`] = value;
  }
  for (const variable of container.env ?? []) {
    const from = variable.valueFrom;
    let value: string | undefined;
    if (!from) value = expandVars(variable.value ?? '', env);
    else if (from.secretKeyRef) value = await keyRef('Secret', from.secretKeyRef, sources, namespace);
    else if (from.configMapKeyRef) value = await keyRef('ConfigMap', from.configMapKeyRef, sources, namespace);
    else if (from.fieldRef) value = fieldValue(pod, from.fieldRef.fieldPath, input.podIP, input.hostIP);
    else throw new ContainerConfigError(`env ${variable.name}: resourceFieldRef is not supported by the node simulator`);
    if (value !== undefined) env[variable.name] = value;
  }
  for (const [name, value] of Object.entries(env)) env[name] = rewriteMountPath(value, input.mounts);
  return env;
}

/** argv, env and cwd of the process that plays the container. */
export async function resolveProcess(input: ResolveInput): Promise<ProcessSpec> {
  const { container, image } = input;
  const env = await resolveEnv(input);
  // Kubernetes: command replaces ENTRYPOINT (and drops CMD); args replace CMD.
  const command = container.command ?? image.entrypoint ?? [];
  const args = container.args ?? (container.command ? [] : image.cmd ?? []);
  const words = [...command, ...args].map((w) => rewriteMountPath(expandVars(w, env), input.mounts));
  if (words.length === 0) throw new ContainerConfigError('no command specified');
  const mapped = input.commands[words[0]!];
  const argv = mapped ? [...mapped, ...words.slice(1)] : words;
  const cwd = rewriteMountPath(container.workingDir ?? image.workingDir ?? input.defaultCwd, input.mounts);
  return { argv, env, cwd };
}

interface SecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  readOnlyRootFilesystem?: boolean;
}

/** Who the container runs as, inside its jail (the kubelet's resolution of securityContext). */
export interface RunAs {
  uid: number;
  gid: number;
  /** readOnlyRootFilesystem: nothing but its volumes writable (/tmp included). */
  readOnlyRoot: boolean;
}

/**
 * The container's securityContext over the pod's over the image's USER. runAsNonRoot with an
 * effective uid 0 is the kubelet's CreateContainerConfigError.
 */
export function runAs(pod: KObject, container: Container, image: ImageConfig): RunAs {
  const podContext = ((pod.spec as { securityContext?: SecurityContext } | undefined)?.securityContext) ?? {};
  const own = (container.securityContext ?? {}) as SecurityContext;
  const uid = own.runAsUser ?? podContext.runAsUser ?? image.user ?? 0;
  const gid = own.runAsGroup ?? podContext.runAsGroup ?? 0;
  if ((own.runAsNonRoot ?? podContext.runAsNonRoot) && uid === 0) {
    throw new ContainerConfigError(`container has runAsNonRoot and image will run as root (pod: "${pod.metadata?.name}_${pod.metadata?.namespace}(${pod.metadata?.uid})", container: ${container.name})`);
  }
  if (!Number.isInteger(uid) || uid < 0 || !Number.isInteger(gid) || gid < 0) throw new ContainerConfigError(`runAsUser and runAsGroup must be non-negative integers, got ${uid} and ${gid}`);
  return { uid, gid, readOnlyRoot: own.readOnlyRootFilesystem === true };
}

const QUANTITY = /^([+]?(?:\d+(?:\.\d*)?|\.\d+))(?:[eE]([+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$/;
const SUFFIX: Record<string, number> = {
  n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

/** A Kubernetes quantity (`500m`, `2`, `2048Mi`, `1e9`) as a number; ContainerConfigError when it is none. */
export function parseQuantity(value: string, what: string): number {
  const m = QUANTITY.exec(value.trim());
  if (!m) throw new ContainerConfigError(`${what}: ${JSON.stringify(value)} is not a quantity`);
  return Number(m[1]) * (m[2] !== undefined ? 10 ** Number(m[2]) : SUFFIX[m[3] ?? ''] ?? 1);
}

/** The sum of the containers' limits of `resource`; undefined when some container leaves it unlimited. */
function containersLimit(pod: KObject, resource: 'cpu' | 'memory' | 'ephemeral-storage'): number | undefined {
  const containers = ((pod.spec as { containers?: Container[] } | undefined)?.containers) ?? [];
  let total = 0;
  for (const c of containers) {
    const limit = c.resources?.limits?.[resource];
    if (limit === undefined) return undefined;
    total += parseQuantity(String(limit), `container ${c.name} limits.${resource}`);
  }
  return containers.length && total > 0 ? total : undefined;
}

/**
 * The pod's CPU (cores) and memory (bytes) as the kubelet sizes a pod's group: the sum of its
 * containers' limits, and no limit on a resource some container leaves unlimited.
 */
export function podLimits(pod: KObject): { cpu?: number; memoryBytes?: number } {
  const memory = containersLimit(pod, 'memory');
  return { cpu: containersLimit(pod, 'cpu'), memoryBytes: memory === undefined ? undefined : Math.ceil(memory) };
}

/** What the kubelet holds a pod's ephemeral storage to: its emptyDirs' sizeLimit, and its containers' limits together. */
export interface StorageLimits {
  volumes: { name: string; bytes: number; text: string }[];
  pod?: { bytes: number; text: string };
}

export function storageLimits(pod: KObject): StorageLimits {
  const spec = (pod.spec ?? {}) as { volumes?: { name: string; emptyDir?: { sizeLimit?: string | number } }[]; containers?: Container[] };
  const volumes = (spec.volumes ?? []).flatMap((v) => {
    const limit = v.emptyDir?.sizeLimit;
    return limit === undefined ? [] : [{ name: v.name, bytes: parseQuantity(String(limit), `volume ${v.name} emptyDir.sizeLimit`), text: String(limit) }];
  });
  const total = containersLimit(pod, 'ephemeral-storage');
  const limited = (spec.containers ?? []).map((c) => c.resources?.limits?.['ephemeral-storage']);
  return { volumes, ...(total === undefined ? {} : { pod: { bytes: total, text: limited.length === 1 ? String(limited[0]) : String(Math.ceil(total)) } }) };
}
