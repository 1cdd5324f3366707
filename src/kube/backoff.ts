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
