// In-process async mutex keyed by a string: work under one key runs one at a time, different
// keys in parallel (writes to one git mirror; one change request or project counter).

export class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const current = previous.catch(() => undefined).then(fn);
    const tail = current.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await current;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

/** Like KeyedMutex, but up to `limit` runs under one key at once; the others wait their turn, in order. */
export class KeyedSemaphore {
  private readonly slots = new Map<string, { running: number; waiting: (() => void)[] }>();

  constructor(private readonly limit: number) {}

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    let slot = this.slots.get(key);
    if (!slot) this.slots.set(key, (slot = { running: 0, waiting: [] }));
    if (slot.running >= this.limit) await new Promise<void>((resolve) => slot.waiting.push(resolve));
    else slot.running++;
    try {
      return await fn();
    } finally {
      const next = slot.waiting.shift();
      if (next) next(); // the place passes to the next in line
      else if (--slot.running === 0) this.slots.delete(key);
    }
  }

  /** Keys with a run in progress or waiting (for tests). */
  get size(): number {
    return this.slots.size;
  }
}
