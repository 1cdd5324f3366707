// svc-agent tells the API when its state changes (src/lib/daemon-events.ts; docs/daemon.md
// "State events"), so that the controllers look at its health at once instead of polling for it.
// What is compared is a snapshot of in-memory state (no I/O), on every notify() and on a short
// interval; one request at a time, the latest state wins; a failed send is retried with backoff a
// few times, then given up: the controllers' slow safety net still reads the health.
import { DAEMON_EVENTS_PATH, type DaemonEventKind } from '../src/lib/daemon-events.js';
import { httpCall } from '../src/lib/http-call.js';

/** What the controllers act on, as the daemon knows it: a change of any field is an event. */
export interface StateSnapshot {
  daemon: string;
  engine: string;
  restarts: number;
  rootSession: string | null;
  initialPromptSent: boolean;
  /** Opening the root session or sending the initial prompt failed (svc-agent tries again): the Session says why at once. */
  rootSessionFailing: boolean;
  busy: boolean;
  /** A model call is being retried: the Session's ModelReachable turns False at once, not at the next look. */
  modelRetrying: boolean;
  /** The root session's latest turn failed (the engine's error): the Session says why at once. */
  turnFailed: boolean;
  checkpoint: string | null;
  stalled: boolean;
  stalls: number;
  /** A start step waiting out a transient failure ("clone: the connection was cut off"): the Sandbox says so at once. */
  waitingOut: string | null;
}

/** The parts of the agent a snapshot is read from (all in memory). */
export interface SnapshotSources {
  state: string;
  engine: { state: string; restarts: number };
  rootSession: { id: string | null; initialPromptSentAt: string | null; lastError: string | null };
  progress: { busy: boolean; retrying: boolean; lastTurnError(sessionId: string | null): string | null; report(): { state: string; stalls: number } };
  checkpoints: { report(): { sha: string | null } };
  startRetry: { step: string; cause: string } | null;
}

export function snapshotOf(agent: SnapshotSources): StateSnapshot {
  const progress = agent.progress.report();
  return {
    daemon: agent.state,
    engine: agent.engine.state,
    restarts: agent.engine.restarts,
    rootSession: agent.rootSession.id,
    initialPromptSent: agent.rootSession.initialPromptSentAt !== null,
    rootSessionFailing: agent.rootSession.lastError !== null,
    busy: agent.progress.busy,
    modelRetrying: agent.progress.retrying,
    turnFailed: agent.progress.lastTurnError(agent.rootSession.id) !== null,
    checkpoint: agent.checkpoints.report().sha,
    stalled: progress.state === 'stalled',
    stalls: progress.stalls,
    // the step and the cause, not the attempt: a retry says so once, not at every attempt
    waitingOut: agent.startRetry && `${agent.startRetry.step}: ${agent.startRetry.cause}`,
  };
}

const up = (s: StateSnapshot) => s.daemon === 'ready' && s.engine === 'ready';

/** A word for the change from `before` to `after`, for people reading the annotation. */
export function eventKind(before: StateSnapshot | null, after: StateSnapshot): DaemonEventKind {
  if (after.daemon === 'failed' || after.engine === 'failed') return 'failed';
  if (up(after) && !(before && up(before))) return 'ready';
  if (before && before.busy !== after.busy) return after.busy ? 'busy' : 'idle';
  return before ? 'changed' : 'starting';
}

export interface StateReporterOptions {
  /** SVC_API_URL (ending in /v1). */
  apiUrl: string;
  sandboxToken: string;
  snapshot: () => StateSnapshot;
  /** How often the snapshot is compared without a notify() (default 250 ms). */
  intervalMs?: number;
  /** Sends of one state before it is given up (default 5). */
  maxAttempts?: number;
  /**
   * A booting state (neither up nor failed) is said only this long after start() (default 0): a
   * boot that is up by then says `ready` alone. Each event costs the controllers a round of reads
   * and writes, on the start's own path.
   */
  bootQuietMs?: number;
  log?: (line: string) => void;
}

interface Pending { signature: string; kind: DaemonEventKind; attempts: number }

export class StateReporter {
  /** The state the API acknowledged (or that was given up). */
  private sent: string | null = null;
  private last: StateSnapshot | null = null;
  private pending: Pending | null = null;
  private sending = false;
  private notBefore = 0;
  private quietUntil = 0;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly url: string;
  /** Why events were not delivered, each said once (an API without the route would say it at every change). */
  private readonly told = new Set<string>();

  constructor(private readonly options: StateReporterOptions) {
    this.url = `${options.apiUrl.replace(/\/+$/, '')}${DAEMON_EVENTS_PATH}`;
  }

  start(): void {
    if (this.timer || this.stopped) return;
    this.quietUntil = Date.now() + (this.options.bootQuietMs ?? 0);
    this.timer = setInterval(() => this.check(), this.options.intervalMs ?? 250);
    this.timer.unref();
    this.check();
  }

  /** Something may have changed: compare now rather than at the next tick. */
  notify(): void {
    setImmediate(() => this.check());
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private check(): void {
    if (this.stopped) return;
    const snapshot = this.options.snapshot();
    const signature = JSON.stringify(snapshot);
    if (signature !== (this.pending?.signature ?? this.sent)) this.pending = { signature, kind: eventKind(this.last, snapshot), attempts: 0 };
    this.last = snapshot;
    void this.flush();
  }

  private async flush(): Promise<void> {
    const pending = this.pending;
    if (!pending || this.sending || this.stopped || Date.now() < this.notBefore) return;
    if (Date.now() < this.quietUntil && pending.kind !== 'ready' && pending.kind !== 'failed') return; // (the interval looks again)
    this.sending = true;
    let retryInMs: number | null = null;
    try {
      const res = await httpCall(this.url, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.options.sandboxToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ event: pending.kind }),
        timeoutMs: 5_000,
      });
      if (res.status >= 200 && res.status < 300) this.settle(pending);
      else if (res.status === 429) retryInMs = (Number(res.headers['retry-after']) || 1) * 1000;
      else if (res.status < 500) this.settle(pending, `the API answered ${res.status}`); // a stopped session (401): nobody listens
      else retryInMs = this.backoff(pending);
    } catch {
      retryInMs = this.backoff(pending);
    } finally {
      this.sending = false;
    }
    if (retryInMs !== null) {
      if (++pending.attempts >= (this.options.maxAttempts ?? 5)) this.settle(pending, 'no answer');
      else this.notBefore = Date.now() + retryInMs;
    }
    // a newer state came while this one was on its way: it goes at once
    if (this.pending && this.pending !== pending) void this.flush();
  }

  private backoff(pending: Pending): number {
    return Math.min(250 * 2 ** pending.attempts, 5_000);
  }

  /** Done with this state: acknowledged, or given up (`why`). */
  private settle(pending: Pending, why?: string): void {
    if (why && !this.told.has(why)) {
      this.told.add(why);
      this.options.log?.(`svc-agent: state event ${pending.kind} not delivered (${why}); the operator reads the health anyway\n`);
    }
    this.sent = pending.signature;
    if (this.pending === pending) this.pending = null;
    this.notBefore = 0;
  }
}
