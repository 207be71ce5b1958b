import { defaultSetTimer, type SetTimer } from './timers.js';

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

/** The budget an `ActivityClock` watches. */
export interface ActivityBudget {
  limitMs: number;
  /** Called once, when the measured time reaches `limitMs`. */
  onExhausted: () => void;
}

export interface ActivityClockOptions {
  /** Milliseconds clock. */
  now: () => number;
  /** Starts the budget's timer (default: the global `setTimeout`). */
  setTimer?: SetTimer;
  budget?: ActivityBudget;
}

/**
 * Measures the wall time during which at least one activity runs: parallel activities count their
 * overlap once (a wave of tools counts its wall time, not the sum of its tools). With a `budget`,
 * `onExhausted` is called once when the measured time reaches its limit; the timer runs only while
 * an activity does, so idle time (a model call, an approval wait) never counts.
 */
export class ActivityClock {
  private active = 0;
  private since = 0;
  private total = 0;
  private cancelTimer: (() => void) | undefined;
  private fired = false;
  private readonly now: () => number;
  private readonly setTimer: SetTimer;
  private readonly budget: ActivityBudget | undefined;

  constructor(options: ActivityClockOptions) {
    this.now = options.now;
    this.setTimer = options.setTimer ?? defaultSetTimer;
    this.budget = options.budget;
  }

  begin(): void {
    if (this.active === 0) {
      this.since = this.now();
      this.arm();
    }
    this.active += 1;
  }

  end(): void {
    this.active -= 1;
    if (this.active === 0) {
      this.total += this.now() - this.since;
      this.cancelTimer?.();
      this.cancelTimer = undefined;
    }
  }

  /** Milliseconds accumulated so far (including a running stretch). */
  elapsed(): number {
    return this.active > 0 ? this.total + (this.now() - this.since) : this.total;
  }

  /** True once the limit was reached. */
  get exhausted(): boolean {
    return this.fired || (this.budget !== undefined && this.elapsed() >= this.budget.limitMs);
  }

  private arm(): void {
    const budget = this.budget;
    if (budget === undefined || this.fired) return;
    this.cancelTimer = this.setTimer(() => {
      this.cancelTimer = undefined;
      this.fired = true;
      budget.onExhausted();
    }, Math.max(0, budget.limitMs - this.total));
  }
}
