// The command that starts one jailed process (pure: no I/O but reading what the host's / holds).
//
//   nsenter --net=/run/netns/<sandbox>            the sandbox's network namespace (net.ts)
//     bwrap --args 3 --                           OUTER, as root: mount, PID, IPC and UTS
//       (its options come from fd 3, so that        namespaces; a new root with the read-only
//       host paths are not on its command line,     toolchain, the sandbox's own writable
//       which the sandbox can read in /proc/1)      folders, /dev, /proc, a private /tmp
//       prlimit --nproc=N                         at most N tasks of uid U at once (below)
//       setpriv --reuid U --regid G ...           drops to the sandbox's own non-root uid, no
//                                                 capabilities, no new privileges
//         bwrap --unshare-user --uid u --gid g    INNER, unprivileged: a user namespace that
//           --disable-userns --new-session          shows the pod's uid (runAsUser) inside;
//           --bind / / -- <argv>                    no nested user namespaces, no tty
//
// Two bubblewraps because one cannot do both: an unprivileged bwrap cannot reach a source path
// below a folder its uid may not enter (svc's data directory is 700 root), and a bwrap run as
// root keeps uid 0 outside; so root builds the filesystem view and the sandbox's uid wraps
// itself in a user namespace inside it. An escape from the inner namespaces lands as uid U,
// which owns nothing on the host but this sandbox's own folders.
//
// Each sandbox has a host uid of its own, so RLIMIT_NPROC, which the kernel counts per real uid
// (and keeps as the ceiling of the user namespaces made below it), bounds the processes and
// threads of the whole sandbox: a fork bomb stops there instead of taking every pid of the host.
import { lstatSync, readlinkSync } from 'node:fs';
import path from 'node:path';

/** A host path shown inside (`target`), read-only unless `writable`. */
export interface Volume {
  source: string;
  target: string;
  writable?: boolean;
}

export interface BwrapSpec {
  /** The network namespace's file (/run/netns/NAME). */
  netnsPath: string;
  /** Outside uid and gid the sandbox runs as (never 0). */
  hostUid: number;
  hostGid: number;
  /** uid and gid the sandbox sees (a pod's runAsUser/runAsGroup). */
  uid: number;
  gid: number;
  /** Read-only host paths shown at the same path (the toolchain beyond the system folders). */
  toolchain: readonly string[];
  /** Folders at their target path: the sandbox's own (writable) and --sandbox-mount ones. */
  volumes: readonly Volume[];
  /** Working directory inside. */
  cwd: string;
  argv: readonly string[];
  /** /tmp read-only too (a pod's readOnlyRootFilesystem). */
  readOnlyTmp?: boolean;
  hostname?: string;
  /** At most this many processes and threads at once (the kubelet's --pod-max-pids). */
  maxPids: number;
}

/** The host's system folders shown read-only: /usr and /etc, and /bin, /sbin, /lib* as they are (often symlinks into /usr). */
export const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];

/** Every ancestor of `p` below /, outermost first: /a, /a/b for /a/b/c. */
function ancestors(p: string): string[] {
  const out: string[] = [];
  let dir = path.dirname(p);
  while (dir !== '/' && dir !== '.') {
    out.unshift(dir);
    dir = path.dirname(dir);
  }
  return out;
}

/** The outer bwrap's arguments (root: builds the sandbox's filesystem and namespaces). */
export function outerArgs(spec: BwrapSpec): string[] {
  const args = ['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--hostname', spec.hostname ?? 'sandbox'];
  const made = new Set<string>(['/']);
  // parents made 755 by us: bwrap would make them 700, which the sandbox's uid could not enter
  const parents = (target: string) => {
    for (const dir of ancestors(target)) {
      if (made.has(dir)) continue;
      made.add(dir);
      args.push('--perms', '0755', '--dir', dir);
    }
  };
  for (const system of SYSTEM_PATHS) {
    let stat;
    try { stat = lstatSync(system); } catch { continue; }
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(system), system);
    else if (stat.isDirectory()) args.push('--ro-bind', system, system);
    made.add(system);
  }
  args.push('--dev', '/dev', '--proc', '/proc', '--perms', '1777', '--tmpfs', '/tmp');
  made.add('/dev').add('/proc').add('/tmp');
  for (const p of spec.toolchain) {
    parents(p);
    args.push('--ro-bind', p, p);
    made.add(p);
  }
  for (const v of spec.volumes) {
    parents(v.target);
    args.push(v.writable ? '--bind' : '--ro-bind', v.source, v.target);
    made.add(v.target);
  }
  // read-only once what is shown below it is in place (a checkout or a mount under /tmp needs its
  // parents made there first); a volume mounted at /tmp itself is that volume, as it says
  if (spec.readOnlyTmp && !spec.volumes.some((v) => path.resolve(v.target) === '/tmp')) args.push('--remount-ro', '/tmp');
  return args;
}

/** prlimit and setpriv, then the inner bwrap (unprivileged: the user namespace the payload sees), then the payload. */
export function innerCommand(spec: BwrapSpec): string[] {
  if (spec.hostUid === 0 || spec.hostGid === 0) throw new Error('a jailed process never runs as uid or gid 0 on the host');
  if (!(Number.isInteger(spec.maxPids) && spec.maxPids > 0)) throw new Error(`a jailed process needs a task limit, got ${spec.maxPids}`);
  return [
    'prlimit', `--nproc=${spec.maxPids}`, '--',
    'setpriv', `--reuid=${spec.hostUid}`, `--regid=${spec.hostGid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', '--',
    'bwrap', '--unshare-user', '--uid', String(spec.uid), '--gid', String(spec.gid), '--disable-userns',
    // --dev again: mounts made in a user namespace are nodev, so /dev/null needs its own bind
    '--die-with-parent', '--new-session', '--bind', '/', '/', '--dev', '/dev', '--chdir', spec.cwd, '--', ...spec.argv,
  ];
}

/** argv of the whole launch, and the outer bwrap's options (NUL-separated) to write to its fd 3. */
export function jailCommand(spec: BwrapSpec): { argv: string[]; fd3: Buffer } {
  return {
    // bwrap reads options from --args, the command from its own argv (no host path in it)
    argv: ['nsenter', `--net=${spec.netnsPath}`, '--', 'bwrap', '--args', '3', '--', ...innerCommand(spec)],
    fd3: Buffer.from(outerArgs(spec).map((a) => `${a}\0`).join(''), 'utf8'),
  };
}
