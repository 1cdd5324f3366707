// Watches the engine's progress, not only its liveness (docs/daemon.md "Progress"): a health
// probe that hangs (or fails) several times in a row, or a turn that shows no engine event for
// the progress timeout while no tool is reported running, is a stall. The watcher also tells
// the daemon when a turn starts and ends (the engine's sessions going busy and idle again).
import type { ProgressPolicy } from './config.js';
import type { EngineSupervisor } from './engine.js';
import type { EngineEvent, EngineEvents } from './events.js';
import type { DaemonProgress } from '../src/lib/daemon-health.js';
import { httpCall } from '../src/lib/http-call.js';
import { engineErrorText } from '../src/lib/model-error.js';

export interface ProgressHooks {
  /** every busy session of the engine went idle */
  onTurnEnd(): void;
  /** the engine is stuck: abort and restart it */
  onStall(reason: string): Promise<void>;
}

/** What GET /svc/health says of progress (the shared schema, src/lib/daemon-health.ts). */
export type ProgressReport = DaemonProgress;

const TOOL_ACTIVE = new Set(['pending', 'running']);
const MAX_TURN_ERRORS = 16;

export class ProgressWatcher {
  private state: 'ok' | 'stalled' = 'ok';
  private reason: string | null = null;
  private since = Date.now();
  private lastEventAt: number | null = null;
  private lastProgressAt = Date.now();
  private stalls = 0;
  private lastStall: { at: string; reason: string } | null = null;
  private readonly busySessions = new Map<string, string>();
  /** the first error of each session's latest turn (opencode's `session.error`), until its next turn starts */
  private readonly turnErrors = new Map<string, string>();
  private readonly runningTools = new Set<string>();
  private failedProbes = 0;
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;
  private stopped = false;

  constructor(
    private readonly engine: EngineSupervisor,
    events: EngineEvents,
    private readonly policy: ProgressPolicy,
    private readonly hooks: ProgressHooks,
    private readonly now: () => number = Date.now,
  ) {
    events.on((event) => this.onEvent(event));
  }

  get busy(): boolean {
    return this.busySessions.size > 0;
  }

  /** A session of the engine retries a model call (opencode's `retry` status): the model cannot be reached. */
  get retrying(): boolean {
    for (const type of this.busySessions.values()) if (type === 'retry') return true;
    return false;
  }

