// The `process` sandbox provider (the embedded default of `svc dev`): svc-agent as a detached
// child process of the operator, with its own folder under the data directory:
//   <dataDir>/<namespace>/<name>/state.json  pid, address, jail slot, the Sandbox uid (what a restarted operator reads)
//                               /workspace   the clone (discarded on every start, SPEC §1.2)
//                               /home        the engine home (kept across a restart after a crash,
//                                            fresh after a stop: a wake gets a new root session)
//                               /daemon.log  the daemon's output
// Isolated (the default; src/lib/jail, docs/sandboxes.md): the daemon and everything it runs live
// in a jail of their own, as the image lays it out (/workspace, /opt/svc/home, the `svc` CLI in
// /opt/svc/bin), listening on port 8000 of the sandbox's own address, reaching only the API.
// Without isolation (`svc dev --unsafe-no-isolation`) the daemon listens on a free port of
// 127.0.0.1 (SVC_DAEMON_PORT) and its engine on another, with the host's view of everything.
// Either way the agent sees SVC_SERVICE_PORT=8000 and no SVC_WORKSPACE (SPEC §2.6). Secrets reach
// the child through its environment only: never argv, a file or a log. Detached, so that an
// operator killed with SIGKILL leaves its sandboxes running for the next operator to find.
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, ftruncateSync, openSync, readdirSync, readFileSync, readSync, statSync, writeSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, rmdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { checkIsolation, describeProblems } from '../../lib/jail/check.js';
import type { Jail, JailSlot, ResourceLimits, Volume } from '../../lib/jail/index.js';
import { diskUsages } from '../../lib/disk-usage.js';
import { KeyedMutex } from '../../lib/keyed-mutex.js';
import { isRunning } from '../../lib/proc.js';
import { SANDBOX_STOP_GRACE_MS } from '../../lib/sandbox-stop.js';
import { fitsWarm, warmEnvironment } from '../../lib/warm-sandbox.js';
import { writeJsonReplacing } from '../../lib/write-json.js';
import { DAEMON_LOG_TAIL_BYTES } from '../../resources/session-log.js';
import type { SandboxObservation, SandboxProvider, SandboxRef, SandboxRequest } from '../provider.js';

export interface ProcessProviderOptions {
  /** Root of every sandbox's folder. */
  dataDir: string;
  /** How to run svc-agent, e.g. [node, /path/dist/daemon/main.js]. */
  agentCommand: readonly string[];
  /** SVC_ENGINE_COMMAND of every sandbox (`{port}` replaced by the daemon); default: the daemon's (opencode). */
  engineCommand?: string;
  /** Non-secret daemon settings passed to every sandbox (e.g. SVC_ENGINE_MAX_RESTARTS). */
  daemonEnv?: Record<string, string>;
  /** Directories put first on the sandbox's PATH (e.g. one holding the `svc` CLI). */
  pathPrepend?: readonly string[];
  /** Loopback address the daemons listen on (default 127.0.0.1). */
  host?: string;
  /**
   * How long delete() waits after SIGTERM for svc-agent to exit (it checkpoints, then ends its
   * engine and the sandbox's processes) before SIGKILL (default SANDBOX_STOP_GRACE_MS, 35 s).
   */
  stopGraceMs?: number;
  /**
   * The jail every sandbox runs in (src/lib/jail), or 'none' (`svc dev --unsafe-no-isolation`:
   * the agent runs as the operator's user with the host's view of everything).
   */
  isolation: Jail | 'none';
  /**
   * Jailed sandboxes kept started ahead of their session (default 0: none): a jail slot, its
   * folders and svc-agent loaded, waiting for its session's settings, so that a start does not
   * wait for them (docs/sandboxes.md "Warm sandboxes"). Only with isolation.
   */
  warm?: number;
  /**
   * CPU cores, memory and disk (MiB) of a sandbox whose template gives none (SVC_SANDBOX_CPU when
   * set, SVC_SANDBOX_MEMORY_MIB, SVC_SANDBOX_DISK_MIB); CPU and memory held where the jail can use
   * the machine's cgroups.
   */
  defaultResources?: { cpu?: number; memory: number; disk?: number };
  /** How often a running sandbox's folders are measured against its disk limit (default DISK_CHECK_INTERVAL_MS). */
  diskCheckIntervalMs?: number;
}

