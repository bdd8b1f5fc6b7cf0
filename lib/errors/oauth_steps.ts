/**
 * The remedies of OAuth login failures (`lib/oauth/login_errors.ts`): part of the failure
 * table (`lib/errors/failure_table.ts`), kept in a file of their own so the table stays
 * within the size of a file. Each step is one text for both surfaces (none names a slash
 * command), or a function of the values only known when it fails.
 *
 * @module
 */

/** The end of a remedy for a login failure only the server's operator can explain. */
const REPORT = "report the cause above to the server's operator";

/** Steps of the remedies of OAuth login failures. */
export const OAUTH_STEPS = {
  /** The end of a remedy for a login failure only the server's operator can explain. */
  report: REPORT,
  /** An OAuth answer past patchbay's bound, from the authorization server at `origin`. */
  answerTooLarge: (origin: string): string =>
    `report it to the operator of ${origin}: no metadata, registration or token ` +
    "answer is that large",
  /** A token past patchbay's bound, issued by `issuer`. */
  tokenTooLarge: (issuer: string, server: string): string =>
    `report it to the operator of ${issuer}; then log in again ` +
    `(patchbay auth login ${server})`,
  /** Metadata whose issuer does not match where it was fetched (RFC 8414 §3.3). */
  issuerMismatch:
    "report the mismatch to the server's operator; patchbay will not send credentials to it",
  /** An authorization response from another authorization server (RFC 9207). */
  responseIssuerMismatch:
    "start the login again; if it repeats, report it to the server's operator",
  /** Dynamic client registration refused: register by hand. */
  registerByHand: (redirectUri: string): string =>
    `register patchbay with the service (redirect URI ` +
    `${redirectUri}) and set "client_id" (and "client_secret") in the entry's "auth"`,
  /** A token endpoint over plain HTTP. */
  insecureTokenEndpoint: "ask the server's operator to serve its authorization server over https",
  /** Stored credentials that belong to another authorization server. */
  logoutThenLogin: (server: string): string =>
    `run patchbay auth logout ${server}, then log in again`,
  /** `invalid_scope`. */
  invalidScope: "check auth.scopes against the scopes the server supports",
  /** `use_dpop_nonce` again after one retry with the nonce given. */
  dpopNonceAgain: "the authorization server asked for a new DPoP nonce again after patchbay " +
    "retried once with the one it gave: report it to the server's operator",
  /** `invalid_dpop_proof`. */
  invalidDpopProof: `if the service does not support DPoP, set "dpop": false in the entry's ` +
    `"auth"; otherwise report it to the server's operator`,
  /** The authorization server could not be reached. */
  unreachable: "check your network connection and that the server's authorization server is up",
  /** Broken or invalid OAuth metadata. */
  invalidMetadata: 'if the server does not support OAuth, remove "auth" and send a token with ' +
    "headers; otherwise report the broken metadata to the server's operator",
  /** Protected-resource metadata (RFC 9728) for another address. */
  resourceMismatch:
    'check "url" in servers_config.json; if it is right, report it to the server\'s operator',
  /** A DPoP nonce loop (RFC 9449 §9). */
  dpopNonceLoop: "retry once; if it repeats, the server does not accept its own nonces: report " +
    `it to the server's operator (until then, "dpop": false in the entry's "auth" avoids ` +
    "DPoP if the server allows bearer tokens)",
  /** A 403 `insufficient_scope` another login cannot or did not fix. */
  insufficientScope: "approve every permission the authorization page asks for, or ask the " +
    "server's operator to grant your account the scope; then retry the request",
  /** A 401 for tokens just obtained. */
  rejectedAfterLogin: (server: string): string =>
    `run patchbay auth logout ${server} and log in again; if it persists, the server ` +
    "and its authorization server disagree about the token: report it to the operator",
} as const;
