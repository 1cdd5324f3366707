import { describe, expect, it } from 'vitest';
import { COMBINED_PREFIX, EventCorrelator, MAX_EVENT_MESSAGE, type CoreEvent, type EventSink } from './event-correlator.js';

/** An in-memory API server's Events: what the correlator wrote, as the server would keep it. */
function memorySink(): EventSink & { events: Map<string, CoreEvent>; writes: string[] } {
  const events = new Map<string, CoreEvent>();
  const writes: string[] = [];
  return {
    events,
    writes,
    async create(event) {
      await new Promise((r) => setTimeout(r, 1));
      if (events.has(event.metadata.name)) throw new Error('AlreadyExists');
      writes.push('create');
      events.set(event.metadata.name, structuredClone(event));
    },
    async patch(_ns, name, patch) {
      await new Promise((r) => setTimeout(r, 1));
      const current = events.get(name);
      if (!current) return false;
      writes.push('patch');
      events.set(name, { ...current, ...patch });
      return true;
    },
  };
}

const pod = { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'p', uid: 'u1' };

describe('EventCorrelator', () => {
  it('counts repeats of the same event on one Event (count, lastTimestamp), also when they arrive at once', async () => {
    const sink = memorySink();
    let t = Date.parse('2026-01-01T00:00:00Z');
    const correlator = new EventCorrelator(sink, { component: 'test', now: () => new Date(t) });
    await Promise.all(Array.from({ length: 5 }, () => correlator.record(pod, { type: 'Warning', reason: 'BackOff', message: 'back-off' })));
    t += 65_000;
    await correlator.record(pod, { type: 'Warning', reason: 'BackOff', message: 'back-off' });
    expect(sink.events.size).toBe(1);
    const [event] = [...sink.events.values()];
    expect(event).toMatchObject({
      count: 6, reason: 'BackOff', message: 'back-off', type: 'Warning',
      firstTimestamp: '2026-01-01T00:00:00Z', lastTimestamp: '2026-01-01T00:01:05Z',
      involvedObject: pod, source: { component: 'test' },
    });
    expect(sink.writes).toEqual(['create', 'patch', 'patch', 'patch', 'patch', 'patch']);
  });

  it('keeps different reasons, types, messages and objects apart', async () => {
    const sink = memorySink();
    const correlator = new EventCorrelator(sink, { component: 'test' });
    await correlator.record(pod, { type: 'Warning', reason: 'BackOff', message: 'a' });
    await correlator.record(pod, { type: 'Normal', reason: 'BackOff', message: 'a' });
    await correlator.record(pod, { type: 'Warning', reason: 'Failed', message: 'a' });
    await correlator.record(pod, { type: 'Warning', reason: 'BackOff', message: 'b' });
    await correlator.record({ ...pod, name: 'q', uid: 'u2' }, { type: 'Warning', reason: 'BackOff', message: 'a' });
    expect(sink.events.size).toBe(5);
    expect([...sink.events.values()].every((e) => e.count === 1)).toBe(true);
  });

  it('keeps at most 4 KiB of a message: what a sandbox reported is cut, in the Event and in the caches', async () => {
    const sink = memorySink();
    const correlator = new EventCorrelator(sink, { component: 'test' });
    const reported = `engine stalled: ${'x'.repeat(256 * 1024)}`;
    await correlator.record(pod, { type: 'Warning', reason: 'EngineStalled', message: reported });
    await correlator.record(pod, { type: 'Warning', reason: 'EngineStalled', message: `${reported}y` });
    const [event] = [...sink.events.values()];
    expect(event!.message).toBe(`${reported.slice(0, MAX_EVENT_MESSAGE - 1)}…`);
    // the same once cut: counted on the one Event
    expect(sink.events.size).toBe(1);
    expect(event!.count).toBe(2);
  });

  it('combines similar events beyond the limit into one Event whose count grows', async () => {
    const sink = memorySink();
    const correlator = new EventCorrelator(sink, { component: 'test', maxSimilar: 10 });
    for (let i = 0; i < 30; i++) await correlator.record(pod, { type: 'Normal', reason: 'Fired', message: `fire ${i}` });
    // 9 on their own, then every new message on the combined Event
    expect(sink.events.size).toBe(10);
    const combined = [...sink.events.values()].find((e) => e.message.startsWith(COMBINED_PREFIX))!;
    expect(combined).toMatchObject({ count: 21, message: `${COMBINED_PREFIX}fire 29` });
    // a message seen before keeps counting on its own Event
    await correlator.record(pod, { type: 'Normal', reason: 'Fired', message: 'fire 3' });
    expect([...sink.events.values()].find((e) => e.message === 'fire 3')!.count).toBe(2);
  });

  it('starts a new Event when the one it counted on is gone (expired on the server)', async () => {
    const sink = memorySink();
    const correlator = new EventCorrelator(sink, { component: 'test' });
    await correlator.record(pod, { type: 'Warning', reason: 'BackOff', message: 'x' });
    sink.events.clear();
    await correlator.record(pod, { type: 'Warning', reason: 'BackOff', message: 'x' });
    expect([...sink.events.values()].map((e) => e.count)).toEqual([1]);
  });

  it('keeps its caches bounded however many objects come and go', async () => {
    const sink = memorySink();
    const correlator = new EventCorrelator(sink, { component: 'test', cacheSize: 50 });
    for (let i = 0; i < 500; i++) await correlator.record({ ...pod, name: `p${i}`, uid: `u${i}` }, { type: 'Normal', reason: 'Started', message: 'started' });
    expect(correlator.cacheEntries()).toBeLessThanOrEqual(100);
    expect(sink.events.size).toBe(500);
  });
});