interface SandboxState {
  pid: number;
  /** host:port of the daemon */
  address: string;
  /** The jail slot (isolated sandboxes). */
  slot?: number;
  uid: string;
  startedAt: string;
  /** Its workspace and engine home may hold this much (the template's disk), as a Pod's ephemeral storage. */
  diskLimitBytes?: number;
  /** Why it was stopped for good (over its disk limit): it is not started again. */
  evicted?: string;
}

/** As the kubelet's eviction manager measures a pod's ephemeral storage: now and then, not on every write. */
const DISK_CHECK_INTERVAL_MS = 30_000;

/** Where the image puts things (SPEC §2.6), and so where a jailed sandbox sees them. */
const WORKSPACE = '/workspace';
const ENGINE_HOME = '/opt/svc/home';
const BIN_DIR = '/opt/svc/bin';
const DAEMON_PORT = 8000;
/** daemon.log past this is cut to its last DAEMON_LOG_TAIL_BYTES when svc-agent starts again (openDaemonLog). */
const DAEMON_LOG_MAX_BYTES = 64 * 1024 * 1024;
/** Where warm sandboxes wait (`<dataDir>/.warm/<id>`): skipped by sandboxDirs(), like every dot folder. */
const WARM_DIR = '.warm';
/** A warm sandbox's CPU priority while it waits: made meanwhile, it yields to the sessions starting. */
const WARM_NICENESS = 19;
/**
 * The next warm sandbox is made this long after one was given: made at once, its svc-agent's load
 * (about 60 ms of CPU) competed with the start that took the last one, on two cores a loss.
 */
const WARM_REFILL_DELAY_MS = 1_000;

/** A jailed sandbox started ahead of its session (its slot, folders and svc-agent), waiting for its settings. */
interface WarmSandbox {
  dir: string;
  slot: JailSlot;
  child: ChildProcess;
  /** Given to a Sandbox: its exit is then that Sandbox's (watchExit). */
  given: boolean;
}

function alive(pid: number): boolean {
  if (!isRunning(pid)) return false;
  // A recycled pid belongs to another program: only our daemon counts.
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return /svc-agent|daemon[/\\]main\.js/.test(cmdline);
  } catch {
    return true; // no /proc (macOS): trust the signal probe
  }
}

/**
 * Processes left by a sandbox whose daemon died without stopping them (its engine runs in its
 * own process group): found by the sandbox's engine home in their environment (Linux /proc).
 */
function strays(home: string): number[] {
  const marker = `SVC_ENGINE_HOME=${home}\0`;
  const found: number[] = [];
  let entries: string[];
  try { entries = readdirSync('/proc'); } catch { return found; }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').includes(marker)) found.push(Number(entry));
    } catch { /* another user's process, or gone */ }
  }
  return found;
}

/**
 * Whether a stopped sandbox may have left processes behind, which spares a read of every
 * process's environment on the machine when not: not one that ran in a jail slot (every process
 * of it was in the slot's namespaces, killed with them), nor one whose engine home is gone or was
 * never made (a stray names it, and it is made before any spawn).
 */
