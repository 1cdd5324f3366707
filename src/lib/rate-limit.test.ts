import { describe, expect, it } from 'vitest';
import { KeyedRateLimiter } from './rate-limit.js';

describe('KeyedRateLimiter', () => {
  it('allows a burst, then one request per 1/perSecond, per key', () => {
    let now = 0;
    const limiter = new KeyedRateLimiter({ burst: 3, perSecond: 2, now: () => now });
    expect([1, 2, 3].map(() => limiter.take('a').allowed)).toEqual([true, true, true]);
    expect(limiter.take('a')).toEqual({ allowed: false, retryAfterMs: 500 });
    expect(limiter.take('b').allowed).toBe(true); // another key has its own bucket
    now = 499;
    expect(limiter.take('a').allowed).toBe(false);
    now = 1000; // two tokens back after a second at 2/s
    expect([1, 2, 3].map(() => limiter.take('a').allowed)).toEqual([true, true, false]);
  });

  it('a refused request does not buy time: a flood stays at the rate', () => {
    let now = 0;
    const limiter = new KeyedRateLimiter({ burst: 1, perSecond: 1, now: () => now });
    let allowed = 0;
    for (now = 0; now < 10_000; now += 10) if (limiter.take('x').allowed) allowed++;
    expect(allowed).toBe(10);
  });

  it('remembers at most maxKeys keys', () => {
    const limiter = new KeyedRateLimiter({ burst: 1, perSecond: 0.001, maxKeys: 2, now: () => 0 });
    limiter.take('a');
    limiter.take('b');
    limiter.take('c'); // forgets a
    expect(limiter.take('a').allowed).toBe(true);
    expect(limiter.take('c').allowed).toBe(false);
  });
});
