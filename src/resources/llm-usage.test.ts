import { describe, expect, it } from 'vitest';
import {
  PAGE_RECORDS, RECENT_MAX, appendRecords, emptyLedger, ledgerConfigMap, pageConfigMap, pagesToPrune, parseBudget,
  parseLedger, periodTokens, summarizeUsage, type LlmUsageRecord,
} from './llm-usage.js';
import type { Project } from './project.js';

const project: Project = {
  apiVersion: 'svc.dev/v1alpha1', kind: 'Project',
  metadata: { name: 'web', namespace: 'default', uid: 'e1f2a3b4-0000-4000-8000-000000000001' },
  spec: { repoUrl: 'https://example.com/r.git', defaultBranch: 'main' } as Project['spec'],
};

const S1 = '0b6c3f52-8d1e-4c55-9b1a-2f0e6f1c9a10';
const S2 = '1b6c3f52-8d1e-4c55-9b1a-2f0e6f1c9a10';

function rec(at: string, over: Partial<LlmUsageRecord> = {}): LlmUsageRecord {
  return { at, session_id: S1, trigger: null, provider: 'openai', model: 'm1', status: 200, input_tokens: 10, output_tokens: 5, duration_ms: 12, ...over };
}

describe('budget', () => {
  it('accepts the pinned shape and refuses anything else', () => {
    expect(parseBudget({ period: 'day', max_tokens: 100, max_tokens_per_session: null })).toEqual({ budget: { period: 'day', max_tokens: 100, max_tokens_per_session: null } });
    expect(parseBudget({ period: 'total' })).toEqual({ budget: { period: 'total', max_tokens: null, max_tokens_per_session: null } });
    expect(parseBudget({ period: 'week', max_tokens: 1 })).toEqual({ problem: expect.stringMatching(/period/) });
    expect(parseBudget({ period: 'day', max_tokens: -1 })).toEqual({ problem: expect.stringMatching(/max_tokens/) });
    expect(parseBudget({ period: 'day', max_tokens: 1.5 })).toEqual({ problem: expect.stringMatching(/whole number/) });
    expect(parseBudget({ period: 'day', max_tokens_per_session: '5' })).toEqual({ problem: expect.stringMatching(/max_tokens_per_session/) });
    expect(parseBudget({ period: 'day', extra: 1 })).toEqual({ problem: expect.stringMatching(/unknown/) });
    expect(parseBudget([])).toEqual({ problem: expect.stringMatching(/JSON object/) });
  });
});

