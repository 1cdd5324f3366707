// Supervises the agent engine (opencode, or the command in SVC_ENGINE_COMMAND): starts it with its
// password and config dir, waits until it answers 200 with the password and 401 without, restarts
// it with exponential backoff when it exits, and gives up (state `failed`) after too many restarts
// in the window. Health keeps being served in every state.
import { spawn, type ChildProcess } from 'node:child_process';
import { httpCall } from '../src/lib/http-call.js';
import { randomBytes } from 'node:crypto';
import type { RestartPolicy } from './config.js';
import { exitCause, StderrTail } from './engine-errors.js';

export type EngineState = 'stopped' | 'booting' | 'ready' | 'restarting' | 'failed';

export interface EngineExit { code: number | null; signal: string | null; at: string }

export interface EngineLaunch {
  command: string[];
  cwd: string;
  env: Record<string, string>;
}

export interface SupervisorOptions {
  port: number;
  restart: RestartPolicy;
  bootTimeoutMs: number;
  /**
   * The most of the engine's output copied to svc-agent's stderr, over all its runs: the host keeps
   * that log, and whatever the agent runs in the engine (a plugin in its config) prints there.
   */
  logMaxBytes?: number;
  /** builds command, cwd and env for each start (the env can change between starts) */
  launch: () => EngineLaunch;
}

/** How often a booting engine is asked whether it answers: a session's start waits for this (a refused connection costs little). */
const BOOT_PROBE_INTERVAL_MS = 10;
/** How often while earlier probes wait for their answer (an engine that accepted them and answers nothing yet). */
const WAITING_PROBE_INTERVAL_MS = 50;
const PROBE_TIMEOUT_MS = 2_000;
/** Probes waiting at once, at most: one per WAITING_PROBE_INTERVAL_MS over a PROBE_TIMEOUT_MS. */
const MAX_WAITING_PROBES = PROBE_TIMEOUT_MS / WAITING_PROBE_INTERVAL_MS;

/** Basic-auth user name opencode expects with OPENCODE_SERVER_PASSWORD. */
export const ENGINE_USER = 'opencode';

export class EngineSupervisor {
  readonly password = randomBytes(24).toString('base64url');
  readonly authorization: string;
  state: EngineState = 'stopped';
  restarts = 0;
  lastExit: EngineExit | null = null;
  lastError: string | null = null;
  /** The last lines the engine wrote to stderr (this run's, else the last run's). */
  readonly stderrTail = new StderrTail();
  /** Runs whose end already has its cause in lastError (a failed spawn, a boot timeout). */
  private readonly explained = new WeakSet<ChildProcess>();
  /** when the engine is `restarting`: epoch ms of the next start */
  nextRestartAt: number | null = null;
  private child: ChildProcess | null = null;
  private crashes: number[] = [];
  private timer: NodeJS.Timeout | null = null;
  private generation = 0;
  private readonly readyListeners: Array<() => void> = [];
  /** Bytes of engine output copied to stderr so far (all runs). */
  private logged = 0;

  constructor(private readonly options: SupervisorOptions) {
    this.authorization = `Basic ${Buffer.from(`${ENGINE_USER}:${this.password}`).toString('base64')}`;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.options.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  onReady(listener: () => void): void {
    this.readyListeners.push(listener);
  }

  start(): void {
    if (this.state === 'booting' || this.state === 'ready') return;
    this.clearTimer();
    this.spawnEngine();
  }

  /** Stops the engine and starts it again (not counted as a crash). */
  async restart(): Promise<void> {
    await this.stop();
    this.crashes = [];
    this.spawnEngine();
  }

  /** SIGTERM to the engine's process group, SIGKILL after `graceMs`; resolves once the engine exited. */
  async stop(graceMs = 5_000): Promise<void> {
    this.clearTimer();
    this.generation++;
    const child = this.child;
    this.child = null;
    this.state = 'stopped';
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      killGroup(child, 'SIGTERM');
      const forced = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
      await exited;
      clearTimeout(forced);
    }
  }

  /**
   * A stuck engine (daemon/progress.ts): ends its process group (SIGTERM, SIGKILL after 2 s); its
   * exit then counts like a crash (backoff, the restart limit), with `reason` as the last error.
   */
  recover(reason: string): void {
    const child = this.child;
    if (!child || this.state !== 'ready') return;
    this.lastError = reason;
    this.explained.add(child); // its exit is the stall's, not a crash of its own
    this.state = 'restarting';
    killGroup(child, 'SIGTERM');
    const forced = setTimeout(() => killGroup(child, 'SIGKILL'), 2_000);
    child.once('exit', () => clearTimeout(forced));
  }

  /** Last resort when the daemon itself exits: never leave an orphaned engine behind. */
  killNow(): void {
    if (this.child) killGroup(this.child, 'SIGKILL');
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.nextRestartAt = null;
  }

