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
    for (const obj of this.pending(namespace, (key) => byKey.get(key))) byKey.set(keyOf(obj), obj);
    return [...byKey.values()];
  }

  /**
   * The objects an index selected from the cache (`selected`, of `namespace`) with this process's
   * writes laid over them: a write the cache has not caught up with replaces its cached object,
   * and is in the answer only when `selects(write)` (a fire just fired leaves the pending ones).
   * `cached(namespace, name)` reads one object of the whole cache, to see whether it caught up.
   * Costs the size of `selected` plus the writes held, never a scan of the namespace.
   */
  overlaySelected(selected: readonly T[], namespace: string, cached: (namespace: string, name: string) => T | undefined, selects: (obj: T) => boolean): T[] {
    const byKey = new Map(selected.map((obj) => [keyOf(obj), obj]));
    for (const obj of this.pending(namespace, (key) => { const slash = key.indexOf('/'); return cached(key.slice(0, slash), key.slice(slash + 1)); })) {
      if (selects(obj)) byKey.set(keyOf(obj), obj);
      else byKey.delete(keyOf(obj));
    }
    return [...byKey.values()];
  }

  /** This process's write of `namespace/name` when the cache (`cached`, its object there) has not caught up with it. */
  get(namespace: string, name: string, cached: T | undefined): T | undefined {
    const key = `${namespace}/${name}`;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (this.caughtUp(entry, cached) || entry.until < this.clock()) { this.entries.delete(key); return undefined; }
    return entry.obj;
  }

  private caughtUp(entry: { before: string | undefined }, inCache: T | undefined): boolean {
    return entry.before === undefined ? inCache !== undefined : inCache?.metadata.resourceVersion !== entry.before;
  }

  /** The writes of `namespace` the cache has not caught up with; drops the others. */
  private pending(namespace: string, cached: (key: string) => T | undefined): T[] {
    const now = this.clock();
    const out: T[] = [];
    for (const [key, entry] of this.entries) {
      if (this.caughtUp(entry, cached(key)) || entry.until < now) { this.entries.delete(key); continue; }
      if (entry.obj.metadata.namespace === namespace) out.push(entry.obj);
    }
    return out;
  }

  /** Entries held (for tests and metrics). */
  get size(): number { return this.entries.size; }
}
