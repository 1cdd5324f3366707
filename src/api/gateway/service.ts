// The model gateway's REST side (DESIGN §8.2, docs/gateway.md): provider keys, usage, logs and the
// budget of a project. Keys go into the providers Secret and nowhere else: not into a response,
// an Event, a log line or another resource.
import {
  NO_BUDGET, llmLedgerName, llmPageName, llmProviderInfos, parseLedger, parseRows, periodTokens, summarizeRows, usageRows, ledgerConfigMap,
  withLlmProvider, withoutLlmProvider,
  type LlmBudget, type LlmProvider, type LlmProviderInfo, type LlmProvidersSecret, type LlmUsageRecord, type PageIndexEntry, type Project,
  type UsageGrouping, type UsageRow, type UsageSummary,
} from '../../resources/index.js';
import { Lru } from '../../lib/lru.js';
import { ApiError } from '../errors.js';
import type { UsageRecorder } from './recorder.js';
import type { BudgetHints } from './budget-hints.js';
import { GatewayWriteConflict, type GatewayStore } from './store.js';

export interface BudgetAnswer {
  budget: LlmBudget;
  used: { period_tokens: number };
}

const WRITE_ATTEMPTS = 10;
/** Archive pages held parsed, for the logs (a page is written once, so what is cached stays true). */
const PAGE_CACHE = 64;
/**
 * Archive pages held summed (usageRows), for the usage: a few rows each, so the pages of several
 * projects fit (one keeps up to 198). Held as records, the 64 pages of PAGE_CACHE were fewer than
 * one project's: every usage call read and parsed them all again.
 */
const PAGE_SUMMARIES = 2048;

interface PageSummary { rows: UsageRow[]; earliest: string }

export class GatewayService {
  private readonly pageCache = new Lru<LlmUsageRecord[]>(PAGE_CACHE);
  private readonly pageSummaries = new Lru<PageSummary>(PAGE_SUMMARIES);

  constructor(
    private readonly store: GatewayStore,
    private readonly recorder: UsageRecorder,
    private readonly budgetHints: BudgetHints,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async providers(project: Project): Promise<{ providers: LlmProviderInfo[] }> {
    return { providers: llmProviderInfos(await this.store.readProviders(project)) };
  }

  async setProvider(project: Project, provider: Omit<LlmProvider, 'updated_at'>): Promise<void> {
    await this.updateProviders(project, (current) => withLlmProvider(project, current, provider, this.now()));
    await this.event(project, 'GatewayProviderSet', `model gateway provider ${provider.name} set (${provider.protocol}, ${provider.base_url})`);
  }

  async removeProvider(project: Project, name: string): Promise<void> {
    const removed = await this.updateProviders(project, (current) => withoutLlmProvider(current, name));
    if (!removed) throw new ApiError(404, `project ${project.metadata.name} has no model gateway provider ${name} (svc gateway providers ls lists them)`);
    await this.event(project, 'GatewayProviderDeleted', `model gateway provider ${name} removed`);
  }

  async budget(project: Project): Promise<BudgetAnswer> {
    const ledger = parseLedger(await this.store.readConfigMap(project.metadata.namespace!, llmLedgerName(project)));
    return this.budgetAnswer(project, ledger.budget ?? NO_BUDGET, ledger.counters);
  }

  async setBudget(project: Project, budget: LlmBudget): Promise<BudgetAnswer> {
    const namespace = project.metadata.namespace!;
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const existing = await this.store.readConfigMap(namespace, llmLedgerName(project));
      const ledger = { ...parseLedger(existing), budget };
      try {
        await this.store.writeConfigMap(ledgerConfigMap(project, existing, ledger));
        this.budgetHints.touched(project.metadata.uid!);
        await this.event(project, 'GatewayBudgetSet', `model gateway budget: ${describeBudget(budget)}`);
        return this.budgetAnswer(project, budget, ledger.counters);
      } catch (error) {
        if (!(error instanceof GatewayWriteConflict)) throw error;
      }
    }
    throw new ApiError(409, 'the usage ledger changed concurrently too often: try again');
  }

  private budgetAnswer(project: Project, budget: LlmBudget, counters: ReturnType<typeof parseLedger>['counters']): BudgetAnswer {
    const used = periodTokens(counters, budget.period, this.now()) + this.recorder.pendingProjectTokens(project.metadata.uid!);
    return { budget, used: { period_tokens: used } };
  }

