import { errorMessage } from '@claw/core';
import type { LeaseLossReason } from './errors.js';

/** Schedules `callback` after `ms`; returns a function that cancels it. */
export type SetTimer = (callback: () => void, ms: number) => () => void;

/** Reads the global `setTimeout` at call time, so fake timers installed later still apply. */
export const defaultSetTimer: SetTimer = (callback, ms) => {
  const timer = setTimeout(callback, ms);
  // A lease being kept never keeps the process alive on its own.
  timer.unref?.();
  return () => clearTimeout(timer);
};

/** Options of {@link LeaseKeeper}. */
export interface LeaseKeeperOptions {
  renewEveryMs: number;
  /** With no successful renewal for this long, the owner fences itself (half the lease). */
  fenceAfterMs: number;
  setTimer: SetTimer;
  /** Extends the lease; resolves false when the lease is no longer this owner's. */
  renew: () => Promise<boolean>;
  /** Called once, when the lease is lost; the keeper has stopped by then. */
  lost: (reason: LeaseLossReason, cause?: unknown) => void;
}

/**
 * Keeps one lease alive (SCALE-2): renews it every `renewEveryMs`, and fences the owner when no
 * renewal has succeeded for `fenceAfterMs` (half the lease), so that the owner stops its tools
 * before another instance can take over. The fence timer runs on its own: a renewal that hangs
 * (a database that stopped answering) cannot delay it.
 */
export class LeaseKeeper {
  private cancelRenewal: (() => void) | undefined;
  private cancelFence: (() => void) | undefined;
  private renewing = false;
  private stopped = false;
  private lastFailure: unknown;

  constructor(private readonly options: LeaseKeeperOptions) {}

  start(): void {
    this.armFence();
    this.scheduleRenewal();
  }

  stop(): void {
    this.stopped = true;
    this.cancelRenewal?.();
    this.cancelFence?.();
    this.cancelRenewal = undefined;
    this.cancelFence = undefined;
  }

  private armFence(): void {
    this.cancelFence?.();
    this.cancelFence = this.options.setTimer(() => {
      if (this.stopped) return;
      this.stop();
      this.options.lost('renewal_failed', this.lastFailure);
    }, this.options.fenceAfterMs);
  }

  private scheduleRenewal(): void {
    this.cancelRenewal = this.options.setTimer(() => {
      if (this.stopped) return;
      this.scheduleRenewal();
      if (this.renewing) return;
      this.renewing = true;
      this.options.renew().then(
        (stillOurs) => {
          this.renewing = false;
          if (this.stopped) return;
          if (!stillOurs) {
            this.stop();
            this.options.lost('taken_over');
            return;
          }
          this.lastFailure = undefined;
          this.armFence();
        },
        (error: unknown) => {
          this.renewing = false;
          this.lastFailure = new Error(`renewing the lease failed: ${errorMessage(error)}`, { cause: error });
        },
      );
    }, this.options.renewEveryMs);
  }
}
