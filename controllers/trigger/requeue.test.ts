// Far-future instants (a run_at years away, a yearly cron) are approached in bounded steps:
// Node's timers overflow past 2^31-1 ms and then fire at once, in a loop (issue 23).
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ReconcileContext } from '../../src/runtime/index.js';
import { MAX_REQUEUE_DELAY_MS } from '../../src/runtime/index.js';
import type { Trigger } from '../../src/resources/index.js';
import { MAX_TRIGGER_REQUEUE_MS, nextTriggerStatus } from './status.js';
import { cronScheduler } from './scheduler.js';

const NOW = new Date('2026-01-02T00:00:00Z');
const TIMER_MAX = 2 ** 31 - 1;

function trigger(spec: Partial<Trigger['spec']>): Trigger {
  return {
    apiVersion: 'svc.dev/v1alpha1', kind: 'Trigger',
    metadata: { name: 'web-launch', namespace: 'acct', uid: 't', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { slug: 'launch', type: 'cron', prompt: 'p', name: 'launch', agent: 'a', sessionMode: 'fresh', enabled: true, timezone: 'UTC', projectRef: { name: 'web' }, ...spec },
  };
}

const FAR = {
  'a run_at years away': { runAt: '2036-01-31T09:00:00Z' },
  'a yearly cron': { cron: '0 0 0 1 1 *' },
  'a cron on February 29th': { cron: '0 0 12 29 2 *' },
} satisfies Record<string, Partial<Trigger['spec']>>;

describe('the Trigger controller requeues far-future instants in bounded steps', () => {
  for (const [what, spec] of Object.entries(FAR)) {
    it(what, () => {
      const { status, requeueAfterMs } = nextTriggerStatus({ trigger: trigger(spec), fires: [], sessions: new Map(), now: NOW });
      expect(Date.parse(status.nextFireAt!) - NOW.getTime()).toBeGreaterThan(TIMER_MAX / 100); // really far
      expect(requeueAfterMs).toBe(MAX_TRIGGER_REQUEUE_MS);
    });
  }

  it('a near instant is looked at just after it', () => {
    // passed a minute ago, not fired yet: looked at again as its catch-up window (5 min) closes
    const { requeueAfterMs } = nextTriggerStatus({ trigger: trigger({ runAt: '2026-01-01T23:59:00Z' }), fires: [], sessions: new Map(), now: NOW });
    expect(requeueAfterMs).toBe(4 * 60_000 + 1000);
  });
});

describe('the cron scheduler arms bounded timers for far-future instants', () => {
  // the spy first: it was set on the fake setTimeout, which restoring it after the real timers would put back
  afterEach(() => { vi.restoreAllMocks(); vi.useRealTimers(); });

  /** Just enough of a ReconcileContext for the scheduler: one cached trigger, no writes expected. */
  function context(t: Trigger, created: string[]): ReconcileContext {
    const informer = { get: () => t, list: () => [t], byIndex: () => [], on: () => {} };
    const client = {
      resource: () => ({ decode: (o: Trigger) => o, create: async (o: { metadata: { name: string } }) => { created.push(o.metadata.name); return o; } }),
      recordEvent: async () => {},
    };
    return { client, informer: () => informer, resource: () => ({}), signal: new AbortController().signal, log: { info() {}, warn() {}, error() {} } } as unknown as ReconcileContext;
  }

  for (const [what, spec] of Object.entries(FAR)) {
    it(what, async () => {
      vi.useFakeTimers({ now: NOW });
      const delays: number[] = [];
      const real = globalThis.setTimeout;
      vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => { delays.push(ms ?? 0); return real(fn, ms); }) as typeof setTimeout);
      const created: string[] = [];
      // the largest interval an operator could be configured with must not lift the cap
      const scheduler = cronScheduler({ maxSleepMs: Number.MAX_SAFE_INTEGER, now: () => new Date() });
      scheduler.start(context(trigger(spec), created));
      await vi.advanceTimersByTimeAsync(3 * MAX_REQUEUE_DELAY_MS);
      scheduler.stop();
      expect(delays.length).toBeGreaterThanOrEqual(3); // woke up in steps, re-armed each time
      expect(delays.length).toBeLessThan(10); // and not in a loop
      expect(Math.max(...delays)).toBeLessThanOrEqual(MAX_REQUEUE_DELAY_MS);
      expect(created).toEqual([]);
    });
  }
});
