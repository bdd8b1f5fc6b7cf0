/**
 * Waiting on shared work without owning it: the caller stops waiting when its signal
 * aborts, while the work (a login other requests also wait for) carries on.
 *
 * @module
 */

import { CancelledError } from "../errors.ts";
import { untilAborted } from "../transports/timing.ts";

/** `promise`, or a `CancelledError` as soon as `signal` aborts. */
export function abortable<T>(promise: Promise<T>, signal?: AbortSignal, what?: string): Promise<T> {
  return untilAborted(promise, signal, () => new CancelledError(what));
}
