import { AbortRace, abortReason, linkAbortSignal } from '@claw/core';
import { ModelTimeoutError, type ModelTimeoutKind } from './retry-errors.js';

/**
 * Starts a timer that calls `callback` after `ms` milliseconds and returns a function that
 * cancels it. Injectable so that tests can drive time themselves.
 */
export type SetTimer = (callback: () => void, ms: number) => () => void;

/** Reads the global `setTimeout` at call time, so fake timers installed later still apply. */
export const defaultSetTimer: SetTimer = (callback, ms) => {
  const timer = setTimeout(callback, ms);
  return () => clearTimeout(timer);
};

/**
 * One attempt of a model call: a child signal for the inner provider that aborts when the
 * caller's signal does, or with a `ModelTimeoutError` when one of the attempt's timers fires.
 * `close` clears the timers and the listener on the caller's signal.
 */
export class AttemptScope {
  /** Aborted by this attempt's own timers, and by `close`. */
  private readonly own = new AbortController();
  private readonly link: { signal: AbortSignal; dispose: () => void };
  private readonly timers = new Map<ModelTimeoutKind, () => void>();
  private timeout: ModelTimeoutError | undefined;
  /** The races of the attempt: one abort listener for all of them (a race per chunk). */
  private readonly races: AbortRace;

  constructor(
    private readonly parent: AbortSignal | undefined,
    private readonly setTimer: SetTimer,
  ) {
    this.link = linkAbortSignal(parent, this.own.signal);
    this.races = new AbortRace(this.link.signal);
  }

  /** The signal to hand to the inner provider. */
  get signal(): AbortSignal {
    return this.link.signal;
  }

  /** Starts the timer of `kind`, anew if it runs already; `ms` ≤ 0 means no limit. */
  startTimer(kind: ModelTimeoutKind, ms: number): void {
    this.stopTimer(kind);
    if (ms <= 0 || this.signal.aborted) return;
    const cancel = this.setTimer(() => {
      this.timers.delete(kind);
      if (this.signal.aborted) return;
      this.timeout = new ModelTimeoutError(kind, ms);
      this.own.abort(this.timeout);
    }, ms);
    this.timers.set(kind, cancel);
  }

  stopTimer(kind: ModelTimeoutKind): void {
    this.timers.get(kind)?.();
    this.timers.delete(kind);
  }

  /** Like `promise`, but rejects as soon as the attempt is aborted or timed out. */
  race<T>(promise: Promise<T>): Promise<T> {
    return this.races.race(promise);
  }

  /**
   * What the attempt failed with, given what the inner provider threw: the caller's abort first
   * (an abort racing a timer is a cancellation, never a timeout), then this attempt's timeout
   * (whatever the inner provider made of the abort it caused), then `error` itself.
   */
  failure(error: unknown): unknown {
    if (this.parent?.aborted === true) return abortReason(this.parent);
    return this.timeout ?? error;
  }

  /** Clears the timers and the listener; aborts the child signal with `reason` when given. */
  close(reason?: Error): void {
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
    if (reason !== undefined && !this.signal.aborted) this.own.abort(reason);
    this.link.dispose();
    this.races.dispose();
  }
}
