/**
 * Enterprise-managed authorization, the identity provider's half (RFC 8693 token exchange,
 * SEP-990): the person's ID token is exchanged at the organisation's identity provider for
 * an identity assertion JWT authorization grant (ID-JAG) naming the MCP server's
 * authorization server (`audience`) and the server (`resource`). The grant is then
 * presented with the JWT bearer grant (lib/oauth/org_grants.ts). The SDK's
 * `requestJwtAuthorizationGrant` (after `discoverAndRequestJwtAuthGrant`'s metadata
 * discovery when only the issuer is configured) makes the request, through a fetch that
 * obeys an endpoint policy of its own: the identity provider's configured address is
 * trusted, addresses its metadata names are checked against it.
 *
 * @module
 */

import {
  discoverAndRequestJwtAuthGrant,
  type FetchLike,
  requestJwtAuthorizationGrant,
} from "@modelcontextprotocol/client";
import type { IdpSettings } from "../config/types.ts";
import { denoPermissionFlag } from "../deno_permission/denial.ts";
import { OAuthFailedError, PatchbayError } from "../errors.ts";
import { OAUTH_STEPS } from "../errors/oauth_steps.ts";
import type { Redactor } from "../redact/redact.ts";
import { describeFetchError } from "./challenge_probe.ts";
import { EndpointPolicy } from "./endpoint_policy.ts";
import { guardedFetch } from "./guarded_fetch.ts";
import type { Resolver } from "./host_location.ts";

/** What {@linkcode exchangeForGrant} needs. */
export interface ExchangeRequest {
  server: string;
  idp: IdpSettings;
  /** The person's ID token (`subject_token`). */
  subjectToken: string;
  /** The issuer of the MCP server's authorization server. */
  audience: string;
  /** The MCP server's resource identifier (RFC 9728). */
  resource: string;
  scope?: string;
  /** The identity provider's fetch, from {@linkcode idpFetch}. */
  fetch: FetchLike;
  redactor?: Redactor;
}

/** `base` behind an endpoint policy of the identity provider's own. */
export function idpFetch(
  server: string,
  idp: IdpSettings,
  base: FetchLike,
  options: { allowInternalHosts?: readonly string[]; resolve?: Resolver } = {},
): FetchLike {
  const configured = idp.issuer ?? idp.tokenEndpoint ?? "https://idp.invalid/";
  const policy = new EndpointPolicy({
    server,
    serverUrl: configured,
    allowInternalHosts: options.allowInternalHosts,
    resolve: options.resolve,
  });
  return guardedFetch(base, {
    policy,
    roleOf: (url) => ({
      name: url.href === idp.tokenEndpoint ? "auth.idp.token_endpoint" : "address",
      source: "of the identity provider",
      credentials: url.pathname !== "/" && !url.pathname.startsWith("/.well-known/"),
    }),
  });
}

/** The ID-JAG the identity provider issues for this server; registered as a secret. */
export async function exchangeForGrant(request: ExchangeRequest): Promise<string> {
  const { idp, server } = request;
  const where = idp.tokenEndpoint ?? idp.issuer ?? "the identity provider";
  const options = {
    audience: request.audience,
    resource: request.resource,
    idToken: request.subjectToken,
    clientId: idp.clientId ?? "",
    clientSecret: idp.clientSecret,
    scope: request.scope,
    fetchFn: request.fetch,
  };
  try {
    const result = idp.tokenEndpoint
      ? await requestJwtAuthorizationGrant({ ...options, tokenEndpoint: idp.tokenEndpoint })
      : await discoverAndRequestJwtAuthGrant({ ...options, idpUrl: idp.issuer! });
    request.redactor?.addSecret(result.jwtAuthGrant);
    return result.jwtAuthGrant;
  } catch (error) {
    if (error instanceof PatchbayError || denoPermissionFlag(error)) throw error;
    throw exchangeFailure(server, where, error);
  }
}

/** A failed exchange in the one voice of `OAuth authentication failed`. */
function exchangeFailure(server: string, where: string, error: unknown): OAuthFailedError {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof TypeError && !/Invalid URL/i.test(message)) {
    return new OAuthFailedError(server, {
      reason: `the identity provider at ${where} could not be reached: ` +
        describeFetchError(error),
      remedy: OAUTH_STEPS.idpUnreachable,
      cause: error,
    });
  }
  const refused = /^Token exchange failed: (\w+)/.exec(message)?.[1];
  return new OAuthFailedError(server, {
    reason: `the identity provider at ${where} did not exchange your ID token for a grant ` +
      `for this server (RFC 8693): ${message.slice(0, 300)}`,
    remedy: refused === "invalid_grant"
      ? OAUTH_STEPS.idTokenExpired
      : refused === "invalid_client" || refused === "unauthorized_client"
      ? OAUTH_STEPS.idpClient
      : refused
      ? OAUTH_STEPS.idpRefused
      : OAUTH_STEPS.idpEndpoint,
    cause: error,
  });
}