  private spawnEngine(): void {
    const generation = ++this.generation;
    this.state = 'booting';
    let launch: EngineLaunch;
    try {
      launch = this.options.launch();
    } catch (err) {
      this.fail(`cannot start the engine: ${(err as Error).message}`);
      return;
    }
    const [command, ...args] = launch.command as [string, ...string[]];
    const child = spawn(command, args, {
      cwd: launch.cwd,
      env: { ...launch.env, OPENCODE_SERVER_PASSWORD: this.password },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group, so its children go with it
    });
    this.child = child;
    this.stderrTail.clear();
    const maxLogged = this.options.logMaxBytes ?? Number.POSITIVE_INFINITY;
    const relay = (prefix: string) => (chunk: Buffer) => {
      if (this.logged >= maxLogged) return;
      // cut at the bound: a pipe's chunk is up to 64 KiB, and the whole last one went past it
      const shown = chunk.subarray(0, maxLogged - this.logged);
      this.logged += shown.length;
      for (const line of shown.toString().split('\n')) if (line) process.stderr.write(`[engine${prefix}] ${line}\n`);
      if (this.logged >= maxLogged) process.stderr.write(`[engine] the engine's output past ${maxLogged} bytes is not logged (SVC_ENGINE_LOG_MAX_BYTES)\n`);
    };
    child.stdout!.on('data', relay(''));
    child.stderr!.on('data', relay(':err'));
    child.stderr!.on('data', (chunk: Buffer) => this.stderrTail.push(chunk.toString()));
    child.on('error', (err) => {
      this.lastError = `cannot start ${command}: ${err.message}`;
      this.explained.add(child);
    });
    child.on('close', (code, signal) => {
      if (generation !== this.generation) return; // stopped on purpose
      this.child = null;
      this.lastExit = { code, signal, at: new Date().toISOString() };
      if (!this.explained.has(child)) this.lastError = exitCause(this.lastExit, this.stderrTail.lines());
      this.scheduleRestart();
    });
    void this.waitReady(generation, child);
  }

  private async waitReady(generation: number, child: ChildProcess): Promise<void> {
    const deadline = Date.now() + this.options.bootTimeoutMs;
    // opencode accepts connections before it answers them, and a probe sent then is never
    // answered: so a probe does not wait for the one before it. A new one goes out every
    // interval while earlier ones wait (each up to PROBE_TIMEOUT_MS, for an engine merely slow to
    // answer), and the first answer counts. (Waiting for each in turn cost opencode's starts up
    // to 400 ms, and 1.7 s with a 2 s wait.)
    let ready = false;
    let waiting = 0;
    let answered!: () => void;
    const readySeen = new Promise<void>((resolve) => { answered = resolve; });
    while (generation === this.generation && this.child === child) {
      if (waiting < MAX_WAITING_PROBES) {
        waiting++;
        const probe = this.answersWithPassword().then((answers) => {
          waiting--;
          if (answers) { ready = true; answered(); }
          return 'answered' as const;
        });
        // refused or answered: the next one shortly; still waiting: the next one meanwhile
        const first = await Promise.race([probe, sleep(WAITING_PROBE_INTERVAL_MS), readySeen]);
        if (first === 'answered' && !ready) await Promise.race([sleep(BOOT_PROBE_INTERVAL_MS), readySeen]);
      } else {
        await Promise.race([sleep(WAITING_PROBE_INTERVAL_MS), readySeen]);
      }
      if (ready) {
        if (generation !== this.generation || this.child !== child) return;
        this.state = 'ready';
        this.lastError = null;
        for (const listener of this.readyListeners) listener();
        return;
      }
      if (Date.now() > deadline) {
        this.lastError = `engine not ready after ${this.options.bootTimeoutMs} ms`;
        this.explained.add(child);
        killGroup(child, 'SIGKILL');
        return;
      }
    }
  }

  /** Readiness: 200 on /global/health with the password and 401 without. */
  private async answersWithPassword(): Promise<boolean> {
    try {
      const url = `${this.baseUrl}/global/health`;
      const withPassword = await httpCall(url, { headers: { authorization: this.authorization }, timeoutMs: PROBE_TIMEOUT_MS });
      if (withPassword.status !== 200) return false;
      return (await httpCall(url, { timeoutMs: PROBE_TIMEOUT_MS })).status === 401;
    } catch {
      return false; // refused, or no answer within PROBE_TIMEOUT_MS
    }
  }

  private scheduleRestart(): void {
    const now = Date.now();
    const { maxRestarts, windowMs, backoffMs, maxBackoffMs } = this.options.restart;
    this.crashes = this.crashes.filter((t) => now - t < windowMs);
    this.crashes.push(now);
    if (this.crashes.length > maxRestarts) {
      this.fail(`engine exited ${this.crashes.length} times within ${windowMs} ms; giving up`);
      return;
    }
    this.state = 'restarting';
    this.restarts++;
    const delay = Math.min(backoffMs * 2 ** (this.crashes.length - 1), maxBackoffMs);
    this.nextRestartAt = now + delay;
    this.timer = setTimeout(() => { this.clearTimer(); this.spawnEngine(); }, delay);
  }

  private fail(reason: string): void {
    this.state = 'failed';
    // the cause of the last exit stays: "giving up" alone says nothing a person can fix
    this.lastError = this.lastError ? `${reason}; the last: ${this.lastError}` : reason;
    process.stderr.write(`svc-agent: ${reason}\n`);
  }

  /** A call to the engine with its password. */
  async call(method: string, path: string, body?: unknown, timeoutMs = 10_000): Promise<{ status: number; body: unknown }> {
    const res = await httpCall(`${this.baseUrl}${path}`, {
      method,
      headers: { authorization: this.authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      timeoutMs,
    });
    let parsed: unknown = res.body;
    try { parsed = res.body ? JSON.parse(res.body) : null; } catch { /* not JSON */ }
    return { status: res.status, body: parsed };
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
