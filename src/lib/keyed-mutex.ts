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

interface Waiting<T, R> { item: T; resolve: (value: R) => void; reject: (error: unknown) => void }

/**
 * Work under one key in batches, one batch at a time: what comes while a batch runs waits and
 * goes into the next one, all together. One read then serves a whole batch (a namespace's cap
 * for thirty starts at once, not thirty reads one after another). `processBatch` settles each item,
 * in order.
 */
export class KeyedBatcher<T, R> {
  private readonly queues = new Map<string, Waiting<T, R>[]>();

  constructor(private readonly processBatch: (key: string, items: T[]) => Promise<PromiseSettledResult<R>[]>) {}

  run(key: string, item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const waiting = this.queues.get(key);
      if (waiting) { waiting.push({ item, resolve, reject }); return; }
      const queue: Waiting<T, R>[] = [{ item, resolve, reject }];
      this.queues.set(key, queue);
      void this.drain(key, queue);
    });
  }

  private async drain(key: string, queue: Waiting<T, R>[]): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.splice(0);
      try {
        const results = await this.processBatch(key, batch.map((b) => b.item));
        batch.forEach((b, i) => {
          const result = results[i];
          if (result?.status === 'fulfilled') b.resolve(result.value);
          else b.reject(result ? result.reason : new Error('the batch settled no result for this item'));
        });
      } catch (error) {
        for (const b of batch) b.reject(error);
      }
    }
    this.queues.delete(key);
  }

  /** Keys with a batch running or waiting (for tests). */
  get size(): number {
    return this.queues.size;
  }
}