  /** The ledger's records and the index of the archive pages kept (oldest first). */
  private async ledgerRecords(project: Project): Promise<{ recent: LlmUsageRecord[]; pages: PageIndexEntry[] }> {
    const ledger = parseLedger(await this.store.readConfigMap(project.metadata.namespace!, llmLedgerName(project)));
    return { recent: ledger.recent, pages: ledger.pages };
  }

  /** One archive page's records ([] when it was pruned meanwhile), read from the cluster. */
  private async readPage(project: Project, page: PageIndexEntry): Promise<LlmUsageRecord[]> {
    const cm = await this.store.readConfigMap(project.metadata.namespace!, llmPageName(project, page.number));
    return cm ? parseRows(cm.data?.records) : [];
  }

  /** One archive page's records, held for the next reads (the logs). */
  private async pageRecords(project: Project, page: PageIndexEntry): Promise<LlmUsageRecord[]> {
    const key = `${project.metadata.uid}/${page.number}`;
    const cached = this.pageCache.get(key);
    if (cached) return cached;
    const records = await this.readPage(project, page);
    if (records.length) this.pageCache.set(key, records);
    return records;
  }

  /** One archive page's records summed (usageRows), and the time of its earliest record. */
  private async pageSummary(project: Project, page: PageIndexEntry): Promise<PageSummary> {
    const key = `${project.metadata.uid}/${page.number}`;
    const cached = this.pageSummaries.get(key);
    if (cached) return cached;
    // summed, not held as records: a usage call over all pages would push the logs' pages out
    const records = this.pageCache.get(key) ?? await this.readPage(project, page);
    const summary = { rows: usageRows(records), earliest: records.reduce((min, r) => (r.at < min ? r.at : min), records[0]?.at ?? '') };
    this.pageSummaries.set(key, summary);
    return summary;
  }

  /** Summed from the records kept; pages wholly before `since` are not read, one wholly after it is summed once. */
  async usage(project: Project, by: UsageGrouping, since?: Date): Promise<UsageSummary> {
    const { recent, pages } = await this.ledgerRecords(project);
    const sinceIso = since?.toISOString();
    const wanted = pages.filter((p) => !sinceIso || p.to === '' || p.to >= sinceIso);
    const archived = await Promise.all(wanted.map(async (p) => {
      const summary = await this.pageSummary(project, p);
      return !sinceIso || summary.earliest >= sinceIso ? summary.rows : usageRows(await this.pageRecords(project, p), sinceIso);
    }));
    return summarizeRows([...archived.flat(), ...usageRows(recent, sinceIso)], by);
  }

  /** Newest first, at most `limit`, only `sessionId`'s when given. Never prompt or completion text (records hold none). */
  async logs(project: Project, limit: number, sessionId?: string): Promise<{ entries: LlmUsageRecord[] }> {
    const { recent, pages } = await this.ledgerRecords(project);
    const entries: LlmUsageRecord[] = [];
    const take = (records: LlmUsageRecord[]) => {
      for (let i = records.length - 1; i >= 0 && entries.length < limit; i--) {
        if (!sessionId || records[i]!.session_id === sessionId) entries.push(records[i]!);
      }
    };
    take(recent);
    for (let i = pages.length - 1; i >= 0 && entries.length < limit; i--) {
      // a page without the session's records is passed over by its summary, not read again
      if (sessionId && !(await this.pageSummary(project, pages[i]!)).rows.some((r) => r.session_id === sessionId)) continue;
      take(await this.pageRecords(project, pages[i]!));
    }
    return { entries };
  }

  private async updateProviders(project: Project, change: (current: LlmProvidersSecret | undefined) => LlmProvidersSecret | null): Promise<boolean> {
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const next = change(await this.store.readProviders(project));
      if (!next) return false;
      try {
        await this.store.writeProviders(next);
        return true;
      } catch (error) {
        if (!(error instanceof GatewayWriteConflict)) throw error;
      }
    }
    throw new ApiError(409, 'the model gateway providers changed concurrently too often: try again');
  }

  private async event(project: Project, reason: string, message: string): Promise<void> {
    // best-effort: the change is written; a lost Event must not fail the request
    await this.store.recordEvent(project, { type: 'Normal', reason, message }).catch(() => undefined);
  }
}

export function describeBudget(budget: LlmBudget): string {
  const project = budget.max_tokens === null ? 'no project limit' : `${budget.max_tokens} tokens per ${budget.period === 'total' ? 'project (all time)' : budget.period}`;
  const session = budget.max_tokens_per_session === null ? 'no session limit' : `${budget.max_tokens_per_session} tokens per session`;
  return `${project}, ${session}`;
}
