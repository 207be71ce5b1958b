import type { SetTimer } from '@claw/core';

/**
 * `setTimeout`, read when called (fake timers installed later still apply), and unref'd: the timer
 * of background work (a retry of a failed write, an idle timeout, a heartbeat) is no reason for
 * the process to stay.
 */
export const unrefSetTimer: SetTimer = (callback, ms) => {
  const timer = setTimeout(callback, ms);
  timer.unref();
  return () => clearTimeout(timer);
};
