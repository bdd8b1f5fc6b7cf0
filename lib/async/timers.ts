/**
 * Delays that are safe to hand to a timer.
 *
 * `setTimeout` (and `AbortSignal.timeout`) keeps their delay in a signed 32-bit number of
 * milliseconds: a longer delay does not wait longer, it fires after 1 ms (Node prints a
 * `TimeoutOverflowWarning`), so "wait 35 days" becomes "fail now", and a non-number becomes
 * 0. Every delay that configuration or a server can influence goes through
 * {@linkcode timerDelay} before it reaches a timer; the configuration schema bounds every
 * duration far below this limit as well (`MAX_DURATION_SECONDS`), so the clamp is the second
 * line of defence, not the way a long wait is normally expressed.
 *
 * @module
 */

/** The longest delay a timer can hold: 2^31 - 1 ms, about 24.8 days. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * `ms` as a delay a timer honours: negative becomes 0, anything longer than
 * {@linkcode MAX_TIMER_MS} (`Infinity` included) becomes that (a wait no session outlives),
 * never a delay that wraps around into "now". `NaN` is a bug in the caller and throws,
 * rather than turning into an instant timeout that would be reported as the server's fault.
 */
export function timerDelay(ms: number): number {
  if (Number.isNaN(ms)) throw new RangeError("a timer delay is NaN");
  return Math.min(Math.max(0, ms), MAX_TIMER_MS);
}

/** `setTimeout(callback, timerDelay(ms))`. */
export function setTimer(callback: () => void, ms: number): ReturnType<typeof setTimeout> {
  return setTimeout(callback, timerDelay(ms));
}
