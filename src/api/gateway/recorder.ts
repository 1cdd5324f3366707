// Writes what the gateway counted into the cluster (docs/gateway.md "Where the counters live"):
// per project the ledger ConfigMap (counters and the newest records, archive pages beyond), per
// session its usage ConfigMap. One write loop per object and replica: records that arrive while a
// write is under way go into the next one, so a busy replica makes few, larger writes and an idle
// one writes at once. Every write is read-modify-replace with the resourceVersion as
// precondition, retried on a conflict: replicas never lose each other's counts.
import {
  PAGE_RECORDS, addTotals, appendRecords, ledgerConfigMap, llmLedgerName, llmPageName, llmSessionUsageName, pageConfigMap,
  parseLedger, parseSessionUsage, sessionUsageConfigMap, tokensOf,
  type LlmUsageRecord, type Project, type Session,
} from '../../resources/index.js';
import { GatewayWriteConflict, type GatewayStore } from './store.js';

export interface RecorderOptions {
  store: GatewayStore;
  /** Archive pages older than this are deleted (default 90 days). */
  retentionDays?: number;
  /** At most this many records are kept per project, the ledger's included (default 50,000). */
  maxRecords?: number;
  now?: () => Date;
  log?: (message: string) => void;
  /** Pause before a failed write is tried again (default 1 s, doubled up to 30 s). */
  retryDelayMs?: number;
  /**
   * How long records gather before a write (default 200 ms): a busy replica then writes each
   * object a few times a second instead of once per request, and a request does not wait behind
   * the write of the one before it. Budgets count what this replica holds at once.
   */
  flushDelayMs?: number;
}

/** Records waiting to be written (queue) or being written (writing) to one object. */
interface Lane<Target> {
  target: Target;
  queue: LlmUsageRecord[];
  writing: LlmUsageRecord[];
  running: boolean;
  idle: Promise<void>;
}

