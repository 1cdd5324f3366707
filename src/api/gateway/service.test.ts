// GatewayService.usage against an in-memory store of a ledger and its archive pages: the same
// answer as summing every record, and a page read once however often the usage is asked.
import { describe, expect, it } from 'vitest';
import {
  USAGE_GROUPINGS, appendRecords, emptyLedger, ledgerConfigMap, pageConfigMap, summarizeUsage,
  type ConfigMapObject, type LlmUsageRecord, type Project,
} from '../../resources/index.js';
import { BudgetHints } from './budget-hints.js';
import { GatewayService } from './service.js';
import type { GatewayStore } from './store.js';
import type { UsageRecorder } from './recorder.js';

const project: Project = {
  apiVersion: 'svc.dev/v1alpha1', kind: 'Project',
  metadata: { name: 'web', namespace: 'default', uid: 'e1f2a3b4-0000-4000-8000-000000000001' },
  spec: { repoUrl: 'https://example.com/r.git', defaultBranch: 'main' } as Project['spec'],
};

const SESSIONS = ['0b6c3f52-8d1e-4c55-9b1a-2f0e6f1c9a10', '1b6c3f52-8d1e-4c55-9b1a-2f0e6f1c9a10', null];

/** `count` records a minute apart from 2026-03-01, in order except every 97th, written a minute early. */
function records(count: number): LlmUsageRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    at: new Date(Date.UTC(2026, 2, 1) + (i - (i % 97 === 96 ? 1.5 : 0)) * 60_000).toISOString(),
    session_id: SESSIONS[i % 3]!, trigger: i % 5 === 0 ? 'nightly' : null, provider: 'openai', model: i % 2 ? 'm1' : 'm2',
    status: 200, input_tokens: i % 13, output_tokens: i % 7, duration_ms: 5,
  }));
}

function storeOf(all: LlmUsageRecord[]) {
  const objects = new Map<string, ConfigMapObject>();
  let ledger = emptyLedger();
  for (let i = 0; i < all.length; i += 100) {
    const appended = appendRecords(ledger, all.slice(i, i + 100));
    ledger = appended.ledger;
    for (const page of appended.pages) {
      const cm = pageConfigMap(project, page);
      objects.set(cm.metadata.name!, cm);
    }
  }
  const cm = ledgerConfigMap(project, undefined, ledger);
  objects.set(cm.metadata.name!, cm);
  const reads: string[] = [];
  const store = {
    async readConfigMap(_namespace: string, name: string) {
      reads.push(name);
      return objects.get(name);
    },
  } as unknown as GatewayStore;
  return { store, reads, pages: ledger.pages.length };
}

describe('GatewayService.usage', () => {
  const all = records(20_000); // 78 pages: more than the 64 pages held as records
  const { store, reads, pages } = storeOf(all);
  const service = new GatewayService(store, { pendingProjectTokens: () => 0 } as unknown as UsageRecorder, new BudgetHints());

  it('answers what summing every record answers, for each grouping, with and without since', async () => {
    expect(pages).toBeGreaterThan(64);
    // a since inside a page, one at a page's first record, and one after every record
    for (const since of [undefined, new Date(all[1234]!.at), new Date(all[2500]!.at), new Date(Date.UTC(2030, 0, 1))]) {
      for (const by of USAGE_GROUPINGS) {
        expect(await service.usage(project, by, since), `${by} ${since?.toISOString()}`).toEqual(summarizeUsage(all, by, since));
      }
    }
  });

  it('reads and sums each archive page once: asked again, it reads the ledger only', async () => {
    await service.usage(project, 'session');
    reads.length = 0;
    for (const by of USAGE_GROUPINGS) await service.usage(project, by);
    expect(reads).toEqual(Array(USAGE_GROUPINGS.length).fill('web-llm-usage'));
  });
});

describe('GatewayService.logs', () => {
  const all = records(20_000);
  // one session's few records, in the oldest page and the newest
  const rare = '2b6c3f52-8d1e-4c55-9b1a-2f0e6f1c9a10';
  for (const i of [3, 19_990]) all[i] = { ...all[i]!, session_id: rare };
  const { store, reads } = storeOf(all);
  const service = new GatewayService(store, { pendingProjectTokens: () => 0 } as unknown as UsageRecorder, new BudgetHints());

  it('answers a session\'s records newest first, and asked again reads only the pages that hold them', async () => {
    const expected = [all[19_990], all[3]];
    expect((await service.logs(project, 50, rare)).entries).toEqual(expected);
    reads.length = 0;
    expect((await service.logs(project, 50, rare)).entries).toEqual(expected);
    // the ledger, and at most the one archive page that holds them (the oldest; the newest record is in the ledger)
    expect(reads[0]).toBe('web-llm-usage');
    expect(reads.slice(1).filter((name) => name !== 'web-llm-usage-0')).toEqual([]);
    expect((await service.logs(project, 3)).entries).toEqual(all.slice(-3).reverse());
  });
});
