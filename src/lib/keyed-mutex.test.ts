import { describe, expect, it } from 'vitest';
import { KeyedMutex, KeyedSemaphore } from './keyed-mutex.js';

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
