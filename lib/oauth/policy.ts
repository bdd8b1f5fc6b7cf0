/**
 * What patchbay requires of a server's OAuth setup before it registers or sends anyone to
 * a login page, beyond what the SDK checks: OAuth metadata at all (else the server does
 * not support OAuth), PKCE with S256 advertised (the MCP authorization specification: a
 * client MUST refuse to proceed without it; the SDK only refuses servers that advertise
 * other methods), and some way to obtain a client ID.
 *
 * @module
 */

import {
  discoverOAuthServerInfo,
  type FetchLike,
  isHttpsUrl,
  type OAuthDiscoveryState,
} from "@modelcontextprotocol/client";
import { OAuthFailedError, OAuthUnsupportedError } from "../errors.ts";
import { OAUTH_STEPS } from "../errors/oauth_steps.ts";
import type { OAuthGrant } from "../config/types.ts";
import type { Log } from "../log/log.ts";
import { type FailureContext, typedOAuthFailure } from "./login_errors.ts";
import { withSdkWarningsLogged } from "./sdk_warnings.ts";

/** What the checks need to know about the entry and the stored registration. */
export interface DiscoveryContext {
  server: string;
  serverUrl: URL;
  redirectUri: string;
  /** How tokens are obtained. @default "authorization_code" */
  grant?: OAuthGrant;
  /** A client ID is configured, or one is stored for the issuer being checked. */
  hasClient: (issuer: string) => boolean;
  clientMetadataUrl?: string;
}

/**
 * The endpoints a 2025-03-26 client uses when the server publishes no OAuth metadata at
 * all: these paths on the authorization server's origin, which is then the MCP server's.
 */
export const FALLBACK_ENDPOINT_PATHS: Readonly<Record<string, string>> = {
  authorization_endpoint: "/authorize",
  token_endpoint: "/token",
  registration_endpoint: "/register",
};

/**
 * Discovery found neither protected-resource nor authorization-server metadata: the
 * 2025-03-26 fallback applies (default endpoints on the server's origin).
 */
export function isFallbackDiscovery(state: OAuthDiscoveryState): boolean {
  return !state.resourceMetadata && !state.authorizationServerMetadata;
}

/** Throws the typed error for discovery results patchbay will not work with. */
export function checkDiscovery(state: OAuthDiscoveryState, context: DiscoveryContext): void {
  const { server } = context;
  const metadata = state.authorizationServerMetadata;
  // No metadata at all: a 2025-03-26 server, used at its default endpoints (a server that
  // does not do OAuth is told apart when they do not answer: discovered_endpoints.ts).
  if (isFallbackDiscovery(state)) return;
  if (!metadata) {
    throw new OAuthFailedError(server, {
      reason: `the authorization server ${state.authorizationServerUrl} named by the server ` +
        "publishes no metadata (RFC 8414 / OpenID discovery)",
      remedy: OAUTH_STEPS.noMetadata,
    });
  }
  // No browser, no authorization code: PKCE and registration do not apply.
  if (context.grant !== undefined && context.grant !== "authorization_code") return;
  if (!metadata.code_challenge_methods_supported?.includes("S256")) {
    throw new OAuthFailedError(server, {
      reason: `the authorization server ${metadata.issuer} does not advertise PKCE with S256 ` +
        "(code_challenge_methods_supported is " +
        `${JSON.stringify(metadata.code_challenge_methods_supported ?? null)}), which the MCP ` +
        "authorization specification requires; patchbay will not authorize without it",
      remedy: OAUTH_STEPS.enablePkce,
    });
  }
  const metadataDocument = metadata.client_id_metadata_document_supported === true &&
    context.clientMetadataUrl !== undefined;
  if (!context.hasClient(metadata.issuer) && !metadataDocument && !metadata.registration_endpoint) {
    throw new OAuthFailedError(server, {
      reason: `the authorization server ${metadata.issuer} offers no way for patchbay to ` +
        "register: no dynamic client registration" +
        (metadata.client_id_metadata_document_supported
          ? " (it accepts client ID metadata documents, but auth.client_metadata_url is not set)"
          : " and no client ID metadata documents"),
      remedy: OAUTH_STEPS.registerClient(context.redirectUri),
    });
  }
}

/**
 * patchbay's answer to `auth.method: oauth` on a server without OAuth
 * (docs/troubleshooting.md): `Failed to connect to server '<name>': Session terminated`,
 * remedy "remove auth; use headers". The one place this is decided: after discovery found no
 * metadata, whether the server refused the request without a token (a 401 without OAuth) or
 * answered it.
 */
export function oauthUnsupportedError(
  server: string,
  serverUrl: URL,
  authorizationServerUrl: string | URL,
  answeredWithoutCredentials = false,
  fallback?: { url: string; status: number },
): OAuthUnsupportedError {
  return new OAuthUnsupportedError(
    server,
    `"auth": {"method": "oauth"} is set, but ` +
      (answeredWithoutCredentials
        ? `${serverUrl.href} answered initialize without asking for credentials and `
        : "") +
      `${serverUrl.origin} publishes no OAuth metadata: no protected-resource metadata ` +
      `(RFC 9728) and no authorization-server metadata at ${authorizationServerUrl} ` +
      "(RFC 8414 / OpenID discovery)" +
      (fallback
        ? `, and its default endpoint ${fallback.url} (2025-03-26) answered HTTP ` +
          `${fallback.status}`
        : "") +
      ", so it does not support OAuth",
  );
}

/**
 * A server that answered without a token must still publish OAuth metadata: one that
 * does not, does not support OAuth, and `auth.method: oauth` on it is a configuration
 * error (docs/troubleshooting.md), not a server that needs no login. Discovery's failures are typed
 * with `failureContext()`, asked for once they happened (it names the last answer seen).
 */
export async function requireOAuthMetadata(
  failureContext: () => FailureContext,
  fetchFn: FetchLike,
  log: Log,
): Promise<void> {
  const { server, serverUrl } = failureContext();
  let found: Awaited<ReturnType<typeof discoverOAuthServerInfo>>;
  try {
    found = await withSdkWarningsLogged(log, () => discoverOAuthServerInfo(serverUrl, { fetchFn }));
  } catch (error) {
    throw typedOAuthFailure(error, failureContext());
  }
  if (!found.resourceMetadata && !found.authorizationServerMetadata) {
    throw oauthUnsupportedError(server, serverUrl, found.authorizationServerUrl, true);
  }
}

/** Entry settings that only matter once OAuth is used. */
export function checkClientMetadataUrl(server: string, url: string | undefined): void {
  if (url !== undefined && !isHttpsUrl(url)) {
    throw new OAuthFailedError(server, {
      reason: `auth.client_metadata_url must be an https URL with a path, got ${url}`,
      remedy: OAUTH_STEPS.clientMetadataUrl,
    });
  }
}
