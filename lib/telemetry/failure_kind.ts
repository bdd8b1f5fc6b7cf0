/**
 * Which row of the failure table (`lib/failure_table.ts`) an error belongs to, so failures
 * are counted by the same kinds a person reads them by (`patchbay.failure.kind`). A typed
 * error names its row through its `code`; where several rows share a code (the four
 * `Session terminated` rows), the row is the one whose remedy it carries.
 *
 * @module
 */

import { PatchbayError } from "../errors.ts";
import type { ErrorCode } from "../errors/error_codes.ts";
import { type FailureKind, ROWS } from "../errors/failure_table.ts";

/** The value of `patchbay.failure.kind` for an error of no row (a bug, a usage mistake). */
export const NO_ROW = "other";

const KINDS = Object.keys(ROWS) as FailureKind[];

/**
 * The row of `error`, or {@linkcode NO_ROW}: the one row of its code; where rows share the
 * code, the row whose remedy it gives (diagnoses extend a row's remedy with particulars).
 */
export function failureKind(error: unknown): FailureKind | typeof NO_ROW {
  if (!(error instanceof PatchbayError)) return NO_ROW;
  const rows = KINDS.filter((kind) => (ROWS[kind].codes as readonly string[]).includes(error.code));
  if (rows.length === 1) return rows[0];
  const remedy = error.remedies.repl;
  const byRemedy = KINDS.filter((kind) => remedy.startsWith(ROWS[kind].remedy.repl))
    .sort((a, b) => ROWS[b].remedy.repl.length - ROWS[a].remedy.repl.length);
  return byRemedy[0] ?? FALLBACK[error.code] ?? NO_ROW;
}

/**
 * The row of a code whose diagnosis gives a remedy of its own (a stdio command that is not
 * found or exits before the handshake): the server could not be brought up.
 */
const FALLBACK: Partial<Record<ErrorCode, FailureKind>> = {
  server_connect_failed: "not_running",
};

/**
 * `error.type` of a failure: its stable code (`tool_timeout`, `network`, …), else the
 * name of what was thrown.
 */
export function errorType(error: unknown): string {
  if (error instanceof PatchbayError) return error.code;
  if (error instanceof Error) return error.name;
  return "_OTHER";
}