function mayLeaveStrays(state: SandboxState | null, home: string): boolean {
  return state ? state.slot === undefined : existsSync(home);
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export class ProcessSandboxProvider implements SandboxProvider {
  readonly name = 'process' as const;
  private readonly locks = new KeyedMutex();
  private readonly host: string;
  private readonly jail: Jail | null;
  /** Sandboxes this operator started or found, for stopAll(). */
  private readonly known = new Set<string>();
  private readonly exitListeners = new Set<(ref: SandboxRef) => void>();
  private swept?: Promise<void>;
  /** Warm sandboxes ready to be given, and how many are being made. */
  private readonly warm: WarmSandbox[] = [];
  private readonly warming = new Set<Promise<void>>();
  private refill: NodeJS.Timeout | null = null;
  private stopping = false;
  private readonly diskCheck: NodeJS.Timeout;
  private diskChecking = false;

  constructor(private readonly options: ProcessProviderOptions) {
    this.host = options.host ?? '127.0.0.1';
    this.jail = options.isolation === 'none' ? null : options.isolation;
    this.diskCheck = setInterval(() => void this.evictOverDisk(), options.diskCheckIntervalMs ?? DISK_CHECK_INTERVAL_MS);
    this.diskCheck.unref();
  }

  private dir(ref: SandboxRef): string {
    return path.join(this.options.dataDir, ref.namespace, ref.name);
  }

  /** Who owns this provider's jail slots: its data directory. */
  private get owner(): string {
    return path.resolve(this.options.dataDir);
  }

  private async readState(ref: SandboxRef): Promise<SandboxState | null> {
    return readStateFile(path.join(this.dir(ref), 'state.json'));
  }

  private async running(state: SandboxState): Promise<boolean> {
    if (!this.jail || state.slot === undefined) return !this.jail && alive(state.pid);
    const slot = await this.jail.find(state.slot, this.owner);
    return slot !== undefined && this.jail.running(slot, state.pid);
  }

  private async observeState(ref: SandboxRef, state: SandboxState | null): Promise<SandboxObservation> {
    if (!state || state.uid !== ref.uid) return { state: 'absent' };
    if (state.evicted) return { state: 'failed', reason: 'Evicted', message: state.evicted };
    if (await this.running(state)) {
      this.known.add(this.dir(ref));
      return { state: 'running', address: state.address, detail: { pid: state.pid } };
    }
    const log = path.join(this.dir(ref), 'daemon.log');
    // its group outlives it until the slot is released: did it run out of memory? Then it failed,
    // as a Pod OOMKilled does for the kubernetes provider: started again it would only do it again
    const slot = this.jail && state.slot !== undefined ? await this.jail.find(state.slot, this.owner) : undefined;
    const oom = slot?.key === `${ref.namespace}/${ref.name}` ? await this.jail!.oomKills(slot.index) : undefined;
    if (oom?.count) {
      const limit = oom.limitBytes ? `its memory limit of ${Math.round(oom.limitBytes / 2 ** 20)} MiB` : 'its memory limit';
      return {
        state: 'failed',
        reason: 'OOMKilled',
        message: `the sandbox process ${state.pid} exited after the kernel ended ${oom.count} of its processes for using ${limit}: give its template more memory (else SVC_SANDBOX_MEMORY_MIB); its output is in ${log}`,
      };
    }
    return { state: 'absent', reason: 'Exited', message: `the sandbox process ${state.pid} exited; its output is in ${log}` };
  }

  async observe(ref: SandboxRef): Promise<SandboxObservation> {
    await this.sweepOnce();
    return this.observeState(ref, await this.readState(ref));
  }

  /**
   * Once per provider (a started or restarted operator; the operator calls it once it leads, the
   * first observe or ensure waits for it): jail slots of this data directory that no running
   * sandbox holds are leftovers of a crash, removed with whatever still runs in them; so are
   * those of owners whose folder is gone.
   */
  sweepOnce(): Promise<void> {
    const jail = this.jail;
    if (!jail) return Promise.resolve();
    this.swept ??= (async () => {
      const held = new Map<number, number>(); // slot -> pid of the sandbox that holds it
      for (const dir of this.sandboxDirs()) {
        const state = await readStateFile(path.join(dir, 'state.json'));
        if (state?.slot !== undefined) held.set(state.slot, state.pid);
      }
      // (warm sandboxes of an earlier operator hold slots no sandbox does: they go here too)
      await jail.sweep(this.owner, (slot) => held.has(slot.index) && jail.running(slot, held.get(slot.index)!)).catch(() => 0);
      await rm(path.join(this.options.dataDir, WARM_DIR), { recursive: true, force: true });
      this.fillWarm();
    })();
    return this.swept;
  }

  /** How many warm sandboxes wait, ready to be given. */
  get warmWaiting(): number {
    return this.warm.length;
  }

  /** Starts warm sandboxes until `warm` of them wait (in the background: a failure is only said). */
  private fillWarm(): void {
    const want = this.jail ? this.options.warm ?? 0 : 0;
    while (!this.stopping && this.warm.length + this.warming.size < want) {
      const started: Promise<void> = this.startWarm().then(async (sandbox) => {
        if (this.stopping) await this.stopWarm(sandbox);
        else this.warm.push(sandbox);
      }, (error: Error) => {
        process.stderr.write(`svc: a warm sandbox could not be started (sessions start without one): ${error.message}\n`);
      }).finally(() => { this.warming.delete(started); });
      this.warming.add(started);
    }
  }

  /** The next warm sandbox, once the start that took the last one is likely done (WARM_REFILL_DELAY_MS). */
  private fillWarmSoon(): void {
    if (this.refill) return;
    this.refill = setTimeout(() => {
      this.refill = null;
      this.fillWarm();
    }, WARM_REFILL_DELAY_MS);
    this.refill.unref();
  }

  private async startWarm(): Promise<WarmSandbox> {
    const jail = this.jail!;
    const dir = path.join(this.options.dataDir, WARM_DIR, randomBytes(6).toString('hex'));
    await mkdir(path.join(dir, 'workspace'), { recursive: true, mode: 0o700 });
    await mkdir(path.join(dir, 'home'), { recursive: true, mode: 0o700 });
    const slot = await jail.allocate(this.owner, path.relative(this.options.dataDir, dir), [DAEMON_PORT]);
    let child: ChildProcess;
    try {
      // svc-agent itself, loaded, reads its session's settings from the pipe (src/lib/warm-sandbox.ts)
      child = await this.spawnJailed(slot, dir, warmEnvironment(this.jailedEnv(null)), this.limitsOf(null), this.options.agentCommand, 'pipe', WARM_NICENESS);
    } catch (error) {
      await jail.release(slot).catch(() => undefined);
      throw error;
    }
    const sandbox: WarmSandbox = { dir, slot, child, given: false };
    child.stdin!.on('error', () => undefined); // gone early: its exit says so
    child.once('exit', () => {
      if (sandbox.given) return;
      // ended while waiting: given to nobody; its slot and folder go
      const index = this.warm.indexOf(sandbox);
      if (index >= 0) this.warm.splice(index, 1);
      this.stopWarm(sandbox).catch((error: Error) => process.stderr.write(`svc: a warm sandbox that ended could not be removed: ${error.message}\n`));
    });
    return sandbox;
  }

  private async stopWarm(sandbox: WarmSandbox): Promise<void> {
    const jail = this.jail!;
    sandbox.child.stdin?.destroy(); // svc-agent ends without starting a session
    await jail.terminate(sandbox.slot, sandbox.child.pid!, 0).catch(() => undefined);
    await jail.release(sandbox.slot).catch(() => undefined);
    await rm(sandbox.dir, { recursive: true, force: true });
  }

  /**
   * Gives a warm sandbox to `request` in `dir` (nothing of an earlier sandbox there): its folder
   * becomes the sandbox's (the jail's mounts follow the rename), then its svc-agent gets the
   * session's settings (what its environment lacks). Null when none waits.
   */
  private async giveWarm(request: SandboxRequest, dir: string): Promise<Omit<SandboxState, 'uid' | 'startedAt'> | null> {
    const base = this.jailedEnv(null);
    const env = this.jailedEnv(request);
    if (!fitsWarm(base, env)) return null;
    const settings = Object.fromEntries(Object.entries(env).filter(([key, value]) => base[key] !== value));
    const sandbox = this.warm.shift();
    if (!sandbox) {
      this.fillWarm(); // (one that ended while it waited is replaced)
      return null;
    }
    this.fillWarmSoon();
    sandbox.given = true;
    try {
      await this.jail!.setLimits(sandbox.slot, this.limitsOf(request));
    } catch (error) {
      // (a limit below what its svc-agent already uses): a sandbox of its own instead
      process.stderr.write(`svc: a warm sandbox could not take the limits of ${request.namespace}/${request.name}: ${(error as Error).message}\n`);
      void this.stopWarm(sandbox).catch(() => undefined);
      return null;
    }
    this.watchExit(sandbox.child, request);
    await rm(dir, { recursive: true, force: true });
    await mkdir(path.dirname(dir), { recursive: true });
    await rename(sandbox.dir, dir);
    sandbox.dir = dir;
    sandbox.slot = await this.jail!.rename(sandbox.slot, `${request.namespace}/${request.name}`);
    try {
      this.jail!.setNiceness(sandbox.child.pid!, 0);
    } catch (error) {
      process.stderr.write(`svc: a warm sandbox given to ${request.namespace}/${request.name} keeps its low CPU priority: ${(error as Error).message}\n`);
    }
    sandbox.child.stdin!.end(JSON.stringify(settings));
    return { pid: sandbox.child.pid!, address: `${sandbox.slot.address}:${DAEMON_PORT}`, slot: sandbox.slot.index };
  }

  ensure(request: SandboxRequest): Promise<SandboxObservation> {
    return this.locks.run(this.dir(request), async () => {
      await this.sweepOnce();
      const previous = await this.readState(request);
      const seen = await this.observeState(request, previous);
      if (seen.state !== 'absent') return seen;
      if (this.jail) {
        const report = await checkIsolation();
        if (!report.ok) {
          return { state: 'failed', reason: 'IsolationUnavailable', message: `the sandbox cannot be isolated on this machine: ${describeProblems(report)} (or start svc dev with --unsafe-no-isolation)` };
        }
      }
      const dir = this.dir(request);
      // a first start: a warm sandbox when one waits
      const given = previous === null && this.jail ? await this.giveWarm(request, dir) : null;
      if (given) return this.recordStarted(request, dir, given);
      const workspace = path.join(dir, 'workspace');
      const home = path.join(dir, 'home');
      // Processes left by an earlier start (an operator that crashed between the spawn and
      // state.json) name this home, which is made before any spawn: a first start has none, and
      // skips the scan of every process on the machine.
      const mayHaveStrays = previous !== null || existsSync(home);
      // Same Sandbox, process died: keep the engine home (its root session and the record that
      // the initial prompt went out). Another Sandbox of that name: start from nothing.
      if (previous && previous.uid !== request.uid) await rm(dir, { recursive: true, force: true });
      if (previous) await this.stopState(previous);
      if (mayHaveStrays) for (const pid of strays(home)) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
      await rm(workspace, { recursive: true, force: true });
      await mkdir(workspace, { recursive: true, mode: 0o700 });
      await mkdir(home, { recursive: true, mode: 0o700 });
      const started = this.jail ? await this.startJailed(request, dir) : await this.startPlain(request, dir, workspace, home);
      return this.recordStarted(request, dir, started);
    });
  }

  /** Writes what a restarted operator reads of a started sandbox. */
  private async recordStarted(request: SandboxRequest, dir: string, started: Omit<SandboxState, 'uid' | 'startedAt'>): Promise<SandboxObservation> {
    const disk = request.template.disk ?? this.options.defaultResources?.disk;
    const state: SandboxState = { ...started, uid: request.uid, startedAt: new Date().toISOString(), ...(disk ? { diskLimitBytes: disk * 2 ** 20 } : {}) };
    await writeState(dir, state);
    this.known.add(dir);
    return { state: 'provisioning', address: state.address, detail: { pid: state.pid } };
  }

  /**
   * The kubelet's eviction of a pod over its ephemeral-storage limit: each running sandbox's
   * workspace and engine home are measured (one du for all, outside this process) and one over its template's
   * disk is stopped (its svc-agent checkpoints on the way out) and failed as Evicted, its folders
   * kept. One pass at a time.
   */
  private async evictOverDisk(): Promise<void> {
    if (this.diskChecking || this.stopping) return;
    this.diskChecking = true;
    try {
      const measured: { dir: string; state: SandboxState }[] = [];
      for (const dir of [...this.known]) {
        const state = await readStateFile(path.join(dir, 'state.json'));
        if (state?.diskLimitBytes && !state.evicted) measured.push({ dir, state });
      }
      const usages = await diskUsages(measured.map(({ dir }) => [path.join(dir, 'workspace'), path.join(dir, 'home')]));
      for (const [i, { dir, state }] of measured.entries()) {
        const used = usages[i];
        if (used === undefined || used <= state.diskLimitBytes!) continue;
        const evicted = await this.locks.run(dir, async () => {
          const now = await readStateFile(path.join(dir, 'state.json'));
          if (now?.uid !== state.uid || now.evicted) return false;
          const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
          const why = `evicted: the sandbox's workspace and engine home use ${mib(used)} MiB, over its disk limit of ${mib(state.diskLimitBytes!)} MiB (the template's disk, else SVC_SANDBOX_DISK_MIB); its folders are kept`;
          await writeState(dir, { ...now, evicted: why });
          await this.stopState(now);
          return true;
        });
        if (!evicted) continue;
        const [namespace, name] = path.relative(this.options.dataDir, dir).split(path.sep) as [string, string];
        for (const listener of this.exitListeners) listener({ namespace, name, uid: state.uid });
      }
    } catch (error) {
      process.stderr.write(`svc: measuring sandboxes' disk failed: ${(error as Error).message}\n`);
    } finally {
      this.diskChecking = false;
    }
  }

  onExit(listener: (ref: SandboxRef) => void): () => void {
    this.exitListeners.add(listener);
    return () => this.exitListeners.delete(listener);
  }

  /** A sandbox this operator started ended: its controller looks now (a crash is restarted at once). */
  private watchExit(child: ChildProcess, ref: SandboxRef): void {
    const { namespace, name, uid } = ref;
    child.once('exit', () => { for (const listener of this.exitListeners) listener({ namespace, name, uid }); });
  }

  /** The environment of every sandbox: SPEC §2.6 plus the daemon's settings, then the local placement. */
  private baseEnv(request: SandboxRequest | null, pathPrepend: readonly string[]): Record<string, string> {
    return {
      PATH: [...pathPrepend, process.env.PATH ?? '/usr/bin:/bin'].join(path.delimiter),
      ...(process.env.LANG ? { LANG: process.env.LANG } : {}),
      ...this.options.daemonEnv,
      ...request?.env,
      ...request?.secretEnv,
      ...(this.options.engineCommand ? { SVC_ENGINE_COMMAND: this.options.engineCommand } : {}),
    };
  }

  /** A jailed sandbox's environment; without a request, what every one has (a warm sandbox's before its session). */
  private jailedEnv(request: SandboxRequest | null): Record<string, string> {
    return {
      ...this.baseEnv(request, this.binMounts().map((b) => b.target)),
      HOME: ENGINE_HOME,
      SVC_WORKSPACE: WORKSPACE,
      SVC_ENGINE_HOME: ENGINE_HOME,
      SVC_SERVICE_HOST: '0.0.0.0', // its own network namespace: every address there is its own
      SVC_SERVICE_PORT: String(DAEMON_PORT),
    };
  }

  private async startJailed(request: SandboxRequest, dir: string): Promise<Omit<SandboxState, 'uid' | 'startedAt'>> {
    const jail = this.jail!;
    const slot = await jail.allocate(this.owner, `${request.namespace}/${request.name}`, [DAEMON_PORT]);
    try {
      const child = await this.spawnJailed(slot, dir, this.jailedEnv(request), this.limitsOf(request));
      this.watchExit(child, request);
      return { pid: child.pid!, address: `${slot.address}:${DAEMON_PORT}`, slot: slot.index };
    } catch (error) {
      await jail.release(slot).catch(() => undefined);
      throw error;
    }
  }

  /** `argv` (svc-agent) in `slot`, with `dir`'s workspace and home, its output to `dir`'s daemon.log. */
  /** Where a jailed sandbox sees the directories put first on its PATH (pathPrepend): /opt/svc/bin, /opt/svc/bin1, ... */
  private binMounts(): Volume[] {
    return (this.options.pathPrepend ?? []).map((source, i) => ({ source, target: i === 0 ? BIN_DIR : `${BIN_DIR}${i}`, writable: false }));
  }

  /** The CPU and memory of `request`'s template, else the defaults (a warm sandbox's before its session). */
  private limitsOf(request: SandboxRequest | null): ResourceLimits {
    const cpu = request?.template.cpu ?? this.options.defaultResources?.cpu;
    const memory = request?.template.memory ?? this.options.defaultResources?.memory;
    return { cpu, memoryBytes: memory === undefined ? undefined : memory * 2 ** 20 };
  }

  private async spawnJailed(slot: JailSlot, dir: string, env: Record<string, string>, limits: ResourceLimits, argv = this.options.agentCommand, stdin: 'ignore' | 'pipe' = 'ignore', niceness = 0): Promise<ChildProcess> {
    const bins = this.binMounts();
    const log = openDaemonLog(dir);
    try {
      const child = await this.jail!.spawn(slot, {
        argv,
        env,
        cwd: WORKSPACE,
        volumes: [{ source: path.join(dir, 'workspace'), target: WORKSPACE, writable: true }, { source: path.join(dir, 'home'), target: ENGINE_HOME, writable: true }, ...bins],
        stdio: [stdin, log, log],
        detached: true,
        niceness,
        limits,
      });
      child.unref();
      return child;
    } finally {
      closeSync(log);
    }
  }

  private async startPlain(request: SandboxRequest, dir: string, workspace: string, home: string): Promise<Omit<SandboxState, 'uid' | 'startedAt'>> {
    const port = await freePort(this.host);
    let enginePort = await freePort(this.host);
    while (enginePort === port) enginePort = await freePort(this.host);
    const env: Record<string, string> = {
      ...this.baseEnv(request, this.options.pathPrepend ?? []),
      HOME: home,
      SVC_WORKSPACE: workspace,
      SVC_ENGINE_HOME: home,
      SVC_SERVICE_HOST: this.host,
      SVC_DAEMON_PORT: String(port),
      SVC_ENGINE_PORT: String(enginePort),
    };
    const log = openDaemonLog(dir);
    const [command, ...args] = this.options.agentCommand;
    const child = spawn(command!, args, { cwd: dir, env, detached: true, stdio: ['ignore', log, log] });
    closeSync(log);
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('spawn', () => resolve(child.pid!));
      child.once('error', reject);
    });
    child.unref();
    this.watchExit(child, request);
    return { pid, address: `${this.host}:${port}` };
  }

  delete(ref: SandboxRef): Promise<void> {
    const dir = this.dir(ref);
    return this.locks.run(dir, async () => {
      const state = await this.readState(ref);
      if (state) await this.stopState(state);
      const home = path.join(dir, 'home');
      if (mayLeaveStrays(state, home)) await this.endStrays(home);
      await rm(dir, { recursive: true, force: true });
      this.known.delete(dir);
    });
  }

  /** The end of `daemon.log`, when the folder is this Sandbox's. */
  async logTail(ref: SandboxRef, maxBytes: number): Promise<string | null> {
    const state = await this.readState(ref);
    if (!state || state.uid !== ref.uid) return null;
    return readTail(path.join(this.dir(ref), 'daemon.log'), maxBytes);
  }

  /** Stops every sandbox process this operator started or found, keeping their folders (a clean operator stop). */
  async stopAll(): Promise<void> {
    clearInterval(this.diskCheck);
    await this.stopWarmAll();
    await Promise.all([...this.known].map(async (dir) => {
      const state = await readStateFile(path.join(dir, 'state.json'));
      if (state) await this.stopState(state);
    }));
  }

  /**
   * Stops every sandbox recorded under the data directory, whoever started it (folders kept), and
   * frees every jail slot of the directory: for its owner (svc dev) when it stops, after the
   * operator, so that a sandbox no operator adopted since a crash does not outlive it.
   */
  async stopRecorded(): Promise<void> {
    await this.stopWarmAll();
    const stopped = await Promise.allSettled(this.sandboxDirs().map((dir) => this.locks.run(dir, async () => {
      const state = await readStateFile(path.join(dir, 'state.json'));
      if (state) await this.stopState(state);
      const home = path.join(dir, 'home');
      if (mayLeaveStrays(state, home)) await this.endStrays(home);
      this.known.delete(dir);
    })));
    await this.jail?.sweep(this.owner, () => false);
    const failed = stopped.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed.length > 0) throw new Error(failed.map((r) => (r.reason as Error).message).join('; '));
  }

  /** Stops the warm sandboxes and makes no more (the operator stops). */
  private async stopWarmAll(): Promise<void> {
    this.stopping = true;
    if (this.refill) clearTimeout(this.refill);
    await Promise.all([...this.warming]); // (each stops what it started)
    await Promise.all(this.warm.splice(0).map((sandbox) => this.stopWarm(sandbox)));
    // The folder only when empty: it may already hold the warm sandbox of the operator that leads
    // next (one node's replicas share it). Leftovers of a crash go at the next lead's sweep.
    await rmdir(path.join(this.options.dataDir, WARM_DIR)).catch(() => undefined);
  }

  /** The folder of every sandbox under the data directory (`<namespace>/<name>`). */
  private sandboxDirs(): string[] {
    const root = this.options.dataDir;
    return safeReaddir(root).filter((namespace) => !namespace.startsWith('.'))
      .flatMap((namespace) => safeReaddir(path.join(root, namespace)).map((name) => path.join(root, namespace, name)));
  }

  /** Stops a sandbox's processes and frees its jail slot. */
  private async stopState(state: SandboxState): Promise<void> {
    const grace = this.options.stopGraceMs ?? SANDBOX_STOP_GRACE_MS;
    if (this.jail && state.slot !== undefined) {
      const slot = await this.jail.find(state.slot, this.owner);
      if (!slot) return;
      if (this.jail.running(slot, state.pid)) await this.jail.terminate(slot, state.pid, grace);
      await this.jail.release(slot);
      return;
    }
    await this.kill(state.pid, grace);
  }

  /** SIGKILL to what a sandbox left (found by its engine home), waiting until it is gone. */
  private async endStrays(home: string): Promise<void> {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const left = strays(home).filter(isRunning);
      if (left.length === 0) return;
      if (Date.now() > deadline) throw new Error(`processes of the sandbox still run after SIGKILL: ${left.join(', ')}`);
      for (const pid of left) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /**
   * SIGTERM to the daemon (it checkpoints, then ends its engine and the sandbox's processes; its
   * own git children keep running for the checkpoint), SIGKILL to its process group after the
   * grace period; resolves when the daemon is gone.
   */
  private async kill(pid: number, graceMs: number): Promise<void> {
    if (!alive(pid)) return;
    try { process.kill(pid, 'SIGTERM'); } catch { /* gone */ }
    const deadline = Date.now() + graceMs;
    while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (!alive(pid)) return;
    try { process.kill(-pid, 'SIGKILL'); } catch { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    const killed = Date.now() + 5_000;
    while (alive(pid) && Date.now() < killed) await new Promise((r) => setTimeout(r, 20));
    if (alive(pid)) throw new Error(`the sandbox process ${pid} still runs after SIGKILL`);
  }

}

function writeState(dir: string, state: SandboxState): Promise<void> {
  return writeJsonReplacing(path.join(dir, 'state.json'), state);
}

async function readStateFile(file: string): Promise<SandboxState | null> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as SandboxState;
  } catch {
    return null;
  }
}

