/**
 * How patchbay obtains tokens for an entry and authenticates at the token endpoint, as the
 * SDK hooks it reads: the `client_credentials` grant's token request
 * (`prepareTokenRequest`, no browser), `private_key_jwt` client authentication
 * (`addClientAuthentication`, with the SDK's signer), and the client metadata registered
 * for either.
 *
 * @module
 */

import {
  type AddClientAuthentication,
  createPrivateKeyJwtAuth,
  type OAuthClientMetadata,
} from "@modelcontextprotocol/client";
import type { OAuthGrant, OAuthSettings } from "../config/types.ts";
import { DEFAULTS } from "../defaults.ts";
import { OAuthFailedError } from "../errors.ts";
import { OAUTH_STEPS } from "../errors/oauth_steps.ts";
import type { Redactor } from "../redact/redact.ts";
import { VERSION } from "../version.ts";
import { privateKeySecrets } from "./private_key.ts";

/** How tokens are obtained. */
export type Grant = OAuthGrant;

/** RFC 7523's grant type: a JWT presented for an access token. */
export const JWT_BEARER_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/** Whether `grant` logs a person in in the browser (the others need no callback). */
export function usesBrowser(grant: Grant): boolean {
  return grant === "authorization_code";
}

/** How the client authenticates at the token endpoint. */
export type ClientAuthentication = "private_key_jwt" | "client_secret_basic" | "none";

/** The entry's grant. @default DEFAULTS.oauth.grant */
export function grantOf(settings: OAuthSettings): Grant {
  return settings.grant ?? DEFAULTS.oauth.grant;
}

/** The client authentication the entry's credentials call for. */
export function clientAuthenticationOf(settings: OAuthSettings): ClientAuthentication {
  return settings.privateKey !== undefined
    ? "private_key_jwt"
    : settings.clientSecret !== undefined
    ? "client_secret_basic"
    : "none";
}

/** The scopes of `auth.scopes`, space-separated; `undefined` when none are set. */
export function configuredScope(settings: OAuthSettings): string | undefined {
  const scopes = settings.scopes;
  return scopes && scopes.length > 0 ? scopes.join(" ") : undefined;
}

/** The client metadata registered for the entry (`redirectUri`: the callback's). */
export function clientMetadataFor(
  settings: OAuthSettings,
  redirectUri: string,
): OAuthClientMetadata {
  const grant = grantOf(settings);
  const browser = usesBrowser(grant);
  return {
    client_name: "patchbay",
    redirect_uris: browser ? [redirectUri] : [],
    grant_types: browser
      ? ["authorization_code", "refresh_token"]
      : grant === "client_credentials"
      ? ["client_credentials"]
      : [JWT_BEARER_GRANT_TYPE],
    response_types: browser ? ["code"] : [],
    token_endpoint_auth_method: clientAuthenticationOf(settings),
    scope: configuredScope(settings),
    software_id: "patchbay",
    software_version: VERSION,
  };
}

/** The token request of RFC 7523's JWT bearer grant, presenting `assertion`. */
export function jwtBearerRequest(assertion: string, scope?: string): URLSearchParams {
  const params = new URLSearchParams({ grant_type: JWT_BEARER_GRANT_TYPE, assertion });
  if (scope) params.set("scope", scope);
  return params;
}

/** The token request of the `client_credentials` grant, for the SDK's `prepareTokenRequest`. */
export function clientCredentialsRequest(scope?: string): URLSearchParams {
  const params = new URLSearchParams({ grant_type: "client_credentials" });
  if (scope) params.set("scope", scope);
  return params;
}

/**
 * `private_key_jwt` with the SDK's signer, its failures typed. Every part of the key (the
 * PEM, its lines, a JWK's private members) is registered with `redactor` first.
 */
export function privateKeyJwt(
  server: string,
  settings: OAuthSettings & { clientId: string; privateKey: string },
  redactor: Redactor | undefined,
): AddClientAuthentication {
  const { clientId, privateKey } = settings;
  for (const secret of privateKeySecrets(privateKey)) redactor?.addSecret(secret);
  let key: string | Record<string, unknown> = privateKey;
  const text = privateKey.trim();
  if (text.startsWith("{")) {
    try {
      key = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // Not JSON after all: the signer reports it as an unreadable key.
    }
  }
  const alg = settings.privateKeyAlg ?? DEFAULTS.oauth.privateKeyAlg;
  const sign = createPrivateKeyJwtAuth({
    issuer: clientId,
    subject: clientId,
    privateKey: key,
    alg,
  });
  return async (headers, params, url, metadata) => {
    try {
      await sign(headers, params, url, metadata);
    } catch (error) {
      throw new OAuthFailedError(server, {
        reason: `the private key in ${settings.privateKeySource ?? "auth.private_key"} could ` +
          `not sign a ${alg} client assertion ` +
          `(${(error as Error).message.split("\n")[0].slice(0, 160)})`,
        remedy: OAUTH_STEPS.privateKey,
        cause: error,
      });
    }
  };
}
