/**
 * Logging out of a server: its tokens are revoked at the authorization server when it
 * offers RFC 7009 revocation (refresh token first, which ends the whole grant at most
 * servers, then the access token), and its stored tokens and client registration are
 * deleted. Works from the store alone, so a server removed from the configuration can
 * still be logged out of. The revocation endpoint and the metadata fetched to find it obey
 * the endpoint policy of the server the login was for (endpoint_policy.ts).
 *
 * @module
 */

import {
  assertSecureTokenEndpoint,
  type AuthorizationServerMetadata,
  buildDiscoveryUrls,
  type FetchLike,
  type OAuthClientInformationMixed,
  selectClientAuthMethod,
} from "@modelcontextprotocol/client";
import type { OAuthSettings } from "../config/types.ts";
import { PatchbayError } from "../errors.ts";
import { type Log, silentLog } from "../log/log.ts";
import { ProxyRouter } from "../proxy.ts";
import { EndpointPolicy } from "./endpoint_policy.ts";
import type { Resolver } from "./host_location.ts";
import { guardedFetch } from "./guarded_fetch.ts";
import type { ServerCredentials, TokenStore } from "./token_store.ts";

/** What {@linkcode logout} did. */
export interface LogoutResult {
  server: string;
  /** Credentials were stored and are now deleted. */
  deleted: boolean;
  /** Tokens the authorization server confirmed revoked. */
  revoked: Array<"refresh_token" | "access_token">;
  /** The authorization server offers revocation (RFC 7009). */
  revocationSupported: boolean;
  /** Why revocation failed, when it did (the local copies are deleted regardless). */
  revocationProblem?: string;
}

/** Options of {@linkcode logout}. */
export interface LogoutOptions {
  /** The entry's `auth` settings, for a pre-registered client's credentials. */
  auth?: OAuthSettings;
  /** @default a {@linkcode ProxyRouter} over `getEnv`, closed when done */
  fetch?: FetchLike;
  /**
   * Reads the proxy variables (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY); pass the
   * Environment, so .env can set them. @default Deno.env.get
   */
  getEnv?: (name: string) => string | undefined;
  log?: Log;
  /** Resolves host names for the endpoint policy. @default systemResolver */
  resolve?: Resolver;
  signal?: AbortSignal;
}

/** Revokes (where possible) and deletes the stored credentials of `server`. */
export async function logout(
  store: TokenStore,
  server: string,
  options: LogoutOptions = {},
): Promise<LogoutResult> {
  const log = options.log ?? silentLog;
  const record = await store.load(server, options.signal);
  const result: LogoutResult = { server, deleted: false, revoked: [], revocationSupported: false };
  if (!record) return result;
  const network = options.fetch ? undefined : new ProxyRouter({
    env: { get: options.getEnv ?? ((name) => Deno.env.get(name)) },
    log: log.child("network"),
  });
  const policy = new EndpointPolicy({
    server,
    serverUrl: record.serverUrl,
    allowInternalHosts: options.auth?.allowInternalHosts,
    resolve: options.resolve,
  });
  try {
    const fetchFn = guardedFetch(options.fetch ?? network!.fetch, { policy });
    await revokeAll(record, fetchFn, policy, options, result);
  } catch (error) {
    result.revocationProblem = error instanceof PatchbayError
      ? error.reason
      : (error as Error).message;
    log.warn("token revocation failed", { server, error });
  } finally {
    network?.close();
  }
  result.deleted = await store.delete(server, options.signal);
  log.info("logged out", { server, revoked: result.revoked });
  return result;
}