const CONFLICT_ATTEMPTS = 20;
/** Records held per object while the cluster cannot be written: beyond, the oldest are dropped (and said so). */
const MAX_QUEUED = 20_000;
const sum = (records: readonly LlmUsageRecord[]) => records.reduce((n, r) => n + tokensOf(r), 0);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class UsageRecorder {
  private readonly projects = new Map<string, Lane<Project>>();
  private readonly sessions = new Map<string, Lane<Session>>();
  private readonly now: () => Date;
  private readonly log: (message: string) => void;

  constructor(private readonly options: RecorderOptions) {
    this.now = options.now ?? (() => new Date());
    this.log = options.log ?? ((m) => console.error(m));
  }

  /** Counts one relayed request for its project and (when it has one) its session. */
  record(project: Project, session: Session | undefined, record: LlmUsageRecord): void {
    this.enqueue(this.projects, project.metadata.uid!, project, record, (p, batch) => this.writeLedger(p, batch));
    if (session) this.enqueue(this.sessions, session.metadata.uid!, session, record, (s, batch) => this.writeSession(s, batch));
  }

  /** Tokens this replica counted for the project that are not known to be written yet. */
  pendingProjectTokens(projectUid: string): number {
    const lane = this.projects.get(projectUid);
    return lane ? sum(lane.queue) + sum(lane.writing) : 0;
  }

  pendingSessionTokens(sessionUid: string): number {
    const lane = this.sessions.get(sessionUid);
    return lane ? sum(lane.queue) + sum(lane.writing) : 0;
  }

  /** Resolves when everything recorded so far was written (or given up on): for a clean stop and for tests. */
  async flush(): Promise<void> {
    await Promise.all([...this.projects.values(), ...this.sessions.values()].map((lane) => lane.idle));
  }

  private enqueue<T>(lanes: Map<string, Lane<T>>, key: string, target: T, record: LlmUsageRecord, write: (target: T, batch: LlmUsageRecord[]) => Promise<void>): void {
    let lane = lanes.get(key);
    if (!lane) {
      lane = { target, queue: [], writing: [], running: false, idle: Promise.resolve() };
      lanes.set(key, lane);
    }
    lane.target = target;
    lane.queue.push(record);
    if (lane.queue.length > MAX_QUEUED) {
      const dropped = lane.queue.splice(0, lane.queue.length - MAX_QUEUED);
      this.log(`model gateway: ${dropped.length} usage records dropped: the cluster has not taken writes for a while`);
    }
    if (!lane.running) {
      lane.running = true;
      lane.idle = this.drain(lanes, key, lane, write);
    }
  }

  private async drain<T>(lanes: Map<string, Lane<T>>, key: string, lane: Lane<T>, write: (target: T, batch: LlmUsageRecord[]) => Promise<void>): Promise<void> {
    let delay = this.options.retryDelayMs ?? 1000;
    let failures = 0;
    const gather = this.options.flushDelayMs ?? 200;
    while (lane.queue.length > 0) {
      // gather more, unless a full write's worth is already waiting
      if (gather > 0 && lane.queue.length < PAGE_RECORDS) await sleep(gather);
      // at most a page per write: the archive page a write makes is then the same for every writer (llm-usage.ts)
      lane.writing = lane.queue.splice(0, PAGE_RECORDS);
      try {
        await write(lane.target, lane.writing);
        delay = this.options.retryDelayMs ?? 1000;
        failures = 0;
      } catch (error) {
        failures++;
        this.log(`model gateway: writing usage failed (attempt ${failures}): ${(error as Error).message}`);
        if (failures >= 10) {
          this.log(`model gateway: ${lane.writing.length} usage records given up after ${failures} attempts`);
          failures = 0;
        } else {
          lane.queue.unshift(...lane.writing);
        }
        lane.writing = [];
        await sleep(delay);
        delay = Math.min(delay * 2, 30_000);
      }
      lane.writing = [];
    }
    lane.running = false;
    lanes.delete(key);
  }

  private async writeLedger(project: Project, batch: LlmUsageRecord[]): Promise<void> {
    const { store } = this.options;
    const namespace = project.metadata.namespace!;
    for (let attempt = 0; attempt < CONFLICT_ATTEMPTS; attempt++) {
      const existing = await store.readConfigMap(namespace, llmLedgerName(project));
      const { ledger, pages, prune } = appendRecords(parseLedger(existing), batch, this.retention());
      // pages first: a ledger that names a page whose create failed would lose its records
      for (const page of pages) await store.createOnce(pageConfigMap(project, page));
      try {
        await store.writeConfigMap(ledgerConfigMap(project, existing, ledger));
        // state is bounded: pages the ledger no longer names go (a failed delete leaves an orphan the Project's deletion takes)
        for (const n of prune) await store.deleteConfigMap(namespace, llmPageName(project, n)).catch((error: Error) => this.log(`model gateway: pruning a usage page failed: ${error.message}`));
        return;
      } catch (error) {
        if (!(error instanceof GatewayWriteConflict)) throw error;
      }
    }
    throw new Error(`the usage ledger of ${project.metadata.name} changed concurrently ${CONFLICT_ATTEMPTS} times`);
  }

  private async writeSession(session: Session, batch: LlmUsageRecord[]): Promise<void> {
    const { store } = this.options;
    const name = llmSessionUsageName(session.metadata.name!);
    for (let attempt = 0; attempt < CONFLICT_ATTEMPTS; attempt++) {
      const existing = await store.readConfigMap(session.metadata.namespace!, name);
      let usage = parseSessionUsage(existing);
      for (const r of batch) usage = addTotals(usage, r);
      try {
        await store.writeConfigMap(sessionUsageConfigMap(session, existing, usage));
        return;
      } catch (error) {
        if (!(error instanceof GatewayWriteConflict)) throw error;
      }
    }
    throw new Error(`the usage of session ${session.metadata.name} changed concurrently ${CONFLICT_ATTEMPTS} times`);
  }

  /** Archive pages kept: within the retention, and at most maxRecords with the ledger's own (up to two pages' worth). */
  private retention() {
    return {
      now: this.now(),
      retentionDays: this.options.retentionDays ?? 90,
      maxPages: Math.max(1, Math.floor((this.options.maxRecords ?? 50_000) / PAGE_RECORDS) - 2),
    };
  }
}
