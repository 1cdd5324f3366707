// The usage recorder against an in-memory store with Kubernetes' write rules (create refuses an
// existing name, replace needs the current resourceVersion): two recorders play two API replicas.
import { describe, expect, it } from 'vitest';
import {
  PAGE_RECORDS, RECENT_MAX, ledgerCounters, llmLedgerName, parseLedger, parseRows, parseSessionUsage,
  type ConfigMapObject, type LlmUsageRecord, type Project, type Session,
} from '../../resources/index.js';
import { UsageRecorder } from './recorder.js';
import { GatewayWriteConflict, type GatewayStore } from './store.js';

const project: Project = {
  apiVersion: 'svc.dev/v1alpha1', kind: 'Project',
  metadata: { name: 'web', namespace: 'default', uid: 'e1f2a3b4-0000-4000-8000-000000000001' },
  spec: { repoUrl: 'https://example.com/r.git', defaultBranch: 'main' } as Project['spec'],
};
const session: Session = {
  apiVersion: 'svc.dev/v1alpha1', kind: 'Session',
  metadata: { name: '0b6c3f52-8d1e-4c55-9b1a-2f0e6f1c9a10', namespace: 'default', uid: 'aaaaaaaa-0000-4000-8000-000000000001' },
  spec: { projectRef: { name: 'web' }, agent: 'coder', baseRef: 'main', desiredState: 'running' },
};

function memoryStore(options: { conflictEvery?: number } = {}) {
  const objects = new Map<string, ConfigMapObject>();
  let version = 0;
  let writes = 0;
  const key = (ns: string, name: string) => `${ns}/${name}`;
  const copy = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
  const store: GatewayStore = {
    findProject: async () => project, cachedProjectByName: () => project, cachedSession: () => session, cachedSandboxToken: () => undefined,
    cachedProviders: () => undefined, cachedLedger: () => undefined, cachedTriggerSlug: () => null,
    readProviders: async () => undefined, writeProviders: async () => undefined,
    async readConfigMap(ns, name) {
      await new Promise((r) => setImmediate(r)); // let writers interleave
      const found = objects.get(key(ns, name));
      return found && copy(found);
    },
    async writeConfigMap(cm) {
      await new Promise((r) => setImmediate(r));
      const k = key(cm.metadata.namespace!, cm.metadata.name!);
      const current = objects.get(k);
      writes++;
      if (options.conflictEvery && writes % options.conflictEvery === 0) throw new GatewayWriteConflict('injected');
      if (cm.metadata.resourceVersion ? current?.metadata.resourceVersion !== cm.metadata.resourceVersion : current) throw new GatewayWriteConflict('stale');
      objects.set(k, { ...copy(cm), metadata: { ...copy(cm.metadata), resourceVersion: String(++version) } });
    },
    async createOnce(cm) {
      const k = key(cm.metadata.namespace!, cm.metadata.name!);
      if (!objects.has(k)) objects.set(k, { ...copy(cm), metadata: { ...copy(cm.metadata), resourceVersion: String(++version) } });
    },
    async deleteConfigMap(ns, name) { objects.delete(key(ns, name)); },
    recordEvent: async () => undefined,
  };
  return { store, objects };
}

const record = (i: number): LlmUsageRecord => ({
  at: new Date(Date.UTC(2026, 2, 1, 0, 0, 0, i)).toISOString(), session_id: session.metadata.name!, trigger: null,
  provider: 'openai', model: 'm1', status: 200, input_tokens: 2, output_tokens: 1, duration_ms: 5,
});

describe('UsageRecorder', () => {
  it('two replicas writing at once lose nothing: every record is counted once, archived pages included', async () => {
    const { store, objects } = memoryStore({ conflictEvery: 7 });
    const now = () => new Date('2026-03-01T12:00:00Z');
    const a = new UsageRecorder({ store, now, retryDelayMs: 1, flushDelayMs: 0, log: () => undefined });
    const b = new UsageRecorder({ store, now, retryDelayMs: 1, flushDelayMs: 5, log: () => undefined });
    const n = 1300;
    for (let i = 0; i < n; i++) {
      (i % 2 ? a : b).record(project, session, record(i));
      if (i % 50 === 0) await new Promise((r) => setImmediate(r));
    }
    expect(a.pendingProjectTokens(project.metadata.uid!) + b.pendingProjectTokens(project.metadata.uid!)).toBeGreaterThan(0);
    await Promise.all([a.flush(), b.flush()]);
    expect(a.pendingProjectTokens(project.metadata.uid!)).toBe(0);

    const ledgerCm = objects.get(`default/${llmLedgerName(project)}`)!;
    expect(ledgerCounters(ledgerCm).total).toEqual({ requests: n, input_tokens: 2 * n, output_tokens: n });
    const ledger = parseLedger(ledgerCm);
    const pages = [...objects.values()].filter((o) => o.metadata.labels?.['svc.dev/llm-usage'] === 'page');
    const archived = pages.flatMap((p) => parseRows(p.data?.records));
    expect(pages.length).toBe(ledger.nextPage);
    expect(ledger.pages.map((p) => p.number)).toEqual(pages.map((_, i) => i)); // the index names every page
    expect(ledger.recent.length).toBeLessThanOrEqual(RECENT_MAX);
    expect(archived.length + ledger.recent.length).toBe(n);
    expect(new Set([...archived, ...ledger.recent].map((r) => r.at)).size).toBe(n); // each once
    expect(pages.every((p) => parseRows(p.data?.records).length === PAGE_RECORDS)).toBe(true);
    const sessionUsage = [...objects.values()].find((o) => o.metadata.labels?.['svc.dev/llm-usage'] === 'session');
    expect(parseSessionUsage(sessionUsage)).toEqual({ requests: n, input_tokens: 2 * n, output_tokens: n });
    expect(sessionUsage?.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Session', name: '0b6c3f52-8d1e-4c55-9b1a-2f0e6f1c9a10' });
  });

  it('state is bounded: pages beyond the record limit are deleted, oldest first', async () => {
    const { store, objects } = memoryStore();
    const recorder = new UsageRecorder({ store, maxRecords: 1000, retentionDays: 365, now: () => new Date('2026-03-02T00:00:00Z'), log: () => undefined });
    for (let i = 0; i < 3000; i++) recorder.record(project, undefined, record(i));
    await recorder.flush();
    const pages = [...objects.values()].filter((o) => o.metadata.labels?.['svc.dev/llm-usage'] === 'page').map((o) => Number(o.metadata.annotations?.['svc.dev/llm-usage-page'])).sort((a, b) => a - b);
    // 1000 records at most: the ledger's up to 500 plus two pages of 250
    expect(pages).toEqual([8, 9]);
    const ledger = objects.get(`default/${llmLedgerName(project)}`);
    expect(parseLedger(ledger).pages.map((p) => p.number)).toEqual([8, 9]);
    expect(ledgerCounters(ledger).total.requests).toBe(3000); // the counters stay exact
  });
});
