/**
 * The list of error codes (`lib/errors/error_codes.ts`) and the rows of the failure table
 * cannot drift apart: every code is the code of a row, or listed here as one no row has
 * (with why); a code shared by several rows is listed as such; and the network problems
 * each name a row.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { type FailureKind, NET_ROWS, ROWS } from "../../lib/errors/failure_table.ts";
import type { ErrorCode } from "../../lib/errors/error_codes.ts";

/** The codes of `ErrorCode`, read from its declaration (a type has no value to list). */
async function errorCodes(): Promise<string[]> {
  const source = await Deno.readTextFile(
    join(import.meta.dirname!, "../../lib/errors/error_codes.ts"),
  );
  const union = source.slice(source.indexOf("export type ErrorCode"));
  return [...union.slice(0, union.indexOf(";")).matchAll(/\|\s*"(\w+)"/g)].map((m) => m[1]);
}

/**
 * Codes no row of the table has: their typed errors carry the words of their own case
 * (a usage mistake, a cancellation, a server's own error answer, …), not a row's.
 */
const ROWLESS: readonly ErrorCode[] = [
  "server_unavailable",
  "connection_closed",
  "server_request_failed",
  "config_not_found",
  "tool_declined",
  "deno_permission",
  "store_failed",
  "session_not_found",
  "usage",
  "cancelled",
  "limit_reached",
  "provider_error",
  "sampling_rejected",
  "internal",
];

/**
 * Codes several rows share: one message, several causes and remedies (the rows of
 * `Session terminated`; an untrusted certificate reads as a network failure).
 */
const SHARED: Readonly<Partial<Record<ErrorCode, readonly FailureKind[]>>> = {
  server_connect_failed: [
    "wrong_transport",
    "oauth_unsupported",
    "not_running",
    "wrong_address",
    "answer_too_large",
    "untrusted_certificate",
  ],
  network: ["network", "untrusted_certificate"],
};

const rowsOf = (code: string) =>
  (Object.keys(ROWS) as FailureKind[]).filter((kind) =>
    (ROWS[kind].codes as readonly string[]).includes(code)
  );

Deno.test("error codes: each is a row's, or listed as row-less, never both", async () => {
  const codes = await errorCodes();
  assert.ok(codes.length >= 30, `only ${codes.length} codes read from error_codes.ts`);
  for (const code of codes) {
    const rows = rowsOf(code);
    const rowless = (ROWLESS as readonly string[]).includes(code);
    assert.ok(rows.length > 0 || rowless, `${code}: in no row and not listed as row-less`);
    assert.ok(!(rows.length > 0 && rowless), `${code}: listed as row-less but in ${rows}`);
  }
  for (const code of ROWLESS) assert.ok(codes.includes(code), `${code}: not an ErrorCode`);
});

Deno.test("error codes: a code in several rows is listed with exactly those rows", async () => {
  for (const code of await errorCodes()) {
    const rows = rowsOf(code);
    if (rows.length > 1 || code in SHARED) {
      assert.deepEqual(rows, SHARED[code as ErrorCode], `${code}: shared by ${rows}`);
    }
  }
});

Deno.test("error codes: every network problem names a row with a network code", () => {
  for (const [problem, { kind }] of Object.entries(NET_ROWS)) {
    assert.ok(kind in ROWS, `${problem}: no row ${kind}`);
    const codes = ROWS[kind].codes as readonly ErrorCode[];
    assert.ok(
      codes.includes("network") || codes.includes("timeout"),
      `${problem}: row ${kind} has codes ${codes}`,
    );
  }
});
