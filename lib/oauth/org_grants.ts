/**
 * The token requests of the organisation grants, as the SDK's `prepareTokenRequest` hook
 * (which makes its `auth()` ask for tokens without a browser, with the client
 * authentication and `resource` it adds itself):
 *
 * - `jwt_bearer` (workload identity federation, SEP-1933): the workload's JWT, read from
 *   `auth.assertion_file` or printed by `auth.assertion_command`, presented with RFC
 *   7523's grant.
 * - `token_exchange` (enterprise-managed authorization, SEP-990): the person's ID token
 *   (`auth.idp.subject_token_file` / `_command`) exchanged at the identity provider for an
 *   ID-JAG naming this server's authorization server and resource
 *   (lib/oauth/token_exchange.ts), then presented the same way.
 *
 * Neither is retried here on a refusal, nor does a refusal fall back to another grant: the
 * failure is reported as it is (the conformance suite checks both).
 *
 * @module
 */

import type { FetchLike } from "@modelcontextprotocol/client";
import type { OAuthSettings } from "../config/types.ts";
import { OAuthFailedError } from "../errors.ts";
import { OAUTH_STEPS } from "../errors/oauth_steps.ts";
import type { Redactor } from "../redact/redact.ts";
import { jwtBearerRequest } from "./client_auth.ts";
import { readCredential } from "./credential_source.ts";
import { exchangeForGrant } from "./token_exchange.ts";

/** Where the token request goes, as the SDK's discovery found it. */
export interface GrantTarget {
  /** The authorization server's issuer (the ID-JAG's audience). */
  authorizationServer?: string;
  /** The server's resource identifier. */
  resource?: string;
}

/** What {@linkcode organisationTokenRequest} needs. */
export interface OrganisationGrantContext {
  server: string;
  /** The MCP server's URL, the resource when its metadata names none. */
  serverUrl: URL;
  settings: OAuthSettings;
  /** What discovery found, read when the request is prepared. */
  target: () => GrantTarget;
  /** The identity provider's fetch (lib/oauth/token_exchange.ts `idpFetch`). */
  idpFetch: () => FetchLike;
  redactor?: Redactor;
}

/** The `prepareTokenRequest` hook of the entry's organisation grant. */
export function organisationTokenRequest(
  context: OrganisationGrantContext,
): (scope?: string) => Promise<URLSearchParams> {
  const { server, settings, redactor } = context;
  if (settings.grant === "jwt_bearer") {
    return async (scope) => {
      const source = missing(server, settings.assertion, "auth.assertion_file");
      const assertion = await readCredential(source, {
        server,
        what: "the workload's JWT",
        redactor,
      });
      return jwtBearerRequest(assertion, scope);
    };
  }
  return async (scope) => {
    const idp = settings.idp;
    const source = missing(server, idp?.subjectToken, "auth.idp.subject_token_file");
    const subjectToken = await readCredential(source, {
      server,
      what: "your ID token",
      redactor,
    });
    const target = context.target();
    if (!target.authorizationServer) {
      throw new OAuthFailedError(server, {
        reason: "the server's authorization server is not known yet (no metadata was " +
          "discovered), so no identity provider grant can name it",
        remedy: OAUTH_STEPS.publishMetadata,
      });
    }
    const grant = await exchangeForGrant({
      server,
      idp: idp!,
      subjectToken,
      audience: target.authorizationServer,
      resource: target.resource ?? resourceOf(context.serverUrl),
      scope,
      fetch: context.idpFetch(),
      redactor,
    });
    return jwtBearerRequest(grant, scope);
  };
}

/** The server's URL as a resource identifier (RFC 8707: no fragment). */
function resourceOf(url: URL): string {
  const resource = new URL(url);
  resource.hash = "";
  return resource.href;
}

/** The configured source; the loader makes sure it is there, so this is a guard. */
function missing<T>(server: string, value: T | undefined, field: string): T {
  if (value !== undefined) return value;
  throw new OAuthFailedError(server, {
    reason: `${field} is not set`,
    remedy: OAUTH_STEPS.setAuthField(field),
  });
}
