/**
 * Walking what an error wraps: fetch, the SDKs and node:net wrap the runtime's error in
 * their own, so the useful one is often a few `cause`s (or an `AggregateError`) deep.
 *
 * @module
 */

/** How deep {@linkcode causeChain} follows `cause` chains (they can be cyclic). */
const CAUSE_DEPTH_LIMIT = 8;

/** How many errors {@linkcode causeChain} returns at most (aggregates can be wide). */
const CAUSE_COUNT_LIMIT = 32;

/**
 * An error and everything behind it, outermost first: its `cause` chain, and the errors an
 * `AggregateError` gathered (fetch, the SDKs and node:net wrap the runtime's error in their
 * own). The one walker of cause chains: bounded in depth and count, and safe on cycles.
 */
export function causeChain(error: unknown): unknown[] {
  const found: unknown[] = [];
  const seen = new Set<unknown>();
  const visit = (current: unknown, depth: number) => {
    if (current === undefined || current === null || depth > CAUSE_DEPTH_LIMIT) return;
    if (seen.has(current) || found.length >= CAUSE_COUNT_LIMIT) return;
    seen.add(current);
    found.push(current);
    if (current instanceof AggregateError) {
      for (const inner of current.errors) visit(inner, depth + 1);
    }
    if (typeof current === "object") visit((current as { cause?: unknown }).cause, depth + 1);
  };
  visit(error, 0);
  return found;
}
