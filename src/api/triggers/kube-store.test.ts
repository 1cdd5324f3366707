import { describe, expect, it } from 'vitest';
import { shortLived } from './kube-store.js';

describe('shortLived', () => {
  function source() {
    const state = { value: 'v1', reads: 0, now: 0 };
    const read = shortLived(async () => { state.reads++; return state.value; }, { ttlMs: 1000, idleMs: 60_000, clock: () => state.now });
    return { state, read };
  }
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  it('answers from memory within the TTL, then refreshes in the background', async () => {
    const { state, read } = source();
    expect(await read('ns', 'a')).toBe('v1');
    state.value = 'v2';
    state.now = 500;
    expect(await read('ns', 'a')).toBe('v1');
    expect(state.reads).toBe(1);
    state.now = 1500;
    expect(await read('ns', 'a')).toBe('v1'); // the last value at once, a refresh behind it
    await settle();
    expect(await read('ns', 'a')).toBe('v2');
    expect(state.reads).toBe(2);
  });

  it('past staleMs a read waits for a fresh value: a secret set after a 409 holds for the next delivery, however quiet the time between', async () => {
    const { state, read } = source();
    expect(await read('ns', 'a')).toBe('v1');
    state.value = 'v2';
    state.now = 3000; // three TTLs later, nothing asked meanwhile
    expect(await read('ns', 'a')).toBe('v2');
    expect(state.reads).toBe(2);
    // reads in the same moment share one round trip
    state.value = 'v3';
    state.now = 6500;
    expect(await Promise.all([read('ns', 'a'), read('ns', 'a')])).toEqual(['v3', 'v3']);
    expect(state.reads).toBe(3);
  });

  it('a background refresh that fails is dropped: the next read waits for its own', async () => {
    let fail = false;
    const state = { now: 0, reads: 0 };
    const read = shortLived(async () => { state.reads++; if (fail) throw new Error('apiserver down'); return 'v1'; }, { ttlMs: 1000, clock: () => state.now });
    expect(await read('ns', 'a')).toBe('v1');
    fail = true;
    state.now = 1500;
    expect(await read('ns', 'a')).toBe('v1'); // stale but young: served, the refresh fails behind it
    await settle();
    await expect(read('ns', 'a')).rejects.toThrow('apiserver down');
    expect(state.reads).toBe(3);
  });

  it('forgets a key not asked for in idleMs: the next read waits for a fresh value (a deleted project\'s secret is not kept)', async () => {
    const { state, read } = source();
    expect(await read('ns', 'a')).toBe('v1');
    state.now = 30_000;
    expect(await read('ns', 'b')).toBe('v1'); // another key: a keeps its last use
    state.value = 'v2';
    state.now = 61_000;
    expect(await read('ns', 'a')).toBe('v2');
    expect(state.reads).toBe(3);
  });
});
