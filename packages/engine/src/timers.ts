/**
 * Starts a timer that calls `callback` after `ms` milliseconds and returns a function that
 * cancels it. Injectable (`EngineOptions.setTimer`) so that tests drive time themselves; the same
 * shape as `@claw/provider`'s, so one function can serve both.
 */
export type SetTimer = (callback: () => void, ms: number) => () => void;

/** Reads the global `setTimeout` at call time, so fake timers installed later still apply. */
export const defaultSetTimer: SetTimer = (callback, ms) => {
  const timer = setTimeout(callback, ms);
  return () => clearTimeout(timer);
};
