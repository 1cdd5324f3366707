// Jails for sandboxes on one machine (issue 20 §1, DESIGN.md §8.1), shared by the `process`
// provider and the node simulator: each sandbox gets its own network namespace (net.ts), runs
// as its own non-root uid in its own mount, PID, IPC, UTS and user namespaces (bwrap.ts), sees
// its own folders read-write and the toolchain read-only, and reaches only the API. Pure Node:
// src/localcluster may import it. docs/sandboxes.md is the threat model.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { chown, lstat, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { envInt } from '../env-int.js';
import { childrenMap, isRunning, processTree } from '../proc.js';
import { jailCommand, type Volume } from './bwrap.js';
import { machineCgroups, type SandboxCgroups, type SandboxLimits } from './cgroup.js';
import { AddressPlan, DEFAULT_SUBNET, inNetns, netnsName, netnsPids, run, SandboxNetworks, type JailSlot } from './net.js';

export { SYSTEM_PATHS, type Volume } from './bwrap.js';
export { mountsFromEnv, parseSandboxMount, SandboxMountError } from './mounts.js';
export { DEFAULT_SUBNET, RUN_DIR, SANDBOX_UID_BASE, type JailSlot } from './net.js';

/** `svc dev --sandbox-mount HOST_PATH[:ro|:rw]`: a host path shown at the same path in every sandbox. */
export interface SandboxMount {
  /** Where the sandbox sees it (the path given). */
  path: string;
  /** The host path, when it differs (a symlink resolved). */
  source?: string;
  writable: boolean;
}

export interface JailOptions {
  /** Ports of the gateway address a sandbox may reach: the API's. */
  apiPorts: readonly number[];
  /** Host paths shown read-only at the same path beyond the system folders (node, the svc package's bin/, dist/, node_modules/, package.json). */
  toolchain: readonly string[];
  /** --sandbox-mount paths. */
  mounts?: readonly SandboxMount[];
  /** The sandboxes' address range (SVC_SANDBOX_SUBNET, default 10.213.0.0/16); its last address is the gateway. */
  subnet?: string;
  /** Where slot records live (default /run/svc-jail). */
  runDir?: string;
  /** Processes and threads a sandbox may have at once (SVC_SANDBOX_MAX_PIDS, default DEFAULT_MAX_PIDS). */
  maxPids?: number;
  /** Where the cgroup hierarchy is mounted (default /sys/fs/cgroup), or false for no CPU and memory limits. */
  cgroupRoot?: string | false;
}

/** The CPU and memory a sandbox may use (its template's, a Pod's limits); none when absent. */
export type ResourceLimits = Pick<SandboxLimits, 'cpu' | 'memoryBytes'>;

/**
 * Tasks a sandbox may have at once unless SVC_SANDBOX_MAX_PIDS says otherwise: OpenShift's pod
 * default. An agent's builds and browsers use hundreds; a fork bomb stops here.
 */
export const DEFAULT_MAX_PIDS = 4096;
/** Fewer would not leave svc-agent and an engine their threads. */
export const MIN_MAX_PIDS = 64;

export interface JailLaunch {
  argv: readonly string[];
  env: Record<string, string>;
  /** Working directory inside. */
  cwd: string;
  /** The sandbox's own folders (made writable for its uid), and any other path to show. */
  volumes: readonly Volume[];
  /** What the sandbox sees as its uid and gid (a pod's runAsUser/runAsGroup; default 1000). */
  uid?: number;
  gid?: number;
  /** A pod's readOnlyRootFilesystem: /tmp read-only too (everything else but volumes already is). */
  readOnlyTmp?: boolean;
  /** stdio of fds 0-2 (fd 3 carries the jail's own arguments). */
  stdio: readonly ('ignore' | 'pipe' | 'inherit' | number)[];
  /** Its own process group, to outlive its parent (the process provider's sandboxes do). */
  detached?: boolean;
  /** Its CPU priority, nice(1)'s (default 0): a sandbox made ahead of its session yields to those at work. */
  niceness?: number;
  /** Its CPU and memory, enforced where the machine's cgroups can be written (limitsLine says); when absent, the slot's stay as they are. */
  limits?: ResourceLimits;
}

/** The gateway address of a subnet: where the API listens for sandboxes. */
export function gatewayAddress(subnet = process.env.SVC_SANDBOX_SUBNET?.trim() || DEFAULT_SUBNET): string {
  return new AddressPlan(subnet).gateway;
}

/** The svc package's paths a sandbox needs (read-only): never the package root, which may hold .svc-dev/. */
export function packageToolchain(packageRoot: string): string[] {
  const paths = ['bin', 'dist', 'node_modules', 'package.json'].map((p) => path.join(packageRoot, p));
  const node = path.dirname(process.execPath);
  if (!['/usr/', '/bin', '/sbin'].some((system) => node === system || node.startsWith(system.endsWith('/') ? system : `${system}/`))) paths.push(node);
  return paths;
}

/**
 * Makes `folder` and all in it `uid`'s. A folder just made (a first start) is changed here: a
 * `chown -R` costs a fork of this process, whose page tables grow with its memory.
 */
