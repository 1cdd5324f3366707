// git processes started from worker threads. Node's spawn blocks its event loop until the child
// has exec'd: a few ms on an idle machine, 10 ms and more on a busy one, during which a
// controller's loop handles no watch event and no HTTP answer. 200 Projects reconciled at once
// start about 400 git processes: on the main thread that was the operator's largest cost
// (bench/localcluster-reconcile). A pool of worker threads spawns them instead and hands back
// the collected output; the main thread only posts a message. Opt-in per process
// (`useGitSpawnWorkers`), for the long-running ones (operator, API).
import { Worker } from 'node:worker_threads';

export interface PooledRun {
  args: readonly string[];
  env: Record<string, string>;
  input?: string | Buffer;
  timeoutMs: number;
}

export interface PooledResult {
  /** Exit code, null when killed by a signal. */
  code: number | null;
  stdout: Buffer;
  stderr: Buffer;
  timedOut: boolean;
  /** The spawn itself failed (git not found, ...). */
  error?: string;
}

/** How long a git ended by SIGTERM (killRunningGit) gets to remove its lock files before SIGKILL. */
export const GIT_TERM_GRACE_MS = 2000;

// Plain JavaScript (CommonJS) evaluated in the worker: no build step, no loader.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { spawn } = require('node:child_process');
const running = new Set();
const killGroup = (child, signal = 'SIGKILL') => { try { process.kill(-child.pid, signal); } catch { child.kill(signal); } };
parentPort.on('message', ({ id, killAll, args, env, input, timeoutMs }) => {
  if (killAll) {
    // SIGTERM, then SIGKILL for a git still there after the grace; answered once all have exited (reaped)
    const ending = [...running].map((child) => new Promise((resolve) => {
      child.once('close', resolve);
      killGroup(child, 'SIGTERM');
      setTimeout(() => killGroup(child), ${GIT_TERM_GRACE_MS}).unref();
    }));
    return void Promise.all(ending).then(() => parentPort.postMessage({ id, killed: ending.length }));
  }
  let settled = false;
  const done = (message) => { if (!settled) { settled = true; parentPort.postMessage({ id, ...message }); } };
  let child;
  try {
    // own process group, so a timeout also kills git's helpers (remote-http, index-pack)
    child = spawn('git', args, { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  } catch (error) {
    return done({ error: String(error && error.message || error) });
  }
  const out = [];
  const err = [];
  let timedOut = false;
  running.add(child);
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child);
  }, timeoutMs);
  child.stdout.on('data', (c) => out.push(c));
  child.stderr.on('data', (c) => err.push(c));
  child.on('error', (error) => { clearTimeout(timer); running.delete(child); done({ error: error.message }); });
  child.on('close', (code) => {
    clearTimeout(timer);
    running.delete(child);
    done({ code, timedOut, stdout: Buffer.concat(out), stderr: Buffer.concat(err) });
  });
  child.stdin.on('error', () => {});
  child.stdin.end(input === undefined ? '' : input);
});
`;

interface Slot {
  worker: Worker;
  pending: Map<number, (result: PooledResult) => void>;
  /** killAll calls waiting for the worker's count. */
  killing: Map<number, (killed: number) => void>;
}

export class GitSpawnPool {
  private readonly slots: Slot[] = [];
  private nextId = 0;

  constructor(private readonly size: number) {}

  run(job: PooledRun): Promise<PooledResult> {
    const slot = this.pick();
    const id = this.nextId++;
    return new Promise((resolve) => {
      slot.pending.set(id, resolve);
      if (slot.pending.size === 1) slot.worker.ref(); // keeps the process alive while git runs
      slot.worker.postMessage({ id, args: [...job.args], env: job.env, input: job.input, timeoutMs: job.timeoutMs });
    });
  }

  /** Ends every git this pool runs now (SIGTERM; their runs end as killed); resolves with how many, once they exited. */
  async killAll(): Promise<number> {
    const counts = this.slots.map((slot) => new Promise<number>((resolve) => {
      const id = this.nextId++;
      slot.killing.set(id, resolve);
      slot.worker.postMessage({ id, killAll: true });
    }));
    return (await Promise.all(counts)).reduce((a, b) => a + b, 0);
  }

  /** The worker with the fewest runs in flight (new ones up to `size`). */
  private pick(): Slot {
    let best: Slot | undefined;
    for (const slot of this.slots) if (!best || slot.pending.size < best.pending.size) best = slot;
    if (best && (best.pending.size === 0 || this.slots.length >= this.size)) return best;
    return this.start();
  }

  private start(): Slot {
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    const slot: Slot = { worker, pending: new Map(), killing: new Map() };
    worker.unref();
    worker.on('message', (message: PooledResult & { id: number; stdout?: Uint8Array; stderr?: Uint8Array; killed?: number }) => {
      if (message.killed !== undefined) {
        slot.killing.get(message.id)?.(message.killed);
        slot.killing.delete(message.id);
        return;
      }
      const resolve = slot.pending.get(message.id);
      if (!resolve) return;
      slot.pending.delete(message.id);
      if (slot.pending.size === 0) worker.unref();
      resolve({
        code: message.code ?? null,
        timedOut: message.timedOut ?? false,
        stdout: message.stdout ? Buffer.from(message.stdout.buffer, message.stdout.byteOffset, message.stdout.byteLength) : Buffer.alloc(0),
        stderr: message.stderr ? Buffer.from(message.stderr.buffer, message.stderr.byteOffset, message.stderr.byteLength) : Buffer.alloc(0),
        ...(message.error !== undefined ? { error: message.error } : {}),
      });
    });
    // a worker that dies fails its runs (as a failed spawn would) and is replaced on the next run
    const fail = (reason: string) => {
      const index = this.slots.indexOf(slot);
      if (index >= 0) this.slots.splice(index, 1);
      for (const resolve of slot.pending.values()) resolve({ code: null, timedOut: false, stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), error: reason });
      slot.pending.clear();
      for (const resolve of slot.killing.values()) resolve(0);
      slot.killing.clear();
    };
    worker.on('error', (error) => fail(`git spawn worker failed: ${error.message}`));
    worker.on('exit', (code) => fail(`git spawn worker exited (${code})`));
    this.slots.push(slot);
    return slot;
  }
}

let pool: GitSpawnPool | undefined;

/** From now on, runGit starts git from `size` worker threads (0: from the main thread again). */
export function useGitSpawnWorkers(size: number): void {
  pool = size > 0 ? new GitSpawnPool(size) : undefined;
}

export function gitSpawnPool(): GitSpawnPool | undefined {
  return pool;
}