  start(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => void this.tick(), this.policy.healthIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** A (re)started engine is ready: a stall is over; the new process has no turn yet. */
  engineReady(): void {
    if (this.state === 'stalled') this.setState('ok', null);
    this.busySessions.clear();
    this.runningTools.clear();
    this.failedProbes = 0;
    this.lastProgressAt = this.now();
  }

  report(): ProgressReport {
    return {
      state: this.state,
      reason: this.reason,
      since: new Date(this.since).toISOString(),
      busy: this.busy,
      last_event_at: this.lastEventAt === null ? null : new Date(this.lastEventAt).toISOString(),
      stalls: this.stalls,
      last_stall: this.lastStall,
    };
  }

  private setState(state: 'ok' | 'stalled', reason: string | null): void {
    this.state = state;
    this.reason = reason;
    this.since = this.now();
  }

  onEvent(event: EngineEvent): void {
    if (event.type.startsWith('server.')) return; // connected, heartbeat: liveness, not progress
    const now = this.now();
    this.lastEventAt = now;
    this.lastProgressAt = now;
    const props = event.properties;
    if (event.type === 'session.status') {
      const status = (props.status as { type?: unknown } | undefined)?.type;
      if (typeof props.sessionID === 'string' && typeof status === 'string') this.sessionStatus(props.sessionID, status);
    } else if (event.type === 'session.idle') {
      if (typeof props.sessionID === 'string') this.sessionStatus(props.sessionID, 'idle');
    } else if (event.type === 'session.error') {
      if (typeof props.sessionID === 'string') this.turnError(props.sessionID, props.error);
    } else if (event.type === 'message.part.updated') {
      // a tool the engine reports running (a long test) counts as progress until it ends
      const part = props.part as { type?: unknown; id?: unknown; callID?: unknown; state?: { status?: unknown } } | undefined;
      if (part?.type === 'tool') {
        const key = String(part.callID ?? part.id);
        if (TOOL_ACTIVE.has(String(part.state?.status))) this.runningTools.add(key);
        else this.runningTools.delete(key);
      }
    }
  }

  /** Why the session's latest turn failed, while no other turn started since; null if it did not. */
  lastTurnError(sessionId: string | null): string | null {
    return sessionId === null ? null : this.turnErrors.get(sessionId) ?? null;
  }

  private turnError(id: string, error: unknown): void {
    // an abort is the user's own doing; a later error of the same turn (opencode sends the cause
    // again, with its stack, after the turn ended) adds nothing
    if ((error as { name?: unknown } | null)?.name === 'MessageAbortedError' || this.turnErrors.has(id)) return;
    this.turnErrors.set(id, engineErrorText(error) ?? 'the engine reported an error without a message');
    // sub-agents' sessions too: keep the latest few
    for (const old of this.turnErrors.keys()) {
      if (this.turnErrors.size <= MAX_TURN_ERRORS) break;
      this.turnErrors.delete(old);
    }
  }

  private sessionStatus(id: string, type: string): void {
    // a turn starts: the last one's error is history
    if (type !== 'idle' && !this.busySessions.has(id)) this.turnErrors.delete(id);
    const wasBusy = this.busy;
    if (type === 'idle') this.busySessions.delete(id);
    else this.busySessions.set(id, type);
    if (!wasBusy && this.busy) this.lastProgressAt = this.now();
    if (wasBusy && !this.busy) {
      this.runningTools.clear();
      this.hooks.onTurnEnd();
    }
  }

  /** One round: probe health, reconcile the busy sessions with the engine's own list, look for a stall. */
  async tick(): Promise<void> {
    if (this.ticking || this.stopped || this.engine.state !== 'ready' || this.state === 'stalled') return;
    this.ticking = true;
    try {
      const timeoutMs = this.policy.healthTimeoutMs;
      if (await this.probe('/global/health', timeoutMs)) this.failedProbes = 0;
      else if (++this.failedProbes >= this.policy.healthFailures) {
        return this.stall(`the engine's health check did not answer within ${timeoutMs} ms, ${this.failedProbes} times in a row`);
      }
      if (this.stopped || this.engine.state !== 'ready') return;
      await this.reconcileStatus(timeoutMs);
      const quiet = this.now() - this.lastProgressAt;
      if (this.busy && this.runningTools.size === 0 && quiet >= this.policy.timeoutMs) {
        return this.stall(`the turn showed no engine event for ${Math.round(quiet / 1000)} s (progress timeout ${Math.round(this.policy.timeoutMs / 1000)} s)`);
      }
    } finally {
      this.ticking = false;
    }
  }

  private async probe(path: string, timeoutMs: number): Promise<boolean> {
    try {
      return (await httpCall(`${this.engine.baseUrl}${path}`, { headers: { authorization: this.engine.authorization }, timeoutMs })).status === 200;
    } catch {
      return false;
    }
  }

  /** Events can be missed (a reconnect): the engine's `GET /session/status` lists the sessions not idle. */
  private async reconcileStatus(timeoutMs: number): Promise<void> {
    let body: unknown;
    try {
      const res = await httpCall(`${this.engine.baseUrl}/session/status`, { headers: { authorization: this.engine.authorization }, timeoutMs });
      if (res.status !== 200) return;
      body = JSON.parse(res.body);
    } catch {
      return;
    }
    if (!body || typeof body !== 'object') return;
    const listed = new Map<string, string>();
    for (const [id, status] of Object.entries(body as Record<string, { type?: unknown }>)) {
      if (typeof status?.type === 'string' && status.type !== 'idle') listed.set(id, status.type);
    }
    for (const id of [...this.busySessions.keys()]) if (!listed.has(id)) this.sessionStatus(id, 'idle');
    for (const [id, type] of listed) if (this.busySessions.get(id) !== type) this.sessionStatus(id, type);
  }

  private async stall(reason: string): Promise<void> {
    const at = this.now();
    this.setState('stalled', reason);
    this.stalls++;
    this.lastStall = { at: new Date(at).toISOString(), reason };
    this.failedProbes = 0;
    this.busySessions.clear();
    this.runningTools.clear();
    process.stderr.write(`svc-agent: the engine is stalled: ${reason}; aborting and restarting it\n`);
    try {
      await this.hooks.onStall(reason);
    } catch (err) {
      process.stderr.write(`svc-agent: recovering the stalled engine: ${(err as Error).message}\n`);
    }
  }
}