async function handOver(folder: string, uid: number, gid: number): Promise<void> {
  const stat = await lstat(folder);
  if (stat.isDirectory() && (await readdir(folder)).length === 0) return chown(folder, uid, gid);
  await run('chown', ['-R', `${uid}:${gid}`, folder]);
}

export class Jail {
  readonly networks: SandboxNetworks;
  private readonly mounts: Volume[];
  readonly maxPids: number;
  private cgroupsFound?: Promise<SandboxCgroups | { unavailable: string }>;

  constructor(private readonly options: JailOptions) {
    this.maxPids = options.maxPids ?? envInt('SVC_SANDBOX_MAX_PIDS', DEFAULT_MAX_PIDS, MIN_MAX_PIDS);
    const subnet = options.subnet ?? (process.env.SVC_SANDBOX_SUBNET?.trim() || DEFAULT_SUBNET);
    this.networks = new SandboxNetworks({ plan: new AddressPlan(subnet), apiPorts: options.apiPorts, runDir: options.runDir });
    this.mounts = (options.mounts ?? []).map((m) => ({ source: m.source ?? m.path, target: m.path, writable: m.writable }));
  }

  /** Where sandboxes reach the host (the API listens here). */
  get gateway(): string {
    return this.networks.gateway;
  }

  /** A network slot for a sandbox of `owner` (its provider's data directory), named `key`. */
  allocate(owner: string, key: string, inboundPorts: readonly number[]): Promise<JailSlot> {
    return this.networks.allocate(owner, key, inboundPorts);
  }

  /** Gives `slot` a new key (a slot made ahead of its sandbox, then given to it). */
  rename(slot: JailSlot, key: string): Promise<JailSlot> {
    return this.networks.rename(slot, key);
  }

  /** Stops whatever still runs in the slot and removes its network and its control group. */
  async release(slot: Pick<JailSlot, 'index'>): Promise<void> {
    await this.networks.release(slot);
    const cgroups = await this.cgroups();
    // (a group a late exit still holds is left to the next sweep: it limits nothing once empty)
    if (!('unavailable' in cgroups)) await cgroups.remove(netnsName(slot.index)).catch(() => undefined);
  }

  find(index: number, owner: string): Promise<JailSlot | undefined> {
    return this.networks.find(index, owner);
  }

  async sweep(owner: string, keep: (slot: JailSlot) => boolean): Promise<number> {
    const removed = await this.networks.sweep(owner, keep);
    // groups of slots nobody holds any more (a crash between release's two steps)
    const cgroups = await this.cgroups();
    if (!('unavailable' in cgroups)) {
      await cgroups.sweep((group) => {
        const index = /^svcj-(\d+)$/.exec(group)?.[1];
        return index === undefined || this.networks.held(Number(index));
      });
    }
    return removed;
  }

  /** The machine's control groups for sandboxes (found once), or why CPU and memory go unlimited. */
  cgroups(): Promise<SandboxCgroups | { unavailable: string }> {
    this.cgroupsFound ??= this.options.cgroupRoot === false
      ? Promise.resolve({ unavailable: 'turned off' })
      : machineCgroups(this.options.cgroupRoot);
    return this.cgroupsFound;
  }

  /** What svc dev says of the limits: how they are enforced, or why not. */
  async limitsLine(): Promise<string> {
    const cgroups = await this.cgroups();
    return 'unavailable' in cgroups
      ? `at most ${this.maxPids} tasks each; CPU and memory not held (${cgroups.unavailable})`
      : `at most ${this.maxPids} tasks each, a fair share of the CPU, the memory their template gives (cgroup v${cgroups.version})`;
  }

  /** How often the kernel ended a process of slot `index` for its memory, and the limit (SandboxCgroups.oomKills). */
  async oomKills(index: number): Promise<{ count: number; limitBytes?: number } | undefined> {
    const cgroups = await this.cgroups();
    return 'unavailable' in cgroups ? undefined : cgroups.oomKills(netnsName(index));
  }

  /** Sets the CPU and memory of the sandbox in `slot` (a warm one given to its session). */
  async setLimits(slot: JailSlot, limits: ResourceLimits): Promise<void> {
    const cgroups = await this.cgroups();
    if (!('unavailable' in cgroups)) await cgroups.set(slot.netns, { ...limits, pids: this.maxPids });
  }

