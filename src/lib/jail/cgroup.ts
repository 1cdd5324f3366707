// CPU, memory and task limits of local sandboxes (docs/sandboxes.md "How much it may run"): one
// control group per jail slot, as a container runtime makes one per pod, with the template's
// `cpu` and `memory` (a Pod's limits under the node simulator). cgroup v2 (one hierarchy) or v1
// (one per controller, as on this project's CI machines); where neither can be written (a
// container without delegation, not root), sandboxes run with RLIMIT_NPROC only and svc dev says
// so at start.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** What one sandbox may use; an absent limit is none. */
export interface SandboxLimits {
  /** CPU cores (may be fractional: a Pod's `500m`). */
  cpu?: number;
  memoryBytes?: number;
  /** Tasks (processes and threads). */
  pids?: number;
}

/** The folder of every sandbox's group, below each hierarchy's root. */
export const GROUP_PARENT = 'svc-sandboxes';
/** CFS period: the kernel's default, 100 ms. */
const CPU_PERIOD_US = 100_000;
const CONTROLLERS = ['cpu', 'memory', 'pids'] as const;
type Controller = typeof CONTROLLERS[number];

/** One file write per limit, named as the hierarchy names it. */
interface Layout {
  version: 1 | 2;
  /** The folder of `group` under each controller (v2: one folder for all). */
  dirs(group: string): Record<Controller, string>;
  writes(limits: SandboxLimits): [Controller, string, string][];
}

const v1 = (root: string): Layout => ({
  version: 1,
  dirs: (group) => Object.fromEntries(CONTROLLERS.map((c) => [c, path.join(root, c, GROUP_PARENT, group)])) as Record<Controller, string>,
  writes: (limits) => [
    ['cpu', 'cpu.cfs_period_us', String(CPU_PERIOD_US)],
    ['cpu', 'cpu.cfs_quota_us', limits.cpu ? String(Math.max(1000, Math.round(limits.cpu * CPU_PERIOD_US))) : '-1'],
    // memory and swap together at the limit (no swapping past it); swap's may not be below
    // memory's, so it is lifted first
    ['memory', 'memory.memsw.limit_in_bytes', '-1'],
    ['memory', 'memory.limit_in_bytes', limits.memoryBytes ? String(limits.memoryBytes) : '-1'],
    ['memory', 'memory.memsw.limit_in_bytes', limits.memoryBytes ? String(limits.memoryBytes) : '-1'],
    ['pids', 'pids.max', limits.pids ? String(limits.pids) : 'max'],
  ],
});

const v2 = (root: string): Layout => ({
  version: 2,
  dirs: (group) => {
    const dir = path.join(root, GROUP_PARENT, group);
    return { cpu: dir, memory: dir, pids: dir };
  },
  writes: (limits) => [
    ['cpu', 'cpu.max', limits.cpu ? `${Math.max(1000, Math.round(limits.cpu * CPU_PERIOD_US))} ${CPU_PERIOD_US}` : `max ${CPU_PERIOD_US}`],
    ['memory', 'memory.max', limits.memoryBytes ? String(limits.memoryBytes) : 'max'],
    // no swap past a limit: a sandbox over it is ended, as a Pod is
    ['memory', 'memory.swap.max', limits.memoryBytes ? '0' : 'max'],
    ['pids', 'pids.max', limits.pids ? String(limits.pids) : 'max'],
  ],
});

