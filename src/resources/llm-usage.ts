// What the model gateway counts (DESIGN §8.2, docs/gateway.md "Where the counters live"). Pure:
// the API's recorder writes these ConfigMaps with resourceVersion preconditions; the usage, logs
// and budget routes and the budget check read them.
//   ledger   ConfigMap `<project>-llm-usage` (owned by the Project, label svc.dev/llm-usage=ledger):
//            `budget` (JSON LlmBudget, absent: none), `counters` (all-time totals and the current
//            UTC day's and month's tokens), `recent` (the newest records, oldest first, as rows),
//            `next_page` (the number of the next archive page), `pages` (the index of the archive
//            pages kept: number, first and last record's time)
//   page     ConfigMap `<project>-llm-usage-<n>` (owned by the Project, label svc.dev/llm-usage=page):
//            `records` (rows), annotations with the first and last record's time. Written once.
//   session  ConfigMap `svc-llm-usage-<session id>` (owned by the Session, label svc.dev/llm-usage=session):
//            `usage` (JSON totals of that session): what its budget is checked against.
// A record never holds prompt or completion text.
import { LABEL_PROJECT, LABEL_SESSION } from './constants.js';
import { controllerReference, type KubeObject } from './meta.js';
import type { Project } from './project.js';
import type { Session } from './session.js';

export interface LlmUsageRecord {
  /** RFC 3339, when the request reached the gateway */
  at: string;
  session_id: string | null;
  /** the slug of the trigger that started the session, or null */
  trigger: string | null;
  provider: string;
  /** the model the request named, or null (e.g. GET models) */
  model: string | null;
  /** the upstream's HTTP status (502 when it could not be reached) */
  status: number;
  input_tokens: number;
  output_tokens: number;
  duration_ms: number;
}

export interface UsageTotals { requests: number; input_tokens: number; output_tokens: number }

export const BUDGET_PERIODS = ['day', 'month', 'total'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

export interface LlmBudget {
  period: BudgetPeriod;
  max_tokens: number | null;
  max_tokens_per_session: number | null;
}

/** No budget set: nothing is limited; the period shown is the month. */
export const NO_BUDGET: LlmBudget = { period: 'month', max_tokens: null, max_tokens_per_session: null };

export interface LedgerCounters {
  total: UsageTotals;
  /** tokens (input + output) of the UTC day `key` (YYYY-MM-DD) */
  day: { key: string; tokens: number };
  /** tokens of the UTC month `key` (YYYY-MM) */
  month: { key: string; tokens: number };
}

/** An archive page as the ledger's index lists it. */
export interface PageIndexEntry { number: number; from: string; to: string }

export interface Ledger {
  budget: LlmBudget | null;
  counters: LedgerCounters;
  /** newest last */
  recent: LlmUsageRecord[];
  nextPage: number;
  /** the archive pages kept, oldest first: readers need no list of ConfigMaps */
  pages: PageIndexEntry[];
}

export interface ConfigMapObject extends KubeObject {
  data?: Record<string, string>;
}

export const LABEL_LLM_USAGE = 'svc.dev/llm-usage';
export const PAGE_FROM_ANNOTATION = 'svc.dev/llm-usage-from';
export const PAGE_TO_ANNOTATION = 'svc.dev/llm-usage-to';
export const PAGE_NUMBER_ANNOTATION = 'svc.dev/llm-usage-page';
/** Records per archive page; the ledger keeps between one and two pages' worth (≈ 30-60 KB). */
export const PAGE_RECORDS = 250;
export const RECENT_MAX = 2 * PAGE_RECORDS;

export const tokensOf = (t: { input_tokens: number; output_tokens: number }) => t.input_tokens + t.output_tokens;
const zeroTotals = (): UsageTotals => ({ requests: 0, input_tokens: 0, output_tokens: 0 });

export const dayKey = (at: Date | string) => new Date(at).toISOString().slice(0, 10);
export const monthKey = (at: Date | string) => new Date(at).toISOString().slice(0, 7);

export function llmLedgerName(project: Pick<Project, 'metadata'>): string {
  return `${project.metadata.name}-llm-usage`;
}

export function llmPageName(project: Pick<Project, 'metadata'>, page: number): string {
  return `${project.metadata.name}-llm-usage-${page}`;
}

export function llmSessionUsageName(sessionId: string): string {
  return `svc-llm-usage-${sessionId}`;
}

// Rows: the record's fields in a fixed order (half the bytes of objects).
type Row = [string, string | null, string | null, string, string | null, number, number, number, number];

export function recordToRow(r: LlmUsageRecord): Row {
  return [r.at, r.session_id, r.trigger, r.provider, r.model, r.status, r.input_tokens, r.output_tokens, r.duration_ms];
}

const str = (v: unknown) => (typeof v === 'string' ? v : null);
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);

