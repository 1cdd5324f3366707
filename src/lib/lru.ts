// A Map used as a least-recently-used cache of at most `limit` entries: what keeps a per-key
// memory (Events already written, a sandbox's event budget) bounded however many keys come.
export class Lru<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly limit: number) {}
  get(key: string): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) { this.map.delete(key); this.map.set(key, value); }
    return value;
  }
  set(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.limit) this.map.delete(this.map.keys().next().value!);
  }
  delete(key: string): void { this.map.delete(key); }
  get size(): number { return this.map.size; }
}
