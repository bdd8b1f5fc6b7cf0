/**
 * OAuth failures as errors a person can act on: the SDK's error classes, OAuth error
 * responses and network failures become `OAuthFailedError`s with the cause in plain words
 * and a remedy. Values an attacker controls in a mix-up (the `iss` received, the callback's
 * error text) are never repeated.
 *
 * @module
 */

import {
  AuthorizationServerMismatchError,
  InsecureTokenEndpointError,
  IssuerMismatchError,
  OAuthError,
  RegistrationRejectedError,
} from "@modelcontextprotocol/client";
import { messageOf, OAuthFailedError, PatchbayError } from "../errors.ts";
import { describeFetchError } from "./probe.ts";

/** Where the failure happened, for the messages. */
export interface FailureContext {
  server: string;
  serverUrl: URL;
  redirectUri: string;
}

/** Any failure of the SDK's auth code, typed; abort errors and PatchbayErrors pass through. */
export function typedOAuthFailure(error: unknown, context: FailureContext): unknown {
  if (error instanceof PatchbayError) return error;
  if (error instanceof DOMException && error.name === "AbortError") return error;
  const { server } = context;
  const fail = (
    reason: string,
    remedy = `retry the login (/refresh, or patchbay auth login ${server}); if it keeps ` +
      "failing, report the cause above to the server's operator",
  ) => new OAuthFailedError(server, { reason, remedy, cause: error });
  const registerByHand = `register patchbay with the service (redirect URI ` +
    `${context.redirectUri}) and set "client_id" (and "client_secret") in the entry's "auth"`;

  if (error instanceof IssuerMismatchError) {
    return error.kind === "metadata"
      ? fail(
        `the authorization server's metadata names issuer ${JSON.stringify(error.received)}, ` +
          `not ${JSON.stringify(error.expected)} where it was fetched (RFC 8414 §3.3); ` +
          "patchbay refuses metadata whose issuer does not match",
        "report the mismatch to the server's operator; patchbay will not send credentials to it",
      )
      : fail(
        "the authorization response did not come from the expected authorization server " +
          "(RFC 9207 issuer check failed)",
        "start the login again; if it repeats, report it to the server's operator",
      );
  }
  if (error instanceof RegistrationRejectedError) {
    return fail(
      `dynamic client registration was refused (HTTP ${error.status}: ` +
        `${error.body.slice(0, 200)})`,
      registerByHand,
    );
  }
  if (error instanceof InsecureTokenEndpointError) {
    return fail(
      `the token endpoint ${error.tokenEndpoint} is not https; patchbay does not send ` +
        "credentials over plain HTTP (except to loopback)",
      "ask the server's operator to serve its authorization server over https",
    );
  }
  if (error instanceof AuthorizationServerMismatchError) {
    return fail(
      "the server now names a different authorization server than the one the stored " +
        "credentials belong to",
      `run patchbay auth logout ${server}, then log in again`,
    );
  }
  if (error instanceof OAuthError) {
    const remedy = error.code === "invalid_client" || error.code === "unauthorized_client"
      ? "check auth.client_id and auth.client_secret in the server entry"
      : error.code === "invalid_scope"
      ? "check auth.scopes against the scopes the server supports"
      : undefined;
    return fail(`the authorization server answered ${error.code}: ${error.message}`, remedy);
  }
  if (error instanceof TypeError) {
    return fail(
      `the authorization server could not be reached: ${describeFetchError(error)}`,
      "check your network connection and that the server's authorization server is up",
    );
  }
  const message = messageOf(error);
  if (error instanceof SyntaxError || (error as Error)?.name?.endsWith("ZodError")) {
    // A catch-all web page (or broken JSON) where OAuth metadata should be.
    return fail(
      `the OAuth metadata published for ${context.serverUrl.origin} is not valid metadata ` +
        `(${message.split("\n")[0].slice(0, 160)})`,
      'if the server does not support OAuth, remove "auth" and send a token with headers; ' +
        "otherwise report the broken metadata to the server's operator",
    );
  }
  if (/^Protected resource .* does not match expected/.test(message)) {
    return fail(
      `${message}: the server's protected-resource metadata (RFC 9728) is for another ` +
        "address, so patchbay refuses to request tokens for it",
      'check "url" in servers_config.json; if it is right, report it to the server\'s operator',
    );
  }
  return fail(message);
}

/** A 403 `insufficient_scope` that another login cannot or did not fix. */
export function insufficientScopeError(
  server: string,
  required?: string,
  granted?: string,
): OAuthFailedError {
  return new OAuthFailedError(server, {
    reason: `the server requires scope "${required ?? "(unspecified)"}" for this request` +
      (granted !== undefined ? `, but the authorization server granted "${granted}"` : "") +
      " (403 insufficient_scope)",
    remedy: "approve every permission the authorization page asks for, or ask the server's " +
      "operator to grant your account the scope; then retry the request",
  });
}

/** A 401 for tokens that were just obtained. */
export function rejectedAfterLoginError(
  server: string,
  challenge: { error?: string; errorDescription?: string },
): OAuthFailedError {
  return new OAuthFailedError(server, {
    reason: "the server refused the tokens it was just given (HTTP 401" +
      (challenge.error ? ` ${challenge.error}` : "") +
      (challenge.errorDescription ? `: ${challenge.errorDescription.slice(0, 200)}` : "") +
      ")",
    remedy: `run patchbay auth logout ${server} and log in again; if it persists, the server ` +
      "and its authorization server disagree about the token: report it to the operator",
  });
}