describe('ledger', () => {
  it('counts totals, the UTC day and month, and rolls periods over', () => {
    let { ledger } = appendRecords(emptyLedger(), [rec('2026-03-31T23:59:00.000Z'), rec('2026-03-31T23:59:30.000Z', { input_tokens: 1, output_tokens: 1 })]);
    expect(ledger.counters.total).toEqual({ requests: 2, input_tokens: 11, output_tokens: 6 });
    expect(periodTokens(ledger.counters, 'day', new Date('2026-03-31T23:59:59Z'))).toBe(17);
    expect(periodTokens(ledger.counters, 'month', new Date('2026-03-31T23:59:59Z'))).toBe(17);
    expect(periodTokens(ledger.counters, 'day', new Date('2026-04-01T00:00:01Z'))).toBe(0);
    expect(periodTokens(ledger.counters, 'month', new Date('2026-04-01T00:00:01Z'))).toBe(0);
    expect(periodTokens(ledger.counters, 'total', new Date('2027-01-01T00:00:00Z'))).toBe(17);
    ({ ledger } = appendRecords(ledger, [rec('2026-04-01T00:00:05.000Z')]));
    expect(ledger.counters.day).toEqual({ key: '2026-04-01', tokens: 15 });
    expect(ledger.counters.month).toEqual({ key: '2026-04', tokens: 15 });
    // a late record of the day before changes the totals, not the new day
    ({ ledger } = appendRecords(ledger, [rec('2026-03-31T23:59:59.000Z')]));
    expect(ledger.counters.day.tokens).toBe(15);
    expect(ledger.counters.total.requests).toBe(4);
  });

  it('round-trips through its ConfigMap, owned by the project', () => {
    const { ledger } = appendRecords({ ...emptyLedger(), budget: { period: 'day', max_tokens: 5, max_tokens_per_session: null } }, [rec('2026-03-01T00:00:00.000Z', { trigger: 'nightly' })]);
    const cm = ledgerConfigMap(project, undefined, ledger);
    expect(cm.metadata).toMatchObject({ name: 'web-llm-usage', namespace: 'default', labels: { 'svc.dev/project': 'web', 'svc.dev/llm-usage': 'ledger' } });
    expect(cm.metadata.ownerReferences?.[0]?.uid).toBe(project.metadata.uid);
    expect(parseLedger(cm)).toEqual(ledger);
    expect(parseLedger(undefined)).toEqual(emptyLedger());
    expect(parseLedger({ metadata: {}, data: { counters: '{', recent: 'x' } })).toEqual(emptyLedger());
  });

  it('archives the oldest page when recent outgrows its bound; the page is the same for every writer', () => {
    const many = Array.from({ length: RECENT_MAX + 3 }, (_, i) => rec(new Date(Date.UTC(2026, 2, 1, 0, 0, i)).toISOString()));
    const first = appendRecords(emptyLedger(), many);
    expect(first.pages).toHaveLength(1);
    expect(first.pages[0]!.number).toBe(0);
    expect(first.pages[0]!.records).toEqual(many.slice(0, PAGE_RECORDS));
    expect(first.ledger.recent).toEqual(many.slice(PAGE_RECORDS));
    expect(first.ledger.nextPage).toBe(1);
    const page = pageConfigMap(project, first.pages[0]!);
    expect(page.metadata.name).toBe('web-llm-usage-0');
    expect(page.metadata.annotations).toEqual({ 'svc.dev/llm-usage-page': '0', 'svc.dev/llm-usage-from': many[0]!.at, 'svc.dev/llm-usage-to': many[PAGE_RECORDS - 1]!.at });
    expect(first.ledger.pages).toEqual([{ number: 0, from: many[0]!.at, to: many[PAGE_RECORDS - 1]!.at }]);
    expect(parseLedger(ledgerConfigMap(project, undefined, first.ledger)).pages).toEqual(first.ledger.pages);
    // past the retention, pages leave the index and are named for deletion
    const later = appendRecords(first.ledger, [], { now: new Date('2026-09-01T00:00:00Z'), retentionDays: 30, maxPages: 10 });
    expect(later.prune).toEqual([0]);
    expect(later.ledger.pages).toEqual([]);
  });

  it('prunes pages past the retention and beyond the count, oldest first', () => {
    const pages = [0, 1, 2, 3].map((n) => ({ name: `p${n}`, number: n, from: '', to: `2026-0${n + 1}-15T00:00:00.000Z` }));
    const now = new Date('2026-04-20T00:00:00Z');
    expect(pagesToPrune(pages, now, 40, 10).map((p) => p.name)).toEqual(['p1', 'p0']);
    expect(pagesToPrune(pages, now, 400, 3).map((p) => p.name)).toEqual(['p0']);
  });
});

describe('usage summary', () => {
  const records = [
    rec('2026-03-01T10:00:00.000Z', { session_id: S1, trigger: 'nightly', model: 'm1', input_tokens: 10, output_tokens: 5 }),
    rec('2026-03-01T11:00:00.000Z', { session_id: S2, trigger: null, model: 'm2', input_tokens: 100, output_tokens: 50 }),
    rec('2026-03-02T09:00:00.000Z', { session_id: S1, trigger: 'nightly', model: 'm1', input_tokens: 1, output_tokens: 1 }),
  ];

  it('groups by session, trigger, model and day', () => {
    expect(summarizeUsage(records, 'session')).toEqual({
      total: { requests: 3, input_tokens: 111, output_tokens: 56 },
      groups: [{ key: S2, requests: 1, input_tokens: 100, output_tokens: 50 }, { key: S1, requests: 2, input_tokens: 11, output_tokens: 6 }],
    });
    expect(summarizeUsage(records, 'trigger').groups.map((g) => g.key)).toEqual([null, 'nightly']);
    expect(summarizeUsage(records, 'model').groups.map((g) => [g.key, g.requests])).toEqual([['m2', 1], ['m1', 2]]);
    expect(summarizeUsage(records, 'day').groups.map((g) => [g.key, g.requests])).toEqual([['2026-03-01', 2], ['2026-03-02', 1]]);
  });

  it('counts only records at or after since', () => {
    const since = summarizeUsage(records, 'day', new Date('2026-03-01T11:00:00Z'));
    expect(since.total).toEqual({ requests: 2, input_tokens: 101, output_tokens: 51 });
    expect(summarizeUsage(records, 'day', new Date('2030-01-01T00:00:00Z'))).toEqual({ total: { requests: 0, input_tokens: 0, output_tokens: 0 }, groups: [] });
  });
});
