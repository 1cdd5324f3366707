import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DaemonHealth } from '../lib/daemon-health.js';
import { healthVersion, SharedHealthReads } from './health.js';

/** A reader that answers each read with a new object (so that a shared read is the same object). */
function countingReader() {
  const sent: string[] = [];
  const read = vi.fn(async (address: string) => {
    sent.push(address);
    return { daemon: { state: 'ready' }, read: sent.length } as unknown as DaemonHealth;
  });
  return { read, sent };
}

describe('SharedHealthReads', () => {
  afterEach(() => vi.useRealTimers());

  it('shares a read of the same address and version while it is young, and reads again after', async () => {
    let now = 1_000;
    const { read, sent } = countingReader();
    const reads = new SharedHealthReads(1000, read, () => now);
    const first = await reads.read('10.0.0.2:8000', 'uid-1 e1');
    now += 999;
    expect(await reads.read('10.0.0.2:8000', 'uid-1 e1')).toBe(first);
    now += 1;
    const third = await reads.read('10.0.0.2:8000', 'uid-1 e1');
    expect(third).not.toBe(first);
    expect(sent).toEqual(['10.0.0.2:8000', '10.0.0.2:8000']);
  });

  it('reads anew for a new version (the Sandbox changed), another address or when asked for a fresh read', async () => {
    const { read, sent } = countingReader();
    const reads = new SharedHealthReads(1000, read, () => 5_000);
    const first = await reads.read('10.0.0.2:8000', 'uid-1 e1');
    // the Sandbox changed (the daemon's event, its status): what the controllers act on may be new
    const afterEvent = await reads.read('10.0.0.2:8000', 'uid-1 e2');
    expect(afterEvent).not.toBe(first);
    await reads.read('10.0.0.3:8000', 'uid-1 e2');
    // a daemon just restarted on the same address and version
    const fresh = await reads.read('10.0.0.2:8000', 'uid-1 e2', { fresh: true });
    expect(fresh).not.toBe(afterEvent);
    // and what is shared from then on is the fresh one
    expect(await reads.read('10.0.0.2:8000', 'uid-1 e2')).toBe(fresh);
    expect(sent).toHaveLength(4);
  });

  it('shares a read still in flight', async () => {
    let answer!: (health: DaemonHealth | null) => void;
    const read = vi.fn(() => new Promise<DaemonHealth | null>((resolve) => { answer = resolve; }));
    const reads = new SharedHealthReads(1000, read);
    const both = Promise.all([reads.read('10.0.0.2:8000', 'v'), reads.read('10.0.0.2:8000', 'v')]);
    answer(null);
    expect(await both).toEqual([null, null]);
    expect(read).toHaveBeenCalledTimes(1);
  });

  it('keeps no entry longer than it can be shared', async () => {
    vi.useFakeTimers();
    const { read } = countingReader();
    const reads = new SharedHealthReads(1000, read);
    for (let i = 0; i < 50; i++) await reads.read(`10.0.0.${i}:8000`, 'v');
    expect(reads.size).toBe(50);
    vi.advanceTimersByTime(1000);
    expect(reads.size).toBe(0);
  });

  it('versions a read by the Sandbox as the reconcile saw it', () => {
    const sandbox = (uid: string, resourceVersion: string) => ({ metadata: { uid, resourceVersion } });
    expect(healthVersion(sandbox('u1', '41'))).toBe('u1 41');
    // any change of the Sandbox (an event's annotation, its status) is a new version
    expect(healthVersion(sandbox('u1', '42'))).not.toBe(healthVersion(sandbox('u1', '41')));
    // a new Sandbox of the same name (a wake after retention) too
    expect(healthVersion(sandbox('u2', '41'))).not.toBe(healthVersion(sandbox('u1', '41')));
  });
});