/** Which hierarchy `root` holds, or why none can be used. */
export function detectLayout(root = '/sys/fs/cgroup'): Layout | { unavailable: string } {
  if (existsSync(path.join(root, 'cgroup.controllers'))) {
    const available = readFileSync(path.join(root, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
    const missing = CONTROLLERS.filter((c) => !available.includes(c));
    if (missing.length) return { unavailable: `cgroup v2 at ${root} lacks the ${missing.join(', ')} controller` };
    return v2(root);
  }
  const missing = CONTROLLERS.filter((c) => !existsSync(path.join(root, c, 'cgroup.procs')));
  if (missing.length) return { unavailable: `no cgroup hierarchy at ${root} for ${missing.join(', ')}` };
  return v1(root);
}

export class SandboxCgroups {
  private parentReady?: Promise<void>;

  constructor(private readonly layout: Layout, private readonly root = '/sys/fs/cgroup') {}

  get version(): 1 | 2 {
    return this.layout.version;
  }

  /**
   * The parent groups, once per process (v2: the controllers handed down to them). The sandboxes
   * together weigh as many busy processes as the machine has cores (the kubelet's weight for
   * kubepods): under load they share the CPU with svc's own processes, not one share for all.
   */
  prepare(): Promise<void> {
    this.parentReady ??= (async () => {
      if (this.layout.version === 2) {
        const parent = path.join(this.root, GROUP_PARENT);
        await mkdir(parent, { recursive: true });
        const enable = CONTROLLERS.map((c) => `+${c}`).join(' ');
        await writeFile(path.join(this.root, 'cgroup.subtree_control'), enable);
        await writeFile(path.join(parent, 'cgroup.subtree_control'), enable);
        await writeFile(path.join(parent, 'cpu.weight'), String(Math.min(10_000, 100 * os.availableParallelism())));
      } else {
        for (const c of CONTROLLERS) await mkdir(path.join(this.root, c, GROUP_PARENT), { recursive: true });
        await writeFile(path.join(this.root, 'cpu', GROUP_PARENT, 'cpu.shares'), String(1024 * os.availableParallelism()));
      }
    })().catch((error: unknown) => {
      this.parentReady = undefined;
      throw error;
    });
    return this.parentReady;
  }

  /**
   * Makes `group` (when new) and sets its limits: every one, a limit left out lifted; with
   * `only`, just those of these controllers.
   */
  async set(group: string, limits: SandboxLimits, only: readonly Controller[] = CONTROLLERS): Promise<void> {
    await this.prepare();
    const dirs = this.layout.dirs(group);
    for (const dir of new Set(Object.values(dirs))) await mkdir(dir, { recursive: true });
    for (const [controller, file, value] of this.layout.writes(limits)) {
      if (!only.includes(controller)) continue;
      const target = path.join(dirs[controller], file);
      // the swap files are absent without swap accounting: nothing to limit then
      if (/swap|memsw/.test(file) && !existsSync(target)) continue;
      try {
        await writeFile(target, value);
      } catch (error) {
        throw new Error(`cannot set ${file} of sandbox group ${group} to ${value}: ${(error as Error).message}`);
      }
    }
  }

  /** How often the kernel ended a process of `group` for its memory, and the limit; undefined when unknown. */
  async oomKills(group: string): Promise<{ count: number; limitBytes?: number } | undefined> {
    const dir = this.layout.dirs(group).memory;
    const [events, limit] = this.layout.version === 2 ? ['memory.events', 'memory.max'] : ['memory.oom_control', 'memory.limit_in_bytes'];
    try {
      const count = Number(/^oom_kill (\d+)$/m.exec(await readFile(path.join(dir, events), 'utf8'))?.[1] ?? 0);
      const bytes = Number((await readFile(path.join(dir, limit), 'utf8')).trim());
      // (v1 says "no limit" with the largest page-aligned number, v2 with "max")
      return { count, ...(Number.isFinite(bytes) && bytes < 2 ** 62 ? { limitBytes: bytes } : {}) };
    } catch {
      return undefined; // (no group: removed, or never made)
    }
  }

  /** Moves `pid` (a launcher that has not forked yet) into `group`: what it starts is in it too. */
  async enter(group: string, pid: number): Promise<void> {
    for (const dir of new Set(Object.values(this.layout.dirs(group)))) await writeFile(path.join(dir, 'cgroup.procs'), String(pid));
  }

  /** Removes `group` once its processes are gone (the kernel refuses while one is left: tried a few times). */
  async remove(group: string): Promise<void> {
    for (const dir of new Set(Object.values(this.layout.dirs(group)))) {
      for (let attempt = 0; ; attempt++) {
        try {
          await rmdir(dir);
          break;
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === 'ENOENT') break;
          if (code !== 'EBUSY' || attempt >= 20) throw error;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    }
  }

  /** Removes every group `keep` does not name (those of slots a crash left): none fails the rest. */
  async sweep(keep: (group: string) => boolean): Promise<void> {
    const parents = new Set(CONTROLLERS.map((c) => path.dirname(this.layout.dirs('x')[c])));
    const groups = new Set<string>();
    for (const parent of parents) {
      for (const entry of await readdir(parent, { withFileTypes: true }).catch(() => [])) if (entry.isDirectory()) groups.add(entry.name);
    }
    for (const group of groups) if (!keep(group)) await this.remove(group).catch(() => undefined);
  }
}

/**
 * The machine's sandbox groups, or why there are none. Checked once by making the parent group
 * (a read-only or undelegated hierarchy says so here, not at a session's start).
 */
export async function machineCgroups(root = '/sys/fs/cgroup'): Promise<SandboxCgroups | { unavailable: string }> {
  const layout = detectLayout(root);
  if ('unavailable' in layout) return layout;
  const cgroups = new SandboxCgroups(layout, root);
  try {
    await cgroups.prepare();
  } catch (error) {
    return { unavailable: `cannot make sandbox groups in cgroup v${layout.version} at ${root}: ${(error as Error).message}` };
  }
  return cgroups;
}
