import { describe, expect, it } from 'vitest';
import { KeyedBatcher, KeyedMutex, KeyedSemaphore } from './keyed-mutex.js';

describe('KeyedMutex', () => {
  it('runs one task at a time per key, keys independently, and survives failures', async () => {
    const mutex = new KeyedMutex();
    const events: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const first = mutex.run('repo', async () => { events.push('a:start'); await gate; events.push('a:end'); throw new Error('boom'); });
    const second = mutex.run('repo', async () => { events.push('b'); return 2; });
    const other = mutex.run('other', async () => { events.push('other'); return 3; });
    expect(await other).toBe(3);
    expect(events).toEqual(['a:start', 'other']);
    release();
    await expect(first).rejects.toThrow('boom');
    expect(await second).toBe(2);
    expect(events).toEqual(['a:start', 'other', 'a:end', 'b']);
  });
});

describe('KeyedSemaphore', () => {
  it('runs up to the limit per key at once, the rest in order as places free (failures too); forgets idle keys', async () => {
    const semaphore = new KeyedSemaphore(2);
    const running = new Set<string>();
    let most = 0;
    const gates = new Map<string, () => void>();
    const task = (name: string, fail = false) => semaphore.run('session', async () => {
      running.add(name);
      most = Math.max(most, running.size);
      await new Promise<void>((resolve) => gates.set(name, resolve));
      running.delete(name);
      if (fail) throw new Error(name);
      return name;
    });
    const tasks = [task('a', true), task('b'), task('c'), task('d')];
    const other = semaphore.run('other', async () => 'other');
    expect(await other).toBe('other');
    await new Promise((r) => setImmediate(r));
    expect([...running]).toEqual(['a', 'b']);
    gates.get('a')!();
    await expect(tasks[0]).rejects.toThrow('a');
    await new Promise((r) => setImmediate(r));
    expect([...running]).toEqual(['b', 'c']);
    for (const name of ['b', 'c']) gates.get(name)!();
    await new Promise((r) => setImmediate(r));
    gates.get('d')!();
    expect(await Promise.all(tasks.slice(1))).toEqual(['b', 'c', 'd']);
    expect(most).toBe(2);
    expect(semaphore.size).toBe(0);
  });
});

describe('KeyedBatcher', () => {
  it('runs the first item alone, then everything that came meanwhile as one batch; settles each; keys apart; forgets idle keys', async () => {
    const batches: string[][] = [];
    const gates: (() => void)[] = [];
    const batcher = new KeyedBatcher<string, string>(async (key, items) => {
      batches.push([key, ...items]);
      await new Promise<void>((resolve) => gates.push(resolve));
      return items.map((item): PromiseSettledResult<string> => (item.startsWith('bad')
        ? { status: 'rejected', reason: new Error(item) }
        : { status: 'fulfilled', value: item.toUpperCase() }));
    });
    const first = batcher.run('ns', 'a');
    const later = ['b', 'bad-c', 'd'].map((item) => batcher.run('ns', item));
    const other = batcher.run('other', 'x');
    expect(batches).toEqual([['ns', 'a'], ['other', 'x']]);
    gates.shift()!();
    expect(await first).toBe('A');
    expect(batches).toEqual([['ns', 'a'], ['other', 'x'], ['ns', 'b', 'bad-c', 'd']]);
    gates.shift()!();
    expect(await other).toBe('X');
    gates.shift()!();
    const settled = await Promise.allSettled(later);
    expect(settled.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual(['B', 'bad-c', 'D']);
    expect(batcher.size).toBe(0);
  });

  it('a batch that throws rejects each of its items, and the next batch still runs', async () => {
    let calls = 0;
    const batcher = new KeyedBatcher<number, number>(async (_key, items) => {
      if (calls++ === 0) { await new Promise((r) => setTimeout(r, 10)); throw new Error('the read failed'); }
      return items.map((value) => ({ status: 'fulfilled', value }));
    });
    const failed = batcher.run('ns', 1);
    const next = batcher.run('ns', 2);
    await expect(failed).rejects.toThrow('the read failed');
    expect(await next).toBe(2);
  });
});
