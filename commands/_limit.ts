/**
 * `sessions --limit`: its default and parser, apart from the `sessions` command so that
 * the command tree can be built without loading that command's work (memory, start-up).
 *
 * @module
 */

import { InvalidArgumentError } from "commander";

/** Sessions listed when neither `--limit` nor `--all` is given. */
export const DEFAULT_SESSION_LIMIT = 20;

/** `--limit` as a positive whole number (commander reports the error as usage). */
export function parseLimit(value: string): number {
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1) {
    throw new InvalidArgumentError("expected a whole number of at least 1 (or --all)");
  }
  return limit;
}
