/**
 * Waiting with a bound: the few timing helpers the transports and the connection manager
 * share.
 *
 * @module
 */

import { type LoginClock, startDeadline } from "../deadline.ts";
import { setTimer } from "../timers.ts";

type Timer = ReturnType<typeof setTimeout>;

/** Resolves after `ms`; early (without error) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer: Timer = setTimer(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** `promise`, or a rejection with `reason()` as soon as `signal` aborts. */
export function untilAborted<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  reason: () => unknown,
): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(reason());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(reason());
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
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

/** `promise`, or a rejection with `error()` once `ms` have passed. */
export async function withTimeout<T>(
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
