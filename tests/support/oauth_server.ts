/**
 * A small but correct OAuth 2.1 authorization server for tests, on 127.0.0.1 with a random
 * port: RFC 8414 (or OpenID discovery) metadata, dynamic client registration (RFC 7591),
 * an authorization endpoint that consents automatically and redirects with `code`,
 * `state` and `iss` (RFC 9207), a token endpoint checking PKCE S256, the redirect URI,
 * client authentication and the RFC 8707 resource, refresh with rotation, and revocation
 * (RFC 7009). Every knob a test needs to make it misbehave is an option.
 *
 * `@modelcontextprotocol/server@2.4.0` provides resource-server pieces only (bearer
 * verification, protected-resource metadata), not an authorization server.
 *
 * @module
 */

import type { AuthInfo } from "./mcp_server_sdk.ts";
import { OAuthError, OAuthErrorCode } from "./mcp_server_sdk.ts";
import { type DpopClaims, verifyDpopProof } from "./dpop_verify.ts";

/** RFC 7523's grant type. */
const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/** A client the server knows. */
export interface TestClient {
  client_id: string;
  client_secret?: string;
  redirect_uris: string[];
  token_endpoint_auth_method?: string;
  scope?: string;
}

/** Options of {@linkcode startAuthorizationServer}. */
export interface AuthorizationServerOptions {
  /** Path of the issuer under the origin, e.g. "/tenant1" (default: the origin itself). */
  issuerPath?: string;
  /** Lifetime of access tokens in seconds. @default 3600 */
  accessTokenSeconds?: number;
  /** Issue refresh tokens. @default true */
  refreshTokens?: boolean;
  /** Advertised `scopes_supported`. */
  scopesSupported?: string[];
  /** Advertised `code_challenge_methods_supported`; `null` omits the field. @default ["S256"] */
  codeChallengeMethods?: string[] | null;
  /** Offer dynamic client registration. @default true */
  registration?: boolean;
  /** Accept https client IDs as metadata documents. @default false */
  clientIdMetadataDocuments?: boolean;
  /** Offer RFC 7009 revocation. @default true */
  revocation?: boolean;
  /** Send `iss` on redirects and advertise it. @default true */
  issParameter?: boolean;
  /** Where the metadata is served. @default "oauth" */
  metadataStyle?: "oauth" | "openid";
  /** Publish a different `issuer` than the URL it is served from (mismatch tests). */
  issuerClaim?: string;
  /** What the automatic consent answers. @default "approve" */
  consent?: "approve" | "deny";
  /** Redirect with a different `iss` than the real issuer (mix-up tests). */
  wrongIssOnRedirect?: boolean;
  /** Narrows what is granted (e.g. the person unticks a scope). @default grants all */
  grant?: (requested: string[]) => string[];
  /** Clients known without registration. */
  clients?: TestClient[];
  /** Accept the client_credentials grant (and advertise it). @default false */
  clientCredentials?: boolean;
  /**
   * Accept RFC 7523's JWT bearer grant (and advertise it), for assertions this judges
   * valid; others get `invalid_grant`. @default none (the grant is unsupported)
   */
  jwtBearer?: (assertion: string) => boolean;
  /**
   * Bind tokens to the key of a valid DPoP proof on the token request (`token_type: DPoP`),
   * and advertise `dpop_signing_alg_values_supported`. @default false
   */
  dpop?: boolean;
  /**
   * Answer every token request of an authenticated client with this OAuth error (HTTP 400),
   * as a failing authorization server does.
   */
  tokenError?: { error: string; description: string };
  /**
   * Hostile sizes: characters added to every access token issued (a token too large to
   * send), or bytes of padding added to the metadata document, the registration answer or
   * the token answer (an answer too large to read). @default none
   */
  oversize?: { accessToken?: number; metadata?: number; registration?: number; token?: number };
}

/** A record of what the server was asked. */
export interface AuthorizationServerLog {
  metadata: number;
  authorize: URLSearchParams[];
  token: Array<{ params: URLSearchParams; clientAuth: "basic" | "post" | "none" }>;
  register: Array<Record<string, unknown>>;
  revoke: URLSearchParams[];
  /** DPoP proofs of token requests: their claims, or why they were refused. */
  dpop: Array<DpopClaims | { error: string }>;
}

interface Grant {
  clientId: string;
  scopes: string[];
  resource?: string;
  expiresAt: number;
  revoked: boolean;
}

interface PendingCode {
  clientId: string;
  redirectUri: string;
  challenge: string;
  scopes: string[];
  resource?: string;
  used: boolean;
}

