/**
 * Read-your-own-writes over an informer cache (controller-runtime's "expectations"): objects
 * this process just created or updated count at once, until its cache shows them. Decisions
 * that count objects (the session cap, a fire queue) would otherwise count from a cache one
 * write behind and overshoot. An entry goes when the cache caught up (the object appeared, or
 * its resourceVersion moved past the one the cache had at the write) or after `ttlMs`.
 */
import type { KubeObject } from '../resources/index.js';

const keyOf = (obj: KubeObject) => `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;

export class RecentWrites<T extends KubeObject> {
  private readonly entries = new Map<string, { obj: T; before: string | undefined; until: number }>();

  constructor(private readonly ttlMs = 10_000, private readonly clock: () => number = Date.now) {}

  /** `written` as stored; `before` is the resourceVersion the cache had when it was written (undefined: it had none). */
  record(written: T, before: string | undefined): void {
    this.entries.set(keyOf(written), { obj: written, before, until: this.clock() + this.ttlMs });
  }

  /** The cached objects of `namespace` with the writes the cache has not caught up with laid over them. */
  overlay(cached: readonly T[], namespace: string): T[] {
    const byKey = new Map(cached.map((obj) => [keyOf(obj), obj]));
    const now = this.clock();
    for (const [key, entry] of this.entries) {
      const inCache = byKey.get(key);
      const caughtUp = entry.before === undefined ? inCache !== undefined : inCache?.metadata.resourceVersion !== entry.before;
      if (caughtUp || entry.until < now) { this.entries.delete(key); continue; }
      if (entry.obj.metadata.namespace === namespace) byKey.set(key, entry.obj);
    }
    return [...byKey.values()];
  }

  /** Entries held (for tests and metrics). */
  get size(): number { return this.entries.size; }
}