export function rowToRecord(row: unknown): LlmUsageRecord | null {
  if (!Array.isArray(row) || typeof row[0] !== 'string' || typeof row[3] !== 'string') return null;
  return {
    at: row[0], session_id: str(row[1]), trigger: str(row[2]), provider: row[3], model: str(row[4]),
    status: num(row[5]), input_tokens: num(row[6]), output_tokens: num(row[7]), duration_ms: num(row[8]),
  };
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function parseRows(text: string | undefined): LlmUsageRecord[] {
  const rows = parseJson(text);
  return Array.isArray(rows) ? rows.map(rowToRecord).filter((r): r is LlmUsageRecord => r !== null) : [];
}

function parseTotals(value: unknown): UsageTotals {
  const v = (value ?? {}) as Record<string, unknown>;
  return { requests: num(v.requests), input_tokens: num(v.input_tokens), output_tokens: num(v.output_tokens) };
}

function parsePeriodCount(value: unknown): { key: string; tokens: number } {
  const v = (value ?? {}) as Record<string, unknown>;
  return { key: typeof v.key === 'string' ? v.key : '', tokens: num(v.tokens) };
}

/** A budget from stored or requested JSON, or a problem. Unknown fields are refused. */
export function parseBudget(value: unknown): { budget: LlmBudget } | { problem: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { problem: 'the budget must be a JSON object { "period": "day"|"month"|"total", "max_tokens": int|null, "max_tokens_per_session": int|null }' };
  }
  const v = value as Record<string, unknown>;
  const unknown = Object.keys(v).filter((k) => !['period', 'max_tokens', 'max_tokens_per_session'].includes(k));
  if (unknown.length > 0) return { problem: `unknown budget field(s): ${unknown.join(', ')}` };
  if (!(BUDGET_PERIODS as readonly unknown[]).includes(v.period)) return { problem: 'period must be "day", "month" or "total"' };
  const limit = (name: string): number | null | string => {
    const x = v[name];
    if (x === undefined || x === null) return null;
    return typeof x === 'number' && Number.isSafeInteger(x) && x >= 0 ? x : `${name} must be a whole number of tokens (0 or more) or null`;
  };
  const maxTokens = limit('max_tokens');
  const perSession = limit('max_tokens_per_session');
  if (typeof maxTokens === 'string') return { problem: maxTokens };
  if (typeof perSession === 'string') return { problem: perSession };
  return { budget: { period: v.period as BudgetPeriod, max_tokens: maxTokens, max_tokens_per_session: perSession } };
}

export function emptyLedger(): Ledger {
  return { budget: null, counters: { total: zeroTotals(), day: { key: '', tokens: 0 }, month: { key: '', tokens: 0 } }, recent: [], nextPage: 0, pages: [] };
}

/** The budget a ledger holds, or null (reads only that key: the data path asks on every request). */
export function ledgerBudget(cm: ConfigMapObject | undefined): LlmBudget | null {
  const budget = parseBudget(parseJson(cm?.data?.budget));
  return 'budget' in budget ? budget.budget : null;
}

/** The counters a ledger holds (reads only that key). */
export function ledgerCounters(cm: ConfigMapObject | undefined): LedgerCounters {
  const counters = (parseJson(cm?.data?.counters) ?? {}) as Record<string, unknown>;
  return { total: parseTotals(counters.total), day: parsePeriodCount(counters.day), month: parsePeriodCount(counters.month) };
}

function parsePageIndex(text: string | undefined): PageIndexEntry[] {
  const list = parseJson(text);
  if (!Array.isArray(list)) return [];
  return list
    .map((e) => e as Partial<PageIndexEntry> | null)
    .filter((e): e is PageIndexEntry => !!e && Number.isSafeInteger(e.number) && typeof e.from === 'string' && typeof e.to === 'string')
    .sort((a, b) => a.number - b.number);
}

