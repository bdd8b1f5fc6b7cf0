/**
 * `sessions --limit`: its default and parser, apart from the `sessions` command so that
 * the command tree can be built without loading that command's work (memory, start-up), and
 * without commander, which `sessions` read by the quick reader does not load.
 *
 * @module
 */

/** Sessions listed when neither `--limit` nor `--all` is given. */
export const DEFAULT_SESSION_LIMIT = 20;

/**
 * `--limit` as a positive whole number; otherwise throws `usageError(message)` (commander's
 * `InvalidArgumentError`, which it reports as usage).
 */
export function parseLimit(value: string, usageError: (message: string) => Error): number {
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1) {
    throw usageError("expected a whole number of at least 1 (or --all)");
  }
  return limit;
}