/** The last `maxBytes` of a file, or null when it cannot be read. */
/**
 * A sandbox's daemon.log, to append to. Each run of svc-agent copies at most 16 MiB of its engine's
 * output there (SVC_ENGINE_LOG_MAX_BYTES), but runs add up (restarts, wakes): a log past
 * DAEMON_LOG_MAX_BYTES is first cut to its last DAEMON_LOG_TAIL_BYTES, all a failed session keeps of it.
 */
export function openDaemonLog(dir: string): number {
  const file = path.join(dir, 'daemon.log');
  const size = existsSync(file) ? statSync(file).size : 0;
  if (size > DAEMON_LOG_MAX_BYTES) {
    const tail = Buffer.alloc(DAEMON_LOG_TAIL_BYTES);
    const fd = openSync(file, 'r+');
    try {
      readSync(fd, tail, 0, tail.length, size - tail.length);
      ftruncateSync(fd, 0);
      writeSync(fd, `[svc] the log was cut to its last ${DAEMON_LOG_TAIL_BYTES} bytes (it had ${size})\n`);
      writeSync(fd, tail);
    } finally {
      closeSync(fd);
    }
  }
  return openSync(file, 'a', 0o600);
}

async function readTail(file: string, maxBytes: number): Promise<string | null> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch {
    return null;
  }
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, maxBytes);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    return buffer.toString('utf8');
  } finally {
    await handle.close();
  }
}

function safeReaddir(dir: string): string[] {
  try { return readdirSync(dir); } catch { return []; }
}
