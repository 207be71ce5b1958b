/**
 * Runs at most `limit` tasks at a time; the others wait in order. Used for the calls of one tool
 * wave (ENG-2).
 */
export class ConcurrencyLimiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`concurrency limit must be a whole number ≥ 1, got ${limit}`);
    }
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.active += 1;
    try {
      return await task();
    } finally {
      this.active -= 1;
      this.waiting.shift()?.();
    }
  }
}

/**
 * Measures the wall time during which at least one activity runs: parallel activities count their
 * overlap once (a wave of tools counts its wall time, not the sum of its tools).
 */
export class ActivityClock {
  private active = 0;
  private since = 0;
  private total = 0;

  constructor(private readonly now: () => number) {}

  begin(): void {
    if (this.active === 0) this.since = this.now();
    this.active += 1;
  }

  end(): void {
    this.active -= 1;
    if (this.active === 0) this.total += this.now() - this.since;
  }

  /** Milliseconds accumulated so far (including a running stretch). */
  elapsed(): number {
    return this.active > 0 ? this.total + (this.now() - this.since) : this.total;
  }
}
