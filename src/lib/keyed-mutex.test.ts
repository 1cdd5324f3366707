import { describe, expect, it } from 'vitest';
import { KeyedMutex } from './keyed-mutex.js';

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
