/** A timer of {@link ManualClock}. */
interface ManualTimer {
  at: number;
  ms: number;
  callback: () => void;
  canceled: boolean;
}

/**
 * A clock a test moves by hand: `now()` is `time`, and timers set with `setTimer` fire only when
 * `advance` moves the clock to or past them. Its shape (`now`, and `setTimer` returning a cancel
 * function) is what claw's timed stores take as their clock.
 */
export class ManualClock {
  time: number;
  private readonly timers: ManualTimer[] = [];

  /** `start`: the time it shows first, in ms since the epoch (default 2030-01-01T00:00:00Z). */
  constructor(start = Date.parse('2030-01-01T00:00:00Z')) {
    this.time = start;
  }

  now = (): number => this.time;

  setTimer = (callback: () => void, ms: number): (() => void) => {
    const timer = { at: this.time + ms, ms, callback, canceled: false };
    this.timers.push(timer);
    return () => {
      timer.canceled = true;
    };
  };

  /** The timers set and not canceled nor fired: when each is due and what it was set for. */
  get pending(): Array<{ at: number; ms: number }> {
    return this.timers.filter((timer) => !timer.canceled).map(({ at, ms }) => ({ at, ms }));
  }

  /** Moves the clock on by `ms` and fires the timers that are due, in the order they were set. */
  advance(ms: number): void {
    this.time += ms;
    for (const timer of this.timers.splice(0)) {
      if (timer.canceled) continue;
      if (timer.at <= this.time) timer.callback();
      else this.timers.push(timer);
    }
  }
}
