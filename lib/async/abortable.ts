/**
 * Stopping to wait without stopping the work. Modelled on std's `async/abortable`: the
 * returned promise rejects as soon as the signal aborts, while the work itself goes on (a
 * login other requests share, a refresh the person asked for). The work is told through its
 * own signal, if it takes one; this only ends the wait.
 *
 * @module
 */

/**
 * `promise`, or a rejection as soon as `signal` aborts: with `reason()` when given, else
 * with `signal.reason`. Without a signal, `promise` itself. The abort listener is removed
 * once `promise` settles.
 */
export function abortable<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  reason: () => unknown = () => signal?.reason,
): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(reason());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(reason());
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
