/**
 * The remedies of a failed protocol negotiation with a server (`lib/protocol.ts`): which
 * `"protocol"` to set in its entry. Part of the failure table
 * (`lib/errors/failure_table.ts`), kept in a file of their own so the table stays within
 * the size of a file. Each is one text for both surfaces, or a function of the revisions
 * only known when it fails.
 *
 * @module
 */

/** Steps of the remedies of a failed protocol negotiation. */
export const PROTOCOL_STEPS = {
  /** A revision the server supports: pin it (`field`: the entry's setting now). */
  pin: (revision: string, field: string): string =>
    `set "protocol": "${revision}" in the server entry (it has ${field})`,
  /** The server supports only revisions newer than patchbay knows. */
  update: "the server speaks only revisions newer than this patchbay knows: update patchbay, " +
    "or ask the server's operators to keep an older revision",
  /** The server answered initialize with a modern revision: negotiate `modern` instead. */
  negotiate: (modern: string): string =>
    `set "protocol": "auto" (or remove it) so that patchbay negotiates ${modern} with ` +
    "server/discover",
  /** The server answered with a 2025-era revision patchbay knows. */
  pinAnswered: (answered: string): string =>
    `set "protocol": "${answered}", or "legacy" to accept any 2025-era revision`,
  /** The server answered with a revision patchbay does not know. */
  unknownRevision: (answered: string): string =>
    `the server speaks a revision patchbay does not know (${answered}); check the ` +
    "server's documentation, or update patchbay",
  /** The server did not offer the pinned revision in answer to server/discover. */
  fallBack: 'set "protocol": "auto" (or remove it) to fall back to the 2025 handshake, or ' +
    '"legacy"',
} as const;
