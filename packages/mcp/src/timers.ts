/**
 * Starts a timer that calls `callback` after `ms` milliseconds and returns a function that
 * cancels it. Injectable so that tests drive time (start-up and call timeouts, reconnect
 * backoff) themselves; the same shape as the engine's and the provider's.
 */
export type SetTimer = (callback: () => void, ms: number) => () => void;

/** Reads the global `setTimeout` at call time, so fake timers installed later still apply. */
export const defaultSetTimer: SetTimer = (callback, ms) => {
  const timer = setTimeout(callback, ms);
  return () => clearTimeout(timer);
};
