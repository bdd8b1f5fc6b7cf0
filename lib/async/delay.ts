/**
 * Waiting a while. Modelled on std's `async/delay`: the wait rejects with the signal's
 * reason when the signal aborts first, so a cancelled wait never looks like a finished one.
 *
 * @module
 */

import { setTimer } from "./timers.ts";

/** Options for {@linkcode delay}. */
export interface DelayOptions {
  /** Ends the wait early, rejecting with `signal.reason`. */
  signal?: AbortSignal;
}

/**
 * Resolves after `ms` (bounded by {@linkcode setTimer}'s guard, so an overflowing delay
 * waits the longest a timer can hold instead of firing at once), or rejects with the
 * signal's reason when it aborts first.
 */
export function delay(ms: number, options: DelayOptions = {}): Promise<void> {
  const { signal } = options;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimer(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