export function parseLedger(cm: ConfigMapObject | undefined): Ledger {
  if (!cm) return emptyLedger();
  const next = Number(cm.data?.next_page);
  return {
    budget: ledgerBudget(cm),
    counters: ledgerCounters(cm),
    recent: parseRows(cm.data?.recent),
    nextPage: Number.isSafeInteger(next) && next >= 0 ? next : 0,
    pages: parsePageIndex(cm.data?.pages),
  };
}

/** The tokens of `period` at `now` (a period whose key is past counts 0). */
export function periodTokens(counters: LedgerCounters, period: BudgetPeriod, now: Date): number {
  if (period === 'total') return tokensOf(counters.total);
  if (period === 'day') return counters.day.key === dayKey(now) ? counters.day.tokens : 0;
  return counters.month.key === monthKey(now) ? counters.month.tokens : 0;
}

function addToPeriod(count: { key: string; tokens: number }, key: string, tokens: number): { key: string; tokens: number } {
  if (key > count.key) return { key, tokens };
  if (key === count.key) return { key, tokens: count.tokens + tokens };
  return count; // a late record of a past period
}

export function addToCounters(counters: LedgerCounters, record: LlmUsageRecord): LedgerCounters {
  const tokens = tokensOf(record);
  return {
    total: addTotals(counters.total, record),
    day: addToPeriod(counters.day, dayKey(record.at), tokens),
    month: addToPeriod(counters.month, monthKey(record.at), tokens),
  };
}

export function addTotals(totals: UsageTotals, record: { input_tokens: number; output_tokens: number }, requests = 1): UsageTotals {
  return { requests: totals.requests + requests, input_tokens: totals.input_tokens + record.input_tokens, output_tokens: totals.output_tokens + record.output_tokens };
}

export interface ArchivePage { number: number; records: LlmUsageRecord[] }

/** How long archive pages are kept: the newest `maxPages`, none whose last record is older than `retentionDays`. */
export interface Retention { now: Date; retentionDays: number; maxPages: number }

/**
 * The ledger with `records` counted and appended; when `recent` outgrows RECENT_MAX its oldest
 * PAGE_RECORDS go to archive pages. The pages are determined by the ledger alone (the oldest rows
 * at a given `nextPage`), so two writers racing on the same ledger write the same page. Pages past
 * the retention leave the index (`prune`: to be deleted once the ledger no longer names them).
 */
export function appendRecords(ledger: Ledger, records: readonly LlmUsageRecord[], retention?: Retention): { ledger: Ledger; pages: ArchivePage[]; prune: number[] } {
  let counters = ledger.counters;
  for (const r of records) counters = addToCounters(counters, r);
  let recent = [...ledger.recent, ...records];
  let nextPage = ledger.nextPage;
  const pages: ArchivePage[] = [];
  while (recent.length > RECENT_MAX) {
    pages.push({ number: nextPage++, records: recent.slice(0, PAGE_RECORDS) });
    recent = recent.slice(PAGE_RECORDS);
  }
  let index = [...ledger.pages, ...pages.map((p) => ({ number: p.number, from: p.records[0]?.at ?? '', to: p.records[p.records.length - 1]?.at ?? '' }))];
  const prune = retention ? pagesToPrune(index, retention.now, retention.retentionDays, retention.maxPages).map((p) => p.number) : [];
  index = index.filter((p) => !prune.includes(p.number));
  return { ledger: { ...ledger, counters, recent, nextPage, pages: index }, pages, prune };
}

function owned(owner: { apiVersion?: string; kind?: string; metadata: KubeObject['metadata'] }, name: string, labels: Record<string, string>): ConfigMapObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: owner.metadata.namespace, labels, ownerReferences: [controllerReference(owner)] },
    data: {},
  };
}

/** The ledger ConfigMap holding `ledger`: `existing` changed (its resourceVersion the precondition), or a new one. */
export function ledgerConfigMap(project: Project, existing: ConfigMapObject | undefined, ledger: Ledger): ConfigMapObject {
  const base = existing ?? owned(project, llmLedgerName(project), { [LABEL_PROJECT]: project.metadata.name!, [LABEL_LLM_USAGE]: 'ledger' });
  const data: Record<string, string> = {
    counters: JSON.stringify(ledger.counters),
    recent: JSON.stringify(ledger.recent.map(recordToRow)),
    next_page: String(ledger.nextPage),
    pages: JSON.stringify(ledger.pages),
  };
  if (ledger.budget) data.budget = JSON.stringify(ledger.budget);
  return { ...base, data };
}

