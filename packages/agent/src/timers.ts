/**
 * The one seam for time in modules that wait (a retry's delay, a command's grace period): they
 * take an optional `setTimer` and default to the real one, so tests drive them with a fake clock
 * (test/helpers/fake-clock.ts) instead of waiting.
 */

/** Calls `callback` after `ms`; the returned function cancels it. */
export type SetTimer = (callback: () => void, ms: number) => () => void;

export const realTimer: SetTimer = (callback, ms) => {
  const timer = setTimeout(callback, ms);
  return () => clearTimeout(timer);
};
