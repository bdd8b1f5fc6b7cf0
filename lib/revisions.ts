/**
 * The names of the MCP protocol revisions, apart from the SDK: the configuration's
 * validation needs them, and reading a configuration (`config check`, start-up) must not
 * load the SDK. `tests/protocol/protocol_test.ts` checks {@linkcode LEGACY_REVISIONS} against the
 * SDK's own list, so an SDK upgrade that changes it fails there, not in the field.
 *
 * @module
 */

/** The stateless revision, negotiated with `server/discover`. */
export const MODERN_REVISION = "2026-07-28";

/**
 * 2025-era revisions the `initialize` handshake accepts, newest first: the SDK's
 * `SUPPORTED_PROTOCOL_VERSIONS` (@modelcontextprotocol/client 2.4.0).
 */
export const LEGACY_REVISIONS: readonly string[] = [
  "2025-11-25",
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  "2024-10-07",
];

/** Every revision a `protocol` setting may name, newest first. */
export const PROTOCOL_REVISIONS: readonly string[] = [MODERN_REVISION, ...LEGACY_REVISIONS];

/** The settings of `protocol` that are not a revision. */
export const PROTOCOL_MODES = ["auto", "legacy"] as const;

/** A revision's shape: a date. The modes ("auto", "legacy") are not revisions. */
const REVISION_DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Whether `revision` belongs to the stateless era (negotiated with `server/discover`).
 * Only a dated revision can: compared as strings, "legacy" and "auto" would sort after
 * every date.
 */
export function isModernRevision(revision: string): boolean {
  return REVISION_DATE.test(revision) && revision >= MODERN_REVISION;
}
