/**
 * Waiting with a bound. Modelled on std's `async/deadline`; the three shapes patchbay needs
 * differ in what the end of the bound means, so each has its own name:
 *
 * - {@linkcode deadline}: running out of time is a failure (rejects with `error()`).
 * - {@linkcode valueWithin}: running out of time is an answer (`undefined`), as when a
 *   best-effort probe or a polite `QUIT` may go unanswered.
 * - {@linkcode settlesWithin}: only whether the work ended in time, not counting the time a
 *   server waited on patchbay ({@linkcode LoginClock}).
 *
 * Every timer goes through `lib/async/timers.ts`, the one guard for delays a timer cannot hold.
 *
 * @module
 */

import { type LoginClock, startDeadline } from "./wait_clock.ts";
import { setTimer } from "./timers.ts";

type Timer = ReturnType<typeof setTimeout>;

/** `promise`, or a rejection with `error()` once `ms` have passed; its timer is always cleared. */
export async function deadline<T>(
  promise: Promise<T>,
  ms: number,
  error: () => Error = () => new Error(`no answer within ${ms / 1000} s`),
): Promise<T> {
  let timer: Timer | undefined;
  const timeout = new Promise<never>((_, reject) => timer = setTimer(() => reject(error()), ms));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The promise's value, or `undefined` once `ms` passed; its timer is always cleared. */
export async function valueWithin<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: Timer | undefined;
  const timeout = new Promise<undefined>((resolve) =>
    timer = setTimer(() => resolve(undefined), ms)
  );
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * True when `promise` settles (either way) within `ms`, not counting the time `clock`
 * spent in logins.
 */
export async function settlesWithin(
  promise: Promise<unknown>,
  ms: number,
  clock?: LoginClock,
): Promise<boolean> {
  let cancel: (() => void) | undefined;
  const timeout = new Promise<false>((resolve) => {
    cancel = startDeadline(ms, () => resolve(false), clock);
  });
  try {
    return await Promise.race([promise.then(() => true, () => true), timeout]);
  } finally {
    cancel?.();
  }
}
