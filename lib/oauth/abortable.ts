/**
 * Waiting on shared work without owning it: the caller stops waiting when its signal
 * aborts, while the work (a login other requests also wait for) carries on.
 *
 * @module
 */

import { CancelledError } from "../errors.ts";

/** `promise`, or a `CancelledError` as soon as `signal` aborts. */
export function abortable<T>(promise: Promise<T>, signal?: AbortSignal, what?: string): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(new CancelledError(what));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new CancelledError(what));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
