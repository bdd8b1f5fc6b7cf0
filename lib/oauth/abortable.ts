/**
 * Waiting on shared work without owning it: the caller stops waiting when its signal
 * aborts, while the work (a login other requests also wait for) carries on. OAuth's reading
 * of `lib/async/abortable.ts`: the wait ends in a `CancelledError` naming what was waited on.
 *
 * @module
 */

import { abortable as untilAborted } from "../async/abortable.ts";
import { CancelledError } from "../errors.ts";

/** `promise`, or a `CancelledError` as soon as `signal` aborts. */
export function abortable<T>(promise: Promise<T>, signal?: AbortSignal, what?: string): Promise<T> {
  return untilAborted(promise, signal, () => new CancelledError(what));
}
