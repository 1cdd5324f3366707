/** Exponential backoff: initial, doubled per failure, capped; reset on success. */
export class Backoff {
  private failures = 0;
  constructor(
    readonly initialMs = 200,
    readonly maxMs = 30_000,
  ) {}

  next(): number {
    const delay = Math.min(this.initialMs * 2 ** this.failures, this.maxMs);
    this.failures++;
    return delay;
  }

  /** Failures since the last reset. */
  get attempts(): number {
    return this.failures;
  }

  reset(): void {
    this.failures = 0;
  }
}

/** A sleep that `wake()` cuts short: loops that wait between attempts but must stop promptly. */
export class Sleeper {
  private wakeCurrent?: () => void;

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeCurrent = done;
    });
  }

  wake(): void {
    this.wakeCurrent?.();
  }
}
