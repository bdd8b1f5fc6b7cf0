/**
 * The remedies of OAuth failures (`lib/oauth/`): the login and its callback, the metadata
 * and policy checks, credential sources, identity provider grants, and the stores of logins.
 * Part of the failure table (`lib/errors/failure_table.ts`), kept in a file of their own so
 * the table stays within the size of a file. Each step is one text for both surfaces, a
 * {@linkcode Remedy} when the interactive client's words name `/refresh`, or a function of
 * the values only known when it fails.
 *
 * @module
 */

import { perSurface, type Remedy, STEPS } from "./failure_table.ts";

/** The end of a remedy for a login failure only the server's operator can explain. */
const REPORT = "report the cause above to the server's operator";

/** How a login is retried: the interactive client can also reconnect with `/refresh`. */
const retry = (server: string): Remedy => ({
  repl: `retry (/refresh, or patchbay auth login ${server})`,
  script: `retry (patchbay auth login ${server})`,
});

/** The end of a remedy that only the server's operator can act on. */
const NO_OAUTH_UNTIL_FIXED = 'remove "auth" and send a token with headers';

/** Steps of the remedies of OAuth failures. */
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

  // The callback: the browser's answer on localhost (lib/oauth/callback.ts).
  /** What a browser's callback page says of a failure it has no words for. */
  seeTerminal: "see the terminal",
  /** No authorization response within `duration` at the callback on `port`. */
  callbackTimeout: (duration: string, port: number, server: string): Remedy =>
    perSurface`${
      "open the authorization URL shown (the browser may not have opened) and finish the " +
      `login within ${duration}; make sure nothing blocks connections to localhost:${port}`
    }; then ${retry(server)}`,
  /** An authorization response from another authorization server (RFC 9207), at the callback. */
  issuerRefused: "start the login again from patchbay; if it repeats, another authorization " +
    "server may be interfering: report it to the server's operator",
  /** An authorization response with neither a code nor an error. */
  noCode: (server: string): Remedy =>
    perSurface`${STEPS.retryLogin(server)}; if it repeats, report it to the server's operator`,
  /** Authorization denied in the browser (`access_denied`). */
  accessDenied: (server: string): Remedy => ({
    repl: `approve patchbay when the authorization page asks (retry with /refresh or ` +
      `patchbay auth login ${server}), or remove the server from servers_config.json`,
    script: `approve patchbay when the authorization page asks (retry with ` +
      `patchbay auth login ${server}), or remove the server from servers_config.json`,
  }),
  /** `invalid_scope` in the authorization response. */
  scopesInEntry: "check auth.scopes in the server entry against the scopes the server supports",
  /** Another error in the authorization response. */
  authorizationRefused: "retry the login; if it keeps failing, check auth.client_id and the " +
    "server's OAuth settings",
  /** The callback's port held by `holder` (a process described, or "the process using it"). */
  portBusy: (port: number, holder: string, server: string): Remedy =>
    perSurface`free port ${port}: stop ${holder} (the callback address is fixed), then ${
      retry(server)
    }`,

  // Metadata and policy (lib/oauth/policy.ts, endpoint_policy.ts, org_grants.ts).
  /** An authorization server that publishes no metadata. */
  noMetadata: `check the server's OAuth setup with its operator; until it is fixed, ` +
    NO_OAUTH_UNTIL_FIXED,
  /** An authorization server without PKCE S256. */
  enablePkce: `ask the server's operator to enable PKCE S256; until then ${NO_OAUTH_UNTIL_FIXED}`,
  /** No way to register: neither dynamic registration nor client ID metadata documents. */
  registerClient: (redirectUri: string): string =>
    `register patchbay with the service (redirect URI ${redirectUri}) and ` +
    'set "client_id" (and "client_secret" if one was issued) in the entry\'s "auth"',
  /** `auth.client_metadata_url` that is not an https URL with a path. */
  clientMetadataUrl: "point client_metadata_url at the https address of patchbay's client ID " +
    "metadata document, or remove it to use dynamic registration",
  /** An OAuth endpoint over plain http off this machine. */
  httpsEndpoint: "ask the server's operator to serve the authorization server over https; " +
    `until then ${NO_OAUTH_UNTIL_FIXED}`,
  /** An identity provider grant with no authorization server known to name. */
  publishMetadata: "check that the server publishes OAuth metadata (RFC 9728)",
  /** A field of the entry's "auth" a grant needs. */
  setAuthField: (field: string): string =>
    `set ${field} in the entry's "auth" (docs/authentication.md)`,

  // Credentials: a bearer token, a client's private key, a token from a file or a command.
  /** A bearer token refused with 403; `oauthOffered`: the server publishes OAuth metadata. */
  tokenScope: (oauthOffered: boolean): string =>
    "use a token that carries the required scope" +
    (oauthOffered
      ? ', or let patchbay obtain one: replace the header with "auth": {"method": "oauth"}'
      : ""),
  /** A private key that could not sign a client assertion. */
  privateKey: "give a PKCS#8 PEM (-----BEGIN PRIVATE KEY-----) or a private JWK, and set " +
    "auth.private_key_alg to the algorithm the key is for (RS256 for RSA, ES256 for " +
    "P-256, EdDSA for Ed25519)",
  /** A credential source (`field`) that gave nothing, or more than one token. */
  oneToken: (field: string): string => `check ${field}: it must hold or print only the token`,
  /** A credential file that cannot be read. */
  credentialFile: (file: string, field: string): string =>
    `check that the platform writes the token to ${file} (Kubernetes: a projected ` +
    `service-account token volume) and that you can read it, or fix ${field}`,
  /** A credential command that failed (`shown`: its command line). */
  credentialCommand: (shown: string, field: string): string =>
    `run \`${shown}\` yourself and fix what it reports, or fix ${field}`,

  // Identity provider grants (RFC 8693, lib/oauth/token_exchange.ts).
  /** The identity provider could not be reached. */
  idpUnreachable: "check your network connection and auth.idp's issuer or token_endpoint",
  /** `invalid_grant`: the ID token expired or is for another client. */
  idTokenExpired: "your ID token may have expired or be for another client (its audience must " +
    "be auth.idp.client_id): sign in again with your single sign-on tool",
  /** `invalid_client` or `unauthorized_client`. */
  idpClient: "check auth.idp.client_id and auth.idp.client_secret with your administrator",
  /** Another refusal of the exchange. */
  idpRefused: "ask your administrator whether your identity provider allows patchbay to reach " +
    "this server (enterprise-managed authorization)",
  /** An answer that is not an exchange's. */
  idpEndpoint: "check auth.idp's issuer or token_endpoint: it must be your identity provider's",

  // The stores of logins (lib/oauth/token_store.ts, redis_token_store.ts).
  /** A credentials file patchbay cannot read as one. */
  deleteFile: (path: string): string =>
    `delete the file (rm ${path}) and log in again; nothing else is stored in it`,
  /** A credentials file or folder the user cannot read or write. */
  fileAccess: (path: string): string =>
    `make ${path} readable and writable by your user ` +
    "(or set XDG_CONFIG_HOME to a writable folder)",
  /** A Redis key patchbay cannot read as credentials. */
  deleteKey: (key: string): string =>
    `delete the key (redis-cli DEL '${key}') and log in again; nothing else is stored in it`,
  /** A login neither Redis (`store`) nor the folder `dir` could keep. */
  loginInMemory: (store: string, dir: string, server: string): string =>
    `make ${store} reachable or ${dir} writable, then log in again ` +
    `(patchbay auth login ${server}): the login in memory is gone when this session ends`,
} as const;