/** A running test authorization server. */
export interface AuthorizationServer {
  /** The issuer identifier (origin plus issuerPath). */
  issuer: string;
  origin: string;
  log: AuthorizationServerLog;
  clients: Map<string, TestClient>;
  /** Verifies an access token, as a resource server's verifier does. */
  verifyAccessToken(token: string): Promise<AuthInfo>;
  /** Invalidates every token issued so far (access and refresh). */
  revokeAll(): void;
  /** Invalidates access tokens only (refresh still works). */
  expireAccessTokens(): void;
  /** Changes options while running. */
  options: AuthorizationServerOptions;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Starts the server on 127.0.0.1 with a random port. */
export function startAuthorizationServer(
  options: AuthorizationServerOptions = {},
): AuthorizationServer {
  const log: AuthorizationServerLog = {
    metadata: 0,
    authorize: [],
    token: [],
    register: [],
    revoke: [],
    dpop: [],
  };
  const clients = new Map<string, TestClient>(
    (options.clients ?? []).map((client) => [client.client_id, client]),
  );
  const codes = new Map<string, PendingCode>();
  const accessTokens = new Map<string, Grant>();
  const refreshTokens = new Map<string, Grant>();
  const state = { issuer: "", origin: "" };

  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request) => handle(request),
  );
  state.origin = `http://127.0.0.1:${server.addr.port}`;
  const path = options.issuerPath ?? "";
  state.issuer = state.origin + path;

  const o = () => options;
  const metadata = () => ({
    issuer: o().issuerClaim ?? state.issuer,
    authorization_endpoint: `${state.issuer}/authorize`,
    token_endpoint: `${state.issuer}/token`,
    ...(o().registration ?? true ? { registration_endpoint: `${state.issuer}/register` } : {}),
    ...(o().revocation ?? true ? { revocation_endpoint: `${state.issuer}/revoke` } : {}),
    response_types_supported: ["code"],
    grant_types_supported: [
      "authorization_code",
      "refresh_token",
      ...(o().clientCredentials ? ["client_credentials"] : []),
      ...(o().jwtBearer ? [JWT_BEARER] : []),
    ],
    token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "none"],
    ...(o().dpop ? { dpop_signing_alg_values_supported: ["ES256"] } : {}),
    ...(o().codeChallengeMethods === null
      ? {}
      : { code_challenge_methods_supported: o().codeChallengeMethods ?? ["S256"] }),
    ...(o().scopesSupported ? { scopes_supported: o().scopesSupported } : {}),
    ...(o().clientIdMetadataDocuments ? { client_id_metadata_document_supported: true } : {}),
    authorization_response_iss_parameter_supported: o().issParameter ?? true,
    ...(o().metadataStyle === "openid"
      ? {
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["RS256"],
        jwks_uri: `${state.issuer}/jwks`,
      }
      : {}),
  });

  function clientFor(clientId: string | null): TestClient | undefined {
    if (!clientId) return undefined;
    const known = clients.get(clientId);
    if (known) return known;
    // A client ID metadata document: the URL is the client. These tests never fetch it
    // (no https here); they check that patchbay presents it instead of registering.
    if (o().clientIdMetadataDocuments && clientId.startsWith("https://")) {
      return { client_id: clientId, redirect_uris: ["http://localhost:3000/callback"] };
    }
    return undefined;
  }

  function authenticate(request: Request, params: URLSearchParams) {
    const header = request.headers.get("authorization");
    let clientId = params.get("client_id");
    let secret = params.get("client_secret");
    let method: "basic" | "post" | "none" = secret ? "post" : "none";
    if (header?.startsWith("Basic ")) {
      const [user, password] = atob(header.slice(6)).split(":");
      clientId = decodeURIComponent(user);
      secret = decodeURIComponent(password ?? "");
      method = "basic";
    }
    const client = clientFor(clientId);
    if (!client) return { error: "invalid_client" as const, method };
    if (client.client_secret !== undefined && client.client_secret !== secret) {
      return { error: "invalid_client" as const, method };
    }
    return { client, method };
  }

  function issueTokens(
    { refresh = true, tokenType = "Bearer", ...grant }:
      & Omit<Grant, "expiresAt" | "revoked">
      & { refresh?: boolean; tokenType?: string },
  ) {
    const lifetime = o().accessTokenSeconds ?? 3600;
    const access = `at-${crypto.randomUUID()}${"x".repeat(o().oversize?.accessToken ?? 0)}`;
    accessTokens.set(access, { ...grant, expiresAt: Date.now() + lifetime * 1000, revoked: false });
    const body: Record<string, unknown> = {
      access_token: access,
      token_type: tokenType,
      expires_in: lifetime,
      scope: grant.scopes.join(" "),
    };
    if (refresh && (o().refreshTokens ?? true)) {
      const refreshToken = `rt-${crypto.randomUUID()}`;
      refreshTokens.set(refreshToken, { ...grant, expiresAt: Infinity, revoked: false });
      body.refresh_token = refreshToken;
    }
    if (o().oversize?.token) body.padding = "x".repeat(o().oversize!.token!);
    return Response.json(body, { headers: { "cache-control": "no-store" } });
  }

  const oauthError = (error: string, status = 400, description = error) =>
    Response.json({ error, error_description: description }, { status });

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const wellKnown = o().metadataStyle === "openid"
      ? [`/.well-known/openid-configuration${path}`, `${path}/.well-known/openid-configuration`]
      : [`/.well-known/oauth-authorization-server${path}`];
    if (request.method === "GET" && wellKnown.includes(url.pathname)) {
      log.metadata++;
      const padding = o().oversize?.metadata;
      return Response.json(padding ? { ...metadata(), padding: "x".repeat(padding) } : metadata());
    }
    if (url.pathname === `${path}/authorize` && request.method === "GET") return authorize(url);
    if (request.method !== "POST") return new Response("not found", { status: 404 });
    if (url.pathname === `${path}/token`) return await token(request);
    if (url.pathname === `${path}/register` && (o().registration ?? true)) {
      return await register(request);
    }
    if (url.pathname === `${path}/revoke` && (o().revocation ?? true)) return await revoke(request);
    return new Response("not found", { status: 404 });
  }

  function authorize(url: URL): Response {
    const params = url.searchParams;
    log.authorize.push(params);
    const client = clientFor(params.get("client_id"));
    const redirectUri = params.get("redirect_uri") ?? "";
    // Never redirect to an unverified URI (RFC 6749 §4.1.2.1): answer here instead.
    if (!client) return new Response("unknown client", { status: 400 });
    if (!client.redirect_uris.includes(redirectUri)) {
      return new Response("redirect_uri not registered", { status: 400 });
    }
    const target = new URL(redirectUri);
    const reply = (values: Record<string, string>) => {
      for (const [key, value] of Object.entries(values)) target.searchParams.set(key, value);
      const state = params.get("state");
      if (state !== null) target.searchParams.set("state", state);
      if (o().issParameter ?? true) {
        target.searchParams.set(
          "iss",
          o().wrongIssOnRedirect ? "https://evil.example" : state_iss(),
        );
      }
      return new Response(null, { status: 302, headers: { location: target.href } });
    };
    if (params.get("response_type") !== "code") {
      return reply({ error: "unsupported_response_type" });
    }
    if (params.get("code_challenge_method") !== "S256" || !params.get("code_challenge")) {
      return reply({ error: "invalid_request", error_description: "PKCE S256 required" });
    }
    if ((o().consent ?? "approve") === "deny") return reply({ error: "access_denied" });
    const requested = (params.get("scope") ?? "").split(" ").filter(Boolean);
    const code = `code-${crypto.randomUUID()}`;
    codes.set(code, {
      clientId: client.client_id,
      redirectUri,
      challenge: params.get("code_challenge")!,
      scopes: o().grant ? o().grant!(requested) : requested,
      resource: params.get("resource") ?? undefined,
      used: false,
    });
    return reply({ code });
  }

  function state_iss(): string {
    return o().issuerClaim ?? state.issuer;
  }

  async function token(request: Request): Promise<Response> {
    const params = new URLSearchParams(await request.text());
    const authenticated = authenticate(request, params);
    log.token.push({ params, clientAuth: authenticated.method });
    if ("error" in authenticated) return oauthError("invalid_client", 401);
    const { client } = authenticated;
    let tokenType = "Bearer";
    if (o().dpop && request.headers.has("dpop")) {
      try {
        const claims = await verifyDpopProof(request.headers.get("dpop"), {
          htm: "POST",
          htu: request.url,
        });
        log.dpop.push(claims);
        tokenType = "DPoP";
      } catch (error) {
        log.dpop.push({ error: (error as Error).message });
        return oauthError("invalid_dpop_proof", 400, (error as Error).message);
      }
    }
    const failure = o().tokenError;
    if (failure) return oauthError(failure.error, 400, failure.description);
    const grantType = params.get("grant_type");
    if (grantType === "authorization_code") {
      const pending = codes.get(params.get("code") ?? "");
      if (!pending || pending.used || pending.clientId !== client.client_id) {
        return oauthError("invalid_grant");
      }
      pending.used = true;
      if (params.get("redirect_uri") !== pending.redirectUri) return oauthError("invalid_grant");
      const verifier = params.get("code_verifier") ?? "";
      if (await s256(verifier) !== pending.challenge) {
        return oauthError("invalid_grant", 400, "PKCE verification failed");
      }
      const resource = params.get("resource") ?? undefined;
      if (pending.resource !== resource) return oauthError("invalid_target");
      return issueTokens({ clientId: client.client_id, scopes: pending.scopes, resource });
    }
    if (grantType === "refresh_token") {
      const old = params.get("refresh_token") ?? "";
      const grant = refreshTokens.get(old);
      if (!grant || grant.revoked || grant.clientId !== client.client_id) {
        return oauthError("invalid_grant");
      }
      // Rotation: a refresh token is good for one use.
      refreshTokens.delete(old);
      const narrowed = params.get("scope")?.split(" ").filter(Boolean);
      return issueTokens({
        clientId: client.client_id,
        scopes: narrowed ?? grant.scopes,
        resource: params.get("resource") ?? grant.resource,
      });
    }
    if (grantType === "client_credentials" && (o().clientCredentials ?? false)) {
      // The client authenticated itself above: no browser, no code, no refresh token.
      const requested = params.get("scope")?.split(" ").filter(Boolean) ?? [];
      return issueTokens({
        clientId: client.client_id,
        scopes: requested,
        resource: params.get("resource") ?? undefined,
        refresh: false,
        tokenType,
      });
    }
    const judge = o().jwtBearer;
    if (grantType === JWT_BEARER && judge) {
      if (!judge(params.get("assertion") ?? "")) return oauthError("invalid_grant");
      return issueTokens({
        clientId: client.client_id,
        scopes: params.get("scope")?.split(" ").filter(Boolean) ?? [],
        resource: params.get("resource") ?? undefined,
        refresh: false,
        tokenType,
      });
    }
    return oauthError("unsupported_grant_type");
  }

  async function register(request: Request): Promise<Response> {
    const body = await request.json() as Record<string, unknown>;
    log.register.push(body);
    const redirectUris = body.redirect_uris;
    if (!Array.isArray(redirectUris) || redirectUris.length === 0) {
      return Response.json({ error: "invalid_redirect_uri" }, { status: 400 });
    }
    const method = (body.token_endpoint_auth_method as string | undefined) ??
      "client_secret_basic";
    const client: TestClient = {
      client_id: `client-${crypto.randomUUID()}`,
      client_secret: method === "none" ? undefined : `secret-${crypto.randomUUID()}`,
      redirect_uris: redirectUris as string[],
      token_endpoint_auth_method: method,
    };
    clients.set(client.client_id, client);
    return Response.json(
      {
        ...body,
        ...client,
        client_id_issued_at: Math.floor(Date.now() / 1000),
        ...(o().oversize?.registration ? { padding: "x".repeat(o().oversize!.registration!) } : {}),
      },
      {
        status: 201,
      },
    );
  }

  async function revoke(request: Request): Promise<Response> {
    const params = new URLSearchParams(await request.text());
    log.revoke.push(params);
    const authenticated = authenticate(request, params);
    if ("error" in authenticated) return oauthError("invalid_client", 401);
    const value = params.get("token") ?? "";
    for (const table of [accessTokens, refreshTokens]) {
      const grant = table.get(value);
      if (grant && grant.clientId === authenticated.client.client_id) grant.revoked = true;
    }
    return new Response(null, { status: 200 });
  }

  return {
    get issuer() {
      return state.issuer;
    },
    get origin() {
      return state.origin;
    },
    log,
    clients,
    options,
    verifyAccessToken(value: string): Promise<AuthInfo> {
      const grant = accessTokens.get(value);
      if (!grant || grant.revoked || grant.expiresAt <= Date.now()) {
        return Promise.reject(new OAuthError(OAuthErrorCode.InvalidToken, "token not active"));
      }
      return Promise.resolve({
        token: value,
        clientId: grant.clientId,
        scopes: grant.scopes,
        // Rounded up: the SDK's verifier compares whole seconds, and rounding down would
        // refuse a one-second token as soon as the second it was issued in ends.
        expiresAt: Math.ceil(grant.expiresAt / 1000),
        resource: grant.resource ? new URL(grant.resource) : undefined,
      });
    },
    revokeAll() {
      for (const grant of [...accessTokens.values(), ...refreshTokens.values()]) {
        grant.revoked = true;
      }
    },
    expireAccessTokens() {
      for (const grant of accessTokens.values()) grant.expiresAt = 0;
    },
    close: () => server.shutdown(),
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

async function s256(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return btoa(String.fromCharCode(...new Uint8Array(digest))).replace(/\+/g, "-")
    .replace(/\//g, "_").replace(/=+$/, "");
}
