// A token bucket per key (a sandbox's events, docs/sessions.md): `burst` at once, then
// `perSecond`; keys kept in an LRU so that memory stays bounded however many keys come.
import { Lru } from './lru.js';

export interface RateLimitOptions {
  /** Requests a quiet key may make at once. */
  burst: number;
  /** Requests per second a key may make over time. */
  perSecond: number;
  /** Keys remembered (least recently used forgotten: it starts again with a full bucket). */
  maxKeys?: number;
  now?: () => number;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

interface Bucket { tokens: number; at: number }

export class KeyedRateLimiter {
  private readonly buckets: Lru<Bucket>;
  private readonly now: () => number;

  constructor(private readonly options: RateLimitOptions) {
    this.buckets = new Lru(options.maxKeys ?? 10_000);
    this.now = options.now ?? Date.now;
  }

  /** Takes one token of `key`'s bucket, or says how long until one is there. */
  take(key: string): RateDecision {
    const { burst, perSecond } = this.options;
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: burst, at: now };
    const tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
    if (tokens < 1) {
      this.buckets.set(key, { tokens, at: now });
      return { allowed: false, retryAfterMs: Math.ceil(((1 - tokens) / perSecond) * 1000) };
    }
    this.buckets.set(key, { tokens: tokens - 1, at: now });
    return { allowed: true };
  }
}