  /**
   * Starts `launch.argv` jailed in `slot`. The sandbox's writable volumes are handed to its host
   * uid first. Resolves once spawned; the pid is nsenter's, then the outer bwrap's (the same
   * process), which lives as long as the sandbox.
   */
  async spawn(slot: JailSlot, launch: JailLaunch): Promise<ChildProcess> {
    // the sandbox's own folders become its uid's (never a --sandbox-mount: that stays the user's)
    for (const v of launch.volumes) if (v.writable) await handOver(v.source, slot.hostUid, slot.hostGid);
    const found = await this.cgroups();
    const cgroups = 'unavailable' in found ? undefined : found;
    // its CPU and memory when given, else what the slot's group has (another container of its pod)
    await cgroups?.set(slot.netns, { ...launch.limits, pids: this.maxPids }, launch.limits ? undefined : ['pids']);
    const { argv, fd3 } = jailCommand({
      netnsPath: slot.netnsPath,
      hostUid: slot.hostUid,
      hostGid: slot.hostGid,
      uid: launch.uid ?? 1000,
      gid: launch.gid ?? launch.uid ?? 1000,
      toolchain: this.options.toolchain,
      volumes: [...this.mounts, ...launch.volumes],
      cwd: launch.cwd,
      argv: launch.argv,
      readOnlyTmp: launch.readOnlyTmp,
      maxPids: this.maxPids,
    });
    const command = launch.niceness ? ['nice', '-n', String(launch.niceness), ...argv] : argv;
    const child = spawn(command[0]!, command.slice(1), {
      // a network namespace of its own: every port on its loopback is its own (daemon/own-ports.ts)
      env: { ...launch.env, SVC_SANDBOX_OWN_NETWORK: '1' },
      stdio: [...launch.stdio.slice(0, 3), 'pipe'],
      detached: launch.detached ?? false,
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', reject);
    });
    // into its group before it forks: bwrap waits for its options on fd 3, written below
    try {
      await cgroups?.enter(slot.netns, child.pid!);
    } catch (error) {
      child.kill('SIGKILL');
      throw new Error(`cannot put the sandbox in its control group: ${(error as Error).message}`);
    }
    const args = child.stdio[3] as NodeJS.WritableStream;
    args.on('error', () => undefined); // bwrap gone early: its exit says why
    args.end(fd3);
    // resolved once nsenter joined the namespace: until then `running` would call the sandbox gone
    // (a provider observing right after its start saw it "exited" and started it again)
    for (let waited = 0; !inNetns(child.pid!, slot.netnsPath) && waited < 5_000; waited += 2) {
      if (child.exitCode !== null || child.signalCode !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    return child;
  }

  /**
   * Gives every process of the sandbox started as `pid` (every thread: nice(1) is per thread) the
   * CPU priority `niceness`: a sandbox started with a lower one, once it is wanted. Again until a
   * look finds no thread it has not changed: a thread (or a process) made meanwhile by one not yet
   * changed has the old priority (a libuv worker that svc-agent's main thread started between the
   * listing of its threads and its own change kept nice 19). Throws when it may not (raising a
   * priority takes CAP_SYS_NICE).
   */
  setNiceness(pid: number, niceness: number): void {
    const changed = new Set<number>();
    for (let pass = 0; pass < 5; pass++) {
      let fresh = 0;
      for (const p of processTree(pid)) {
        let threads: string[];
        try { threads = readdirSync(`/proc/${p}/task`); } catch { continue; } // gone
        for (const thread of threads.map(Number)) {
          if (changed.has(thread)) continue;
          changed.add(thread);
          fresh++;
          try {
            os.setPriority(thread, niceness);
          } catch (error) {
            if ((error as { info?: { code?: string } }).info?.code !== 'ESRCH') throw error; // (gone: fine)
          }
        }
      }
      if (fresh === 0) return;
    }
  }

  /** Whether `pid` is the launcher of the sandbox in `slot` (a recycled pid is not). */
  running(slot: JailSlot, pid: number): boolean {
    return inNetns(pid, slot.netnsPath);
  }

  /**
   * Stops the sandbox started as `pid` in `slot`: SIGTERM to its main process (the payload, so
   * that it can stop its children and save its work), SIGKILL to everything in the slot after
   * `graceMs`.
   */
  async terminate(slot: JailSlot, pid: number, graceMs: number): Promise<void> {
    const main = payloadPid(pid);
    if (main !== undefined) { try { process.kill(main, 'SIGTERM'); } catch { /* gone */ } }
    const deadline = Date.now() + graceMs;
    while (isRunning(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    for (const p of await netnsPids(slot.netns)) { try { process.kill(p, 'SIGKILL'); } catch { /* gone */ } }
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  }
}

const LAUNCHERS = new Set(['nice', 'nsenter', 'bwrap', 'setpriv']);

/**
 * The sandbox's main program: from `root` down the jail's launchers, each one's oldest child (the
 * one it started), to the first process that is no launcher. Not any process below: the init of
 * the sandbox's PID namespace (a launcher) also adopts what the sandbox's programs leave behind
 * (`setsid`, `cmd &` in a shell that exits), and a stop's SIGTERM meant for svc-agent went to such
 * an orphan: svc-agent saved nothing and was killed after the whole grace.
 */
export function payloadPid(root: number): number | undefined {
  const children = childrenMap();
  for (let pid: number | undefined = root, depth = 0; pid !== undefined && depth < 16; pid = children.get(pid)?.[0], depth++) {
    let program: string;
    try { program = path.basename(readlinkSync(`/proc/${pid}/exe`)); } catch { return undefined; } // (gone)
    if (!LAUNCHERS.has(program)) return pid;
  }
  return undefined;
}
