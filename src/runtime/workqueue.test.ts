import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_REQUEUE_DELAY_MS, WorkQueue, type WorkHandler } from './workqueue.js';

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

describe('WorkQueue requeue delays', () => {
  afterEach(() => { vi.useRealTimers(); });
  const YEARS_MS = 5 * 365 * 24 * 3600_000;

  it('a delay years away neither overflows the timer nor runs the key at once', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    let runs = 0;
    const q = new WorkQueue(async () => { runs++; return { requeueAfter: YEARS_MS }; });
    q.start();
    q.add('far');
    await waitFor(() => runs === 1);
    q.addAfter('other', 2 ** 40);
    await new Promise((r) => setTimeout(r, 150));
    process.off('warning', onWarning);
    await q.stop();
    // an overflowing timer fires after 1 ms, again and again: hundreds of runs in 150 ms
    expect(runs).toBe(1);
    expect(warnings.filter((w) => w.name === 'TimeoutOverflowWarning')).toEqual([]);
  });

  it('waits in steps of at most MAX_REQUEUE_DELAY_MS, the handler computing the rest each time', async () => {
    vi.useFakeTimers();
    const target = Date.now() + 3 * MAX_REQUEUE_DELAY_MS + 5_000;
    const runs: number[] = [];
    const q = new WorkQueue(async () => {
      runs.push(Date.now());
      const left = target - Date.now();
      return left > 0 ? { requeueAfter: left } : undefined;
    });
    q.start();
    q.add('k');
    for (let i = 0; i < 4; i++) await vi.advanceTimersByTimeAsync(MAX_REQUEUE_DELAY_MS);
    const started = runs[0]!;
    const M = MAX_REQUEUE_DELAY_MS;
    expect(runs.map((t) => t - started)).toEqual([0, M, 2 * M, 3 * M, 3 * M + 5_000]);
    await q.stop();
  });

  it('a NaN delay waits the longest step instead of spinning', async () => {
    vi.useFakeTimers();
    let runs = 0;
    const q = new WorkQueue(async () => { runs++; return { requeueAfter: Number.NaN }; });
    q.start();
    q.add('k');
    await vi.advanceTimersByTimeAsync(1000);
    expect(runs).toBe(1);
    await vi.advanceTimersByTimeAsync(MAX_REQUEUE_DELAY_MS);
    expect(runs).toBe(2);
    await q.stop();
  });
});