async function revokeAll(
  record: ServerCredentials,
  fetchFn: FetchLike,
  policy: EndpointPolicy,
  options: LogoutOptions,
  result: LogoutResult,
): Promise<void> {
  for (const [issuer, entry] of Object.entries(record.issuers)) {
    const tokens = entry.tokens;
    if (!tokens) continue;
    const revocation = await revocationMetadata(record, issuer, fetchFn);
    if (!revocation) continue;
    result.revocationSupported = true;
    const client: OAuthClientInformationMixed | undefined = options.auth?.clientId
      ? { client_id: options.auth.clientId, client_secret: options.auth.clientSecret }
      : entry.client;
    if (!client) throw new Error(`no client registration is stored for ${issuer}`);
    const endpoint = assertSecureTokenEndpoint(
      await policy.check(revocation.endpoint, {
        name: "revocation_endpoint",
        source: "in the authorization server's metadata",
        credentials: true,
      }, options.signal),
    );
    const pairs = [
      ["refresh_token", tokens.refresh_token],
      ["access_token", tokens.access_token],
    ] as const;
    for (const [hint, token] of pairs) {
      if (!token) continue;
      await revokeOne(endpoint, token, hint, client, revocation.methods, fetchFn, options.signal);
      result.revoked.push(hint);
    }
  }
}

/** RFC 7009 fields of authorization-server metadata (not in the SDK's OpenID type). */
interface RevocationFields {
  issuer?: string;
  revocation_endpoint?: string;
  revocation_endpoint_auth_methods_supported?: string[];
  token_endpoint_auth_methods_supported?: string[];
}

/** Where and how to revoke at `issuer`, or `undefined` when it offers no revocation. */
async function revocationMetadata(
  record: ServerCredentials,
  issuer: string,
  fetchFn: FetchLike,
): Promise<{ endpoint: string; methods: string[] } | undefined> {
  const stored = record.discovery?.authorizationServerMetadata as
    | (AuthorizationServerMetadata & RevocationFields)
    | undefined;
  // The SDK's parse of OpenID discovery drops revocation_endpoint, so a stored document
  // without it is looked up again, raw.
  const fields = stored?.issuer === issuer && stored.revocation_endpoint
    ? stored
    : await fetchMetadata(issuer, fetchFn);
  if (!fields?.revocation_endpoint) return undefined;
  return {
    endpoint: fields.revocation_endpoint,
    methods: fields.revocation_endpoint_auth_methods_supported ??
      fields.token_endpoint_auth_methods_supported ?? [],
  };
}

async function fetchMetadata(issuer: string, fetchFn: FetchLike) {
  for (const { url } of buildDiscoveryUrls(issuer)) {
    const response = await fetchFn(url, { headers: { accept: "application/json" } });
    if (!response.ok) {
      await response.body?.cancel();
      continue;
    }
    const document = await response.json() as RevocationFields;
    // RFC 8414 §3.3: a document naming another issuer is not this server's.
    if (document.issuer === issuer || `${document.issuer}/` === issuer) return document;
    return undefined;
  }
  return undefined;
}

/** One RFC 7009 request, with the client authenticated as at the token endpoint. */
async function revokeOne(
  endpoint: URL,
  token: string,
  hint: "refresh_token" | "access_token",
  client: OAuthClientInformationMixed,
  supportedMethods: string[],
  fetchFn: FetchLike,
  signal?: AbortSignal,
): Promise<void> {
  const body = new URLSearchParams({ token, token_type_hint: hint });
  const headers = new Headers({
    "content-type": "application/x-www-form-urlencoded",
    accept: "application/json",
  });
  const method = selectClientAuthMethod(client, supportedMethods);
  if (method === "client_secret_basic") {
    // RFC 6749 §2.3.1: both parts form-encoded before Base64.
    const user = encodeURIComponent(client.client_id);
    const password = encodeURIComponent(client.client_secret ?? "");
    headers.set("authorization", `Basic ${btoa(`${user}:${password}`)}`);
  } else {
    body.set("client_id", client.client_id);
    if (method === "client_secret_post" && client.client_secret) {
      body.set("client_secret", client.client_secret);
    }
  }
  const response = await fetchFn(endpoint, { method: "POST", headers, body, signal });
  const text = await response.text().catch(() => "");
  // RFC 7009 §2.2: 200 whether or not the token was still valid.
  if (!response.ok) {
    throw new Error(
      `${endpoint.href} answered HTTP ${response.status} to revoking the ${hint}` +
        (text ? `: ${text.slice(0, 200)}` : ""),
    );
  }
}
