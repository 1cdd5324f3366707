import { describe, expect, it } from 'vitest';
import { WorkQueue, type WorkHandler } from './workqueue.js';

/** A promise with its resolver, to hold a handler in flight. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

function waitFor(check: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const tick = () => (check() ? resolve() : setTimeout(tick, 2));
    tick();
  });
}

describe('WorkQueue', () => {
  it('runs a key added many times while pending once', async () => {
    const runs: string[] = [];
    const q = new WorkQueue(async (key) => void runs.push(key));
    q.add('a');
    q.add('b');
    q.add('a');
    q.add('a');
    expect(q.length).toBe(2);
    q.start();
    await waitFor(() => runs.length === 2);
    await q.idle();
    expect(runs).toEqual(['a', 'b']);
    await q.stop();
  });

  it('never runs one key twice at once, and re-runs a key that changed while in flight', async () => {
    const g = gate();
    let active = 0;
    let maxActive = 0;
    const runs: number[] = [];
    const q = new WorkQueue(
      async () => {
        active++;
        maxActive = Math.max(maxActive, active);
        runs.push(runs.length);
        if (runs.length === 1) await g.opened;
        active--;
      },
      { concurrency: 4 },
    );
    q.start();
    q.add('k');
    await waitFor(() => runs.length === 1);
    q.add('k');
    q.add('k');
    expect(runs.length).toBe(1);
    g.open();
    await waitFor(() => runs.length === 2);
    await q.idle();
    expect(runs.length).toBe(2);
    expect(maxActive).toBe(1);
    await q.stop();
  });

  it('processes different keys concurrently up to the limit', async () => {
    const g = gate();
    let active = 0;
    let maxActive = 0;
    const q = new WorkQueue(
      async () => {
        active++;
        maxActive = Math.max(maxActive, active);
        await g.opened;
        active--;
      },
      { concurrency: 2 },
    );
    q.start();
    ['a', 'b', 'c'].forEach((k) => q.add(k));
    await waitFor(() => active === 2);
    expect(q.length).toBe(1);
    g.open();
    await waitFor(() => q.length === 0);
    await q.idle();
    expect(maxActive).toBe(2);
    await q.stop();
  });

  it('retries a failing key with growing delays and resets them on success', async () => {
    const attempts: number[] = [];
    const errors: string[] = [];
    let failuresLeft = 3;
    const handler: WorkHandler = async () => {
      attempts.push(Date.now());
      if (failuresLeft-- > 0) throw new Error('boom');
    };
    const q = new WorkQueue(handler, { backoffInitialMs: 20, backoffMaxMs: 1000, onError: (key, err) => errors.push(`${key}: ${(err as Error).message}`) });
    q.start();
    q.add('k');
    await waitFor(() => q.failureCount('k') === 3);
    expect(errors).toEqual(['k: boom', 'k: boom', 'k: boom']);
    await waitFor(() => attempts.length === 4);
    await q.idle();
    expect(q.failureCount('k')).toBe(0);
    const gaps = attempts.slice(1).map((t, i) => t - attempts[i]);
    // Each wait is at least its backoff step: 20, 40, 80 ms.
    expect(gaps[0]).toBeGreaterThanOrEqual(19);
    expect(gaps[1]).toBeGreaterThanOrEqual(39);
    expect(gaps[2]).toBeGreaterThanOrEqual(79);
    await q.stop();
  });

  it('runs a key again after requeueAfter, and an earlier schedule wins', async () => {
    const runs: number[] = [];
    const q = new WorkQueue(async () => {
      runs.push(Date.now());
      return runs.length === 1 ? { requeueAfter: 30 } : undefined;
    });
    q.start();
    q.add('k');
    await waitFor(() => runs.length === 2);
    expect(runs[1] - runs[0]).toBeGreaterThanOrEqual(29);

    q.addAfter('k', 60_000);
    q.addAfter('k', 10);
    await waitFor(() => runs.length === 3);
    await q.stop();
  });

  it('stop drops scheduled work and waits for the run in flight', async () => {
    const g = gate();
    let finished = false;
    const q = new WorkQueue(async () => {
      await g.opened;
      finished = true;
      return { requeueAfter: 10 };
    });
    q.start();
    q.add('k');
    q.addAfter('other', 5);
    const stopped = q.stop();
    g.open();
    await stopped;
    expect(finished).toBe(true);
    await new Promise((r) => setTimeout(r, 30));
    expect(q.length).toBe(0);
  });
});
