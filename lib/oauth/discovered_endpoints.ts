/**
 * The addresses a server's OAuth discovery names that patchbay requests or opens (the
 * metadata URLs and the endpoints in {@linkcode USED_ENDPOINTS}), how each is named in
 * messages, and their checks against the server's {@linkcode EndpointPolicy}: once when
 * discovery ends, before registration or any browser, and again on every request
 * (guarded_fetch.ts asks {@linkcode roleOf} what an address is).
 *
 * A server that publishes no OAuth metadata is used at the 2025-03-26 default endpoints
 * ({@linkcode FALLBACK_ENDPOINT_PATHS}), derived here by {@linkcode endpointOf} and checked
 * like discovered ones; when those do not exist, {@linkcode fallbackRefusal} says the
 * server does not support OAuth.
 *
 * @module
 */

import type { OAuthDiscoveryState } from "@modelcontextprotocol/client";
import {
  CancelledError,
  OAuthEndpointRefusedError,
  type OAuthUnsupportedError,
} from "../errors.ts";
import type { EndpointPolicy, EndpointRole } from "./endpoint_policy.ts";
import type { FetchedDocument } from "./guarded_fetch.ts";
import { FALLBACK_ENDPOINT_PATHS, isFallbackDiscovery, oauthUnsupportedError } from "./policy.ts";

/** The `resource_metadata` of a server's `WWW-Authenticate` challenge. */
export const RESOURCE_METADATA_HINT: EndpointRole = {
  name: "resource_metadata URL",
  source: "in the server's WWW-Authenticate challenge",
};

/** The authorization server the protected-resource metadata names. */
const AUTHORIZATION_SERVER: EndpointRole = {
  name: "authorization server",
  source: "named by the server's protected-resource metadata",
};

/**
 * Authorization-server metadata fields patchbay requests or opens, and whether
 * credentials go there. Others (introspection, userinfo, jwks_uri) are never requested
 * by a client like this one, so an internal address there is no risk; a field patchbay
 * starts to use belongs here, and the guarded fetch checks it meanwhile anyway.
 */
export const USED_ENDPOINTS: ReadonlyArray<readonly [string, boolean]> = [
  ["authorization_endpoint", false],
  ["token_endpoint", true],
  ["registration_endpoint", false],
  ["revocation_endpoint", true],
];

/**
 * Checks every address of `state` patchbay will request or open: the metadata URLs
 * and the endpoints it uses (authorization, token, registration, revocation). Throws
 * `OAuthEndpointRefusedError` for the first one the policy refuses.
 */
export async function checkEndpoints(
  policy: EndpointPolicy,
  state: OAuthDiscoveryState,
): Promise<void> {
  if (state.resourceMetadataUrl) {
    await policy.check(state.resourceMetadataUrl, RESOURCE_METADATA_HINT);
  }
  await policy.check(state.authorizationServerUrl, AUTHORIZATION_SERVER);
  for (const [field, credentials] of USED_ENDPOINTS) {
    const value = endpointOf(state, field);
    if (value === undefined) continue;
    await policy.check(String(value), { ...endpointRole(state, field), credentials });
  }
}

/** What `url` is in the discovered metadata, for messages; `undefined` if nothing known. */
export function roleOf(
  discovery: OAuthDiscoveryState | undefined,
  url: URL,
): EndpointRole | undefined {
  for (const [field, credentials] of USED_ENDPOINTS) {
    if (sameEndpoint(endpointOf(discovery, field), url)) {
      return { ...endpointRole(discovery, field), credentials };
    }
  }
  if (url.pathname.startsWith("/.well-known/")) {
    return { name: "metadata URL", source: "derived during OAuth discovery" };
  }
  return undefined;
}

/** Whether `url` is one of the endpoints of {@linkcode USED_ENDPOINTS} in `discovery`. */
export function isUsedEndpoint(discovery: OAuthDiscoveryState | undefined, url: URL): boolean {
  return USED_ENDPOINTS.some(([field]) => sameEndpoint(endpointOf(discovery, field), url));
}

/** What {@linkcode fallbackRefusal} needs to know. */
export interface FallbackContext {
  server: string;
  serverUrl: URL;
  /** The discovery in effect. */
  discovery: OAuthDiscoveryState | undefined;
  /** The last OAuth answer received. */
  lastDocument: FetchedDocument | undefined;
}

/**
 * A server without OAuth metadata whose default endpoints (the 2025-03-26 fallback) do
 * not exist or refuse everyone does not support OAuth (docs/authentication.md): said so, with
 * the endpoint and its answer, rather than as a failed login. `undefined` when `error`
 * is something else.
 */
export function fallbackRefusal(
  error: unknown,
  context: FallbackContext,
): OAuthUnsupportedError | undefined {
  const { discovery, lastDocument: last } = context;
  if (!discovery || !isFallbackDiscovery(discovery) || !last) return undefined;
  if (error instanceof OAuthEndpointRefusedError || error instanceof CancelledError) {
    return undefined;
  }
  const at = new URL(last.url);
  const field = USED_ENDPOINTS.find(([field]) => sameEndpoint(endpointOf(discovery, field), at));
  // Missing (404, 405) anywhere, or registration refused to everyone (401, 403); a token
  // endpoint's 401 is an answer about the client (invalid_client), reported as such.
  const absent = last.status === 404 || last.status === 405 ||
    (field?.[0] === "registration_endpoint" && (last.status === 401 || last.status === 403));
  if (!field || !absent) return undefined;
  return oauthUnsupportedError(
    context.server,
    context.serverUrl,
    discovery.authorizationServerUrl,
    false,
    { url: last.url, status: last.status },
  );
}

/**
 * The address of an endpoint patchbay uses: from the authorization server's metadata, or,
 * for a server that publishes none (the 2025-03-26 fallback), the default path on the
 * authorization server's origin, which is then the MCP server's own.
 */
export function endpointOf(
  state: OAuthDiscoveryState | undefined,
  field: string,
): string | undefined {
  if (!state) return undefined;
  const metadata = state.authorizationServerMetadata as Record<string, unknown> | undefined;
  if (metadata) return typeof metadata[field] === "string" ? metadata[field] as string : undefined;
  if (!isFallbackDiscovery(state)) return undefined;
  const path = FALLBACK_ENDPOINT_PATHS[field];
  return path ? new URL(path, state.authorizationServerUrl).href : undefined;
}

/** What an endpoint is, for the policy's messages. */
function endpointRole(state: OAuthDiscoveryState | undefined, field: string): EndpointRole {
  return state?.authorizationServerMetadata
    ? { name: field, source: "in the authorization server's metadata" }
    : {
      name: field,
      source: "by default on the server's origin (2025-03-26: the server publishes no " +
        "OAuth metadata)",
    };
}

function sameEndpoint(value: unknown, url: URL): boolean {
  if (typeof value !== "string") return false;
  try {
    const endpoint = new URL(value);
    return endpoint.origin === url.origin && endpoint.pathname === url.pathname;
  } catch {
    return false;
  }
}