export function pageConfigMap(project: Project, page: ArchivePage): ConfigMapObject {
  const cm = owned(project, llmPageName(project, page.number), { [LABEL_PROJECT]: project.metadata.name!, [LABEL_LLM_USAGE]: 'page' });
  cm.metadata.annotations = {
    [PAGE_NUMBER_ANNOTATION]: String(page.number),
    [PAGE_FROM_ANNOTATION]: page.records[0]?.at ?? '',
    [PAGE_TO_ANNOTATION]: page.records[page.records.length - 1]?.at ?? '',
  };
  cm.data = { records: JSON.stringify(page.records.map(recordToRow)) };
  return cm;
}

/** Pages to delete: those whose last record is older than the retention, and the oldest beyond `maxPages`. */
export function pagesToPrune<P extends PageIndexEntry>(pages: readonly P[], now: Date, retentionDays: number, maxPages: number): P[] {
  const cutoff = new Date(now.getTime() - retentionDays * 86_400_000).toISOString();
  const newestFirst = [...pages].sort((a, b) => b.number - a.number);
  return newestFirst.filter((p, i) => i >= maxPages || (p.to !== '' && p.to < cutoff));
}

export function parseSessionUsage(cm: ConfigMapObject | undefined): UsageTotals {
  return parseTotals(parseJson(cm?.data?.usage));
}

export function sessionUsageConfigMap(session: Session, existing: ConfigMapObject | undefined, usage: UsageTotals): ConfigMapObject {
  const base = existing ?? owned(session, llmSessionUsageName(session.metadata.name!), {
    [LABEL_SESSION]: session.metadata.name!, [LABEL_PROJECT]: session.spec.projectRef.name, [LABEL_LLM_USAGE]: 'session',
  });
  return { ...base, data: { usage: JSON.stringify(usage) } };
}

export const USAGE_GROUPINGS = ['session', 'trigger', 'model', 'day'] as const;
export type UsageGrouping = (typeof USAGE_GROUPINGS)[number];

export interface UsageGroup extends UsageTotals { key: string | null }
export interface UsageSummary { total: UsageTotals; groups: UsageGroup[] }

/**
 * Usage summed by session, trigger, model and day: all summarizeUsage needs of a set of records,
 * in a fraction of their size (an archive page of 250 records is a few rows).
 */
export interface UsageRow extends UsageTotals { session_id: string | null; trigger: string | null; model: string | null; day: string }

/** The rows of `records` at or after `sinceIso`. */
export function usageRows(records: Iterable<LlmUsageRecord>, sinceIso?: string): UsageRow[] {
  const rows = new Map<string, UsageRow>();
  for (const r of records) {
    if (sinceIso && r.at < sinceIso) continue;
    const day = dayKey(r.at);
    const key = JSON.stringify([r.session_id, r.trigger, r.model, day]);
    const row = rows.get(key) ?? { session_id: r.session_id, trigger: r.trigger, model: r.model, day, ...zeroTotals() };
    rows.set(key, { ...row, ...addTotals(row, r) });
  }
  return [...rows.values()];
}

function groupKey(row: UsageRow, by: UsageGrouping): string | null {
  switch (by) {
    case 'session': return row.session_id;
    case 'trigger': return row.trigger;
    case 'model': return row.model;
    case 'day': return row.day;
  }
}

/** GET /gateway/usage from rows: totals and groups (days in order; others by tokens, most first). */
export function summarizeRows(rows: Iterable<UsageRow>, by: UsageGrouping): UsageSummary {
  let total = zeroTotals();
  const groups = new Map<string | null, UsageGroup>();
  for (const row of rows) {
    total = addTotals(total, row, row.requests);
    const key = groupKey(row, by);
    const g = groups.get(key) ?? { key, ...zeroTotals() };
    groups.set(key, { key, ...addTotals(g, row, row.requests) });
  }
  const list = [...groups.values()];
  if (by === 'day') list.sort((a, b) => String(a.key).localeCompare(String(b.key)));
  else list.sort((a, b) => tokensOf(b) - tokensOf(a) || String(a.key).localeCompare(String(b.key)));
  return { total, groups: list };
}

/** GET /gateway/usage: totals and groups of the records at or after `since`. */
export function summarizeUsage(records: Iterable<LlmUsageRecord>, by: UsageGrouping, since?: Date): UsageSummary {
  return summarizeRows(usageRows(records, since?.toISOString()), by);
}
