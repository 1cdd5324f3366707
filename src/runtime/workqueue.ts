/**
 * A keyed work queue (client-go's semantics): a pending key is queued once however often it is
 * added; a key is processed by one worker at a time; a key added while it is being processed
 * runs again right after; a failing key is retried with per-key exponential backoff, reset by
 * a success; a handler may ask for a later run with requeueAfter.
 */
import { Backoff } from '../kube/index.js';

export interface WorkResult {
  /** Process the key again after this many milliseconds. */
  requeueAfter?: number;
}

export type WorkHandler = (key: string) => Promise<WorkResult | void>;

/**
 * The longest timer a queue arms. A later run (a run_at years away) waits in steps of at most
 * this long, the handler computing its delay again each time: Node's timers hold at most
 * 2^31-1 ms (about 24.8 days) and fire at once, with a TimeoutOverflowWarning, beyond it.
 */
export const MAX_REQUEUE_DELAY_MS = 60 * 60_000;

export interface WorkQueueOptions {
  /** Keys processed at once (default 1). */
  concurrency?: number;
  /** Backoff of a failing key: initial and maximum delay (defaults 100 ms and 60 s). */
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** Called with every handler failure (the key is retried). */
  onError?: (key: string, err: unknown) => void;
  /** Called as a key's run starts, with how long it waited in the queue (metrics). */
  onStart?: (key: string, waitedMs: number) => void;
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly pending = new Set<string>();
  /** When each queued key was added (for onStart). */
  private readonly addedAt = new Map<string, number>();
  private readonly inFlight = new Set<string>();
  /** Keys added while in flight: run again when the current run ends. */
  private readonly dirty = new Set<string>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly failures = new Map<string, Backoff>();
  private running = false;
  private idleWaiters: (() => void)[] = [];
  private readonly concurrency: number;

  constructor(
    private readonly handler: WorkHandler,
    private readonly options: WorkQueueOptions = {},
  ) {
    this.concurrency = options.concurrency ?? 1;
  }

  /** Queue `key` now (a no-op if it is already pending). */
  add(key: string): void {
    if (this.inFlight.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.pending.has(key)) return;
    this.pending.add(key);
    this.addedAt.set(key, Date.now());
    this.queue.push(key);
    this.pump();
  }

  /** Queue `key` after `delayMs` (at most MAX_REQUEUE_DELAY_MS); an earlier scheduled run wins over a later one. */
  addAfter(key: string, delayMs: number): void {
    // NaN (a delay computed from an unparsable date) waits the longest step rather than spinning
    delayMs = Number.isNaN(delayMs) ? MAX_REQUEUE_DELAY_MS : Math.min(delayMs, MAX_REQUEUE_DELAY_MS);
    if (delayMs <= 0) return this.add(key);
    const at = Date.now() + delayMs;
    const existing = this.timers.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    this.timers.set(key, { at, timer });
  }

  /** Keys waiting (not in flight). */
  get length(): number {
    return this.queue.length;
  }

  /** Consecutive failures of `key` since its last success. */
  failureCount(key: string): number {
    return this.failures.get(key)?.attempts ?? 0;
  }

  start(): void {
    this.running = true;
    this.pump();
  }

  /** Stops taking keys and drops the scheduled ones; resolves when in-flight runs ended. */
  async stop(): Promise<void> {
    this.running = false;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.queue.length = 0;
    this.pending.clear();
    this.addedAt.clear();
    this.dirty.clear();
    await this.idle();
  }

  /** The keys being processed now. */
  inFlightKeys(): string[] {
    return [...this.inFlight];
  }

  /** Resolves when nothing is in flight. */
  idle(): Promise<void> {
    if (this.inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (this.running && this.inFlight.size < this.concurrency && this.queue.length > 0) {
      const key = this.queue.shift()!;
      this.pending.delete(key);
      this.options.onStart?.(key, Date.now() - (this.addedAt.get(key) ?? Date.now()));
      this.addedAt.delete(key);
      this.inFlight.add(key);
      void this.process(key);
    }
  }

  private async process(key: string): Promise<void> {
    let retryAfter: number | undefined;
    try {
      const result = await this.handler(key);
      this.failures.delete(key);
      retryAfter = result?.requeueAfter;
    } catch (err) {
      let backoff = this.failures.get(key);
      if (!backoff) {
        backoff = new Backoff(this.options.backoffInitialMs ?? 100, this.options.backoffMaxMs ?? 60_000);
        this.failures.set(key, backoff);
      }
      retryAfter = backoff.next();
      this.options.onError?.(key, err);
    } finally {
      this.inFlight.delete(key);
    }
    if (this.running) {
      if (this.dirty.delete(key)) this.add(key);
      if (retryAfter !== undefined) this.addAfter(key, retryAfter);
    }
    if (this.inFlight.size === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    this.pump();
  }
}
