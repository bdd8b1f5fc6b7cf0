/**
 * Servers authenticated by a static header (`"headers": {"Authorization": "Bearer …"}`).
 *
 * The transport sends the entry's headers on every request (POST, the GET event stream,
 * DELETE) through its `requestInit`. This module adds what a person needs around it: each
 * request and answer logged at debug level (the log redacts the token: start-up registers
 * every header value as a secret), and a refusal of the token turned into a typed error
 * that says whether the token is wrong, lacks a scope, or could be replaced by OAuth.
 *
 * @module
 */

import { extractWWWAuthenticateParams, type FetchLike } from "@modelcontextprotocol/client";
import type { HttpServerConfig } from "../config/types.ts";
import { BearerRejectedError } from "../errors.ts";
import { OAUTH_STEPS } from "../errors/oauth_steps.ts";
import { type Log, silentLog } from "../log/log.ts";

/** Options of {@linkcode bearerFetch}. */
export interface BearerFetchOptions {
  log?: Log;
  /** @default globalThis.fetch */
  base?: FetchLike;
  /**
   * A 401 is returned as it is, for a `headers_helper`'s wrapper above to run the helper
   * again (a 403 for a scope is still typed here). @default false
   */
  unauthorizedToCaller?: boolean;
}

/** Whether the entry authenticates with an `Authorization` header. */
export function hasAuthorizationHeader(server: HttpServerConfig): boolean {
  return Object.keys(server.headers).some((name) => name.toLowerCase() === "authorization");
}

/**
 * The transport's fetch for a header-authenticated server: logs every exchange at debug
 * level and throws {@linkcode BearerRejectedError} when the server refuses the token.
 */
export function bearerFetch(server: HttpServerConfig, options: BearerFetchOptions = {}): FetchLike {
  const log = options.log ?? silentLog;
  const base: FetchLike = options.base ?? ((input, init) => fetch(input, init));
  const origin = new URL(server.url).origin;
  const helper = options.unauthorizedToCaller ?? false;
  const checked = helper || hasAuthorizationHeader(server);
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = init?.method ?? (input instanceof Request ? input.method : "GET");
    log.debug(`HTTP ${method} ${url.href}`, {
      headers: Object.fromEntries(new Headers(init?.headers).entries()),
    });
    const response = await base(input, init);
    log.debug(`HTTP ${response.status} from ${method} ${url.href}`, {
      "www-authenticate": response.headers.get("www-authenticate") ?? undefined,
    });
    if (!checked || url.origin !== origin) return response;
    if (response.status !== 401 && response.status !== 403) return response;
    if (response.status === 401 && helper) return response;
    const challenge = extractWWWAuthenticateParams(response);
    if (response.status === 403 && challenge.error !== "insufficient_scope") return response;
    await response.body?.cancel();
    throw rejected(server.name, response.status, challenge);
  };
}

function rejected(
  server: string,
  status: number,
  challenge: ReturnType<typeof extractWWWAuthenticateParams>,
): BearerRejectedError {
  const detail = [challenge.error, challenge.errorDescription?.slice(0, 200)].filter(Boolean)
    .join(": ");
  if (status === 403) {
    return new BearerRejectedError(
      server,
      status,
      `the token in headers.Authorization lacks a permission the server requires` +
        (challenge.scope ? ` (scope "${challenge.scope}")` : "") + ` (HTTP 403 ${detail})`,
      OAUTH_STEPS.tokenScope(Boolean(challenge.resourceMetadataUrl)),
    );
  }
  return new BearerRejectedError(
    server,
    status,
    `the server refused the token in headers.Authorization (HTTP 401${
      detail ? ` ${detail}` : ""
    }); it is wrong, expired or revoked`,
    challenge.resourceMetadataUrl
      ? 'the server supports OAuth: replace "headers": {"Authorization": …} with ' +
        '"auth": {"method": "oauth"} and patchbay will log in and refresh tokens itself, ' +
        "or put a current token in the header (check the variable it comes from in .env)"
      : "put a current token in headers.Authorization (check the variable it comes from in " +
        ".env, then restart patchbay: .env is read at start-up)",
  );
}
