/**
 * The OAuth client for one MCP server: an SDK `OAuthClientProvider` (persistence, client
 * metadata, the browser redirect) plus the parts of the MCP authorization specification
 * the SDK leaves to the host.
 *
 * The SDK's `auth()` orchestrator does discovery (RFC 9728 `resource_metadata` hint, then
 * the path-based and root well-known URLs; RFC 8414 and OpenID discovery with issuer
 * validation), client registration in the specification's order (pre-registered client,
 * client ID metadata document, dynamic registration), PKCE S256, the RFC 8707 `resource`
 * indicator, scope selection and refresh. This provider adds:
 *
 * - refusing an authorization server that does not advertise PKCE S256 (the SDK only
 *   refuses one that advertises other methods), or that offers no way to register;
 * - a typed `OAuthUnsupportedError` for a server with no OAuth metadata at all, whether it
 *   refuses requests without a token or answers them (policy.ts);
 * - the browser login inline: {@linkcode PatchbayOAuthProvider.wrapFetch} answers a 401
 *   (on any request, not only the first) or a 403 `insufficient_scope` by authorizing,
 *   waiting for the browser, and retrying the request, so the transport never sees the
 *   refusal (the SDK alone would fail the request and expect the host to reconnect);
 * - bounded step-up ({@linkcode MAX_STEP_UP_ATTEMPTS}) and re-authorization
 *   ({@linkcode MAX_REAUTHORIZATIONS}) per request, and refresh before expiry;
 * - every address the server's metadata supplies (metadata URLs, the authorization,
 *   token, registration and revocation endpoints, redirects) checked against the
 *   {@linkcode EndpointPolicy} before it is requested or opened: discovered endpoints as
 *   soon as discovery ends, before registration or any browser; each request again, with
 *   its host resolved then (guarded_fetch.ts);
 * - tokens and client secrets registered with the log's redactor the moment they exist;
 * - a clock of the time spent waiting for the person (a `LoginClock`, see
 *   lib/async/wait_clock.ts), which the connection layer's timeouts leave out.
 *
 * @module
 */

import {
  type AddClientAuthentication,
  auth,
  type AuthOptions,
  computeScopeUnion,
  createPrivateKeyJwtAuth,
  discoverOAuthServerInfo,
  DpopSession,
  extractWWWAuthenticateParams,
  type FetchLike,
  isDpopNonceChallenge,
  isStrictScopeSuperset,
  type OAuthClientInformationContext,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  OAuthError,
  refreshAuthorization,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import type { HttpServerConfig } from "../config/types.ts";
import {
  CancelledError,
  OAuthEndpointRefusedError,
  OAuthFailedError,
  type OAuthUnsupportedError,
  StoreConnectError,
} from "../errors.ts";
import type { Log } from "../log.ts";
import type { Redactor } from "../redact.ts";
import { DEFAULTS } from "../defaults.ts";
import { VERSION } from "../version.ts";
import { abortable } from "../async/abortable.ts";
import type { AuthorizationBroker, AuthorizationReason, OAuthEvent } from "./broker.ts";
import { EndpointPolicy, type EndpointRole, type Resolver } from "./endpoint_policy.ts";
import { loadDpopKeyPair, newDpopKey } from "./dpop_key.ts";
import { privateKeySecrets } from "./private_key.ts";
import {
  dpopNonceLoopError,
  type FailureContext,
  insufficientScopeError,
  rejectedAfterLoginError,
  typedOAuthFailure,
} from "./login_errors.ts";
import { type FetchedDocument, guardedFetch } from "./guarded_fetch.ts";
import {
  checkClientMetadataUrl,
  checkDiscovery,
  FALLBACK_ENDPOINT_PATHS,
  isFallbackDiscovery,
  oauthUnsupportedError,
} from "./policy.ts";
import { probeServer } from "./challenge_probe.ts";
import { withSdkWarningsLogged } from "./sdk_warnings.ts";
import {
  emptyCredentials,
  type IssuerCredentials,
  type ServerCredentials,
  type TokenStore,
} from "./token_store.ts";

/** Browser step-ups one request may trigger before its 403 `insufficient_scope` stands. */
export const MAX_STEP_UP_ATTEMPTS = 2;

/**
 * Authorizations one request may trigger after 401s: the first may be a silent refresh,
 * the second is then a fresh browser login; a 401 after that is the server's final word.
 */
export const MAX_REAUTHORIZATIONS = 2;

/**
 * Access tokens expiring within this many milliseconds are refreshed before use (or within
 * a tenth of their lifetime, for tokens that live less than ten minutes).
 */
export const REFRESH_MARGIN_MS = 60_000;

/** What {@linkcode PatchbayOAuthProvider.ensureLogin} found or did. */
export type LoginOutcome =
  /** Stored tokens are valid. */
  | "stored"
  /** Stored tokens had expired and were refreshed. */
  | "refreshed"
  /** A browser login obtained new tokens. */
  | "authorized"
  /** The server answered without authorization: it needs no login. */
  | "not_required";

/** Options of {@linkcode PatchbayOAuthProvider}. */
export interface OAuthProviderOptions {
  /** The server entry; must have `auth`. */
  server: HttpServerConfig;
  store: TokenStore;
  broker: AuthorizationBroker;
  log: Log;
  /** Tokens and secrets are registered here as soon as they are known. */
  redactor?: Redactor;
  onEvent?: (event: OAuthEvent) => void;
  /**
   * Fetch for discovery, registration and token requests; every request through it is
   * checked against the server's endpoint policy first. @default globalThis.fetch
   */
  fetch?: FetchLike;
  /** Resolves host names for the endpoint policy. @default systemResolver (getaddrinfo) */
  resolve?: Resolver;
  /** @default Date.now */
  now?: () => number;
}

interface AuthorizeRequest {
  reason: AuthorizationReason;
  scope?: string;
  resourceMetadataUrl?: URL;
  force?: boolean;
  /** Stops this caller waiting. */
  signal?: AbortSignal;
  /**
   * Also cancels the browser login itself when `signal` aborts: set for a person's own
   * cancellation, never for a request timeout, which must not end a login half done.
   */
  cancelsLogin?: boolean;
}

/** The SDK OAuth client provider for one server, with patchbay's flow around it. */
export class PatchbayOAuthProvider implements OAuthClientProvider {
  readonly server: string;
  readonly serverUrl: URL;
  readonly #entry: HttpServerConfig;
  readonly #store: TokenStore;
  readonly #broker: AuthorizationBroker;
  readonly #log: Log;
  readonly #redactor?: Redactor;
  readonly #onEvent: (event: OAuthEvent) => void;
  /** The caller's fetch behind the endpoint policy: every OAuth request goes through it. */
  readonly #fetch: FetchLike;
  readonly #policy: EndpointPolicy;
  readonly #now: () => number;
  /** The last OAuth answer (a metadata document), to report an invalid one with its values. */
  #lastDocument: FetchedDocument | undefined;
  #record: ServerCredentials | undefined;
  #loaded = false;
  #codeVerifier: string | undefined;
  #state: string | undefined;
  #reason: AuthorizationReason = "login";
  #loginSignal: AbortSignal | undefined;
  /** The union of configured and challenged scopes requested so far. */
  #requestedScope: string | undefined;
  #pendingLogin: Promise<void> | undefined;
  /** The browser login in progress (queued or waiting for the person), for the clock. */
  #browserLogin: { started: number; done: Promise<void> } | undefined;
  #loginMs = 0;
  #inflight: Promise<"refresh" | "browser"> | undefined;
  #refreshing: Promise<void> | undefined;
  #dpop: Promise<DpopSession> | undefined;

  /**
   * The token request of the `client_credentials` grant (set only for that grant: the SDK
   * then asks for tokens without a browser).
   */
  prepareTokenRequest?: (scope?: string) => URLSearchParams;
  /** `private_key_jwt` client authentication (set only when the entry has a private key). */
  addClientAuthentication?: AddClientAuthentication;
  /**
   * The DPoP session (set only with `auth.dpop`): the SDK signs token requests with it, and
   * {@linkcode wrapFetch} every request to the server.
   */
  dpop?: () => Promise<DpopSession>;

  constructor(options: OAuthProviderOptions) {
    if (!options.server.auth) {
      throw new Error(`PatchbayOAuthProvider: server '${options.server.name}' has no auth`);
    }
    this.#entry = options.server;
    this.server = options.server.name;
    this.serverUrl = new URL(options.server.url);
    this.#store = options.store;
    this.#broker = options.broker;
    this.#log = options.log;
    this.#redactor = options.redactor;
    this.#onEvent = options.onEvent ?? (() => {});
    this.#policy = new EndpointPolicy({
      server: options.server.name,
      serverUrl: this.serverUrl,
      allowInternalHosts: options.server.auth.allowInternalHosts,
      resolve: options.resolve,
    });
    this.#fetch = this.#guarded(options.fetch ?? ((input, init) => fetch(input, init)));
    this.#now = options.now ?? Date.now;
    this.#requestedScope = this.#configuredScope;
    const settings = options.server.auth;
    this.#redactor?.addSecret(settings.clientSecret);
    if (this.grant === "client_credentials") {
      this.prepareTokenRequest = (scope) => {
        const params = new URLSearchParams({ grant_type: "client_credentials" });
        if (scope) params.set("scope", scope);
        return params;
      };
    }
    if (settings.privateKey !== undefined && settings.clientId !== undefined) {
      this.#registerPrivateKey(settings.privateKey);
      this.addClientAuthentication = this.#privateKeyJwt(settings.clientId, settings.privateKey);
    }
    if (settings.dpop) this.dpop = () => this.#dpop ??= this.#dpopSession();
  }

  /** How tokens are obtained for this server. */
  get grant(): "authorization_code" | "client_credentials" {
    return this.#entry.auth!.grant ?? DEFAULTS.oauth.grant;
  }

  /** How the client authenticates at the token endpoint. */
  get clientAuthentication(): "private_key_jwt" | "client_secret_basic" | "none" {
    const settings = this.#entry.auth!;
    return settings.privateKey !== undefined
      ? "private_key_jwt"
      : settings.clientSecret !== undefined
      ? "client_secret_basic"
      : "none";
  }

  // ── OAuthClientProvider ───────────────────────────────────────────────────────────

  /** The callback for a browser login; none for `client_credentials` (no browser). */
  get redirectUrl(): string | undefined {
    return this.grant === "client_credentials" ? undefined : this.#broker.redirectUri;
  }

  get clientMetadataUrl(): string | undefined {
    return this.#entry.auth!.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const browser = this.grant === "authorization_code";
    return {
      client_name: "patchbay",
      redirect_uris: browser ? [this.#broker.redirectUri] : [],
      grant_types: browser ? ["authorization_code", "refresh_token"] : ["client_credentials"],
      response_types: browser ? ["code"] : [],
      token_endpoint_auth_method: this.clientAuthentication,
      scope: this.#configuredScope,
      software_id: "patchbay",
      software_version: VERSION,
    };
  }

  state(): string {
    this.#state = randomToken();
    return this.#state;
  }

  async clientInformation(
    ctx?: OAuthClientInformationContext,
  ): Promise<StoredOAuthClientInformation | undefined> {
    const record = await this.#current();
    const issuer = ctx?.issuer ?? record?.issuer;
    const { clientId, clientSecret } = this.#entry.auth!;
    if (clientId) {
      // Pre-registered in the entry: used with whichever authorization server the MCP
      // server names, stamped with it so the SDK's per-issuer binding holds.
      return { client_id: clientId, client_secret: clientSecret, issuer };
    }
    return issuer ? record?.issuers[issuer]?.client : undefined;
  }

  async saveClientInformation(
    client: StoredOAuthClientInformation,
    ctx?: OAuthClientInformationContext,
  ): Promise<void> {
    if (client.client_id === this.#entry.auth!.clientId) return;
    const issuer = ctx?.issuer ?? client.issuer;
    if (!issuer) return;
    this.#redactor?.addSecret(client.client_secret);
    await this.#update((record) => {
      record.issuers[issuer] = { ...record.issuers[issuer], client: { ...client, issuer } };
    });
    this.#log.info("registered OAuth client", { issuer, client_id: client.client_id });
  }

  async tokens(ctx?: OAuthClientInformationContext): Promise<StoredOAuthTokens | undefined> {
    // With a context the SDK is about to decide on a refresh or a login: read the store
    // again, in case another patchbay process refreshed meanwhile (refresh tokens may be
    // single-use). Without one, it is the per-request read: memory suffices.
    const record = ctx ? await this.#reload() : await this.#current();
    const issuer = ctx?.issuer ?? record?.issuer;
    return issuer ? record?.issuers[issuer]?.tokens : undefined;
  }

  async saveTokens(tokens: StoredOAuthTokens, ctx?: OAuthClientInformationContext): Promise<void> {
    const issuer = ctx?.issuer ?? tokens.issuer ?? this.#record?.issuer;
    if (!issuer) throw new Error("PatchbayOAuthProvider: tokens without an issuer");
    this.#registerTokens(tokens);
    const now = this.#now();
    await this.#update((record) => {
      record.issuer = issuer;
      record.issuers[issuer] = {
        ...record.issuers[issuer],
        tokens: { ...tokens, issuer },
        obtainedAt: now,
        expiresAt: tokens.expires_in === undefined ? undefined : now + tokens.expires_in * 1000,
      };
    });
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    const metadata = this.#record?.discovery?.authorizationServerMetadata;
    const state = authorizationUrl.searchParams.get("state") ?? this.#state ?? "";
    const login = this.#broker.authorize({
      server: this.server,
      url: authorizationUrl,
      state,
      issuer: metadata?.issuer,
      issRequired: metadata?.authorization_response_iss_parameter_supported === true,
      reason: this.#reason,
      scope: authorizationUrl.searchParams.get("scope") ?? undefined,
      signal: this.#loginSignal,
    }, ({ code, iss }) => this.#redeem(code, iss));
    // Whoever started the login awaits it; if nobody does (a transport used without
    // wrapFetch), its failure is logged rather than left unhandled.
    login.catch((error) => this.#log.warn("OAuth login failed", { error }));
    this.#pendingLogin = login;
    const started = Date.now();
    const done = login.then(() => {}, () => {}).then(() => {
      this.#loginMs += Date.now() - started;
      if (this.#browserLogin?.done === done) this.#browserLogin = undefined;
    });
    this.#browserLogin = { started, done };
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.#redactor?.addSecret(codeVerifier);
    this.#codeVerifier = codeVerifier;
  }

  codeVerifier(): string {
    if (!this.#codeVerifier) throw new Error("PatchbayOAuthProvider: no PKCE code verifier");
    return this.#codeVerifier;
  }

  async invalidateCredentials(
    scope: "all" | "client" | "tokens" | "verifier" | "discovery",
  ): Promise<void> {
    this.#log.info("discarding stored OAuth credentials", { scope });
    if (scope === "verifier" || scope === "all") this.#codeVerifier = undefined;
    if (scope === "verifier") return;
    if (scope === "all") {
      await this.#store.delete(this.server);
      this.#record = undefined;
      // The DPoP key went with the record: the next tokens are bound to a new one.
      this.#dpop = undefined;
      return;
    }
    await this.#update((record) => {
      if (scope === "discovery") {
        record.discovery = undefined;
        return;
      }
      const issuer = record.discovery?.authorizationServerMetadata?.issuer ?? record.issuer;
      const entry: IssuerCredentials | undefined = issuer ? record.issuers[issuer] : undefined;
      if (!entry) return;
      if (scope === "client") entry.client = undefined;
      if (scope === "tokens") {
        entry.tokens = undefined;
        entry.expiresAt = undefined;
      }
    });
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    const state = (await this.#current())?.discovery;
    // Checked again, not trusted from the store: addresses may resolve differently now,
    // and a state stored by an older patchbay was never checked. One that fails is
    // forgotten, so discovery runs again (and is checked again when saved).
    return state && await this.#storedDiscoveryUsable(state) ? state : undefined;
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    const record = await this.#current();
    checkDiscovery(state, {
      server: this.server,
      serverUrl: this.serverUrl,
      redirectUri: this.#broker.redirectUri,
      grant: this.grant,
      clientMetadataUrl: this.clientMetadataUrl,
      hasClient: (issuer) =>
        this.#entry.auth!.clientId !== undefined || record?.issuers[issuer]?.client !== undefined,
    });
    // Before the SDK registers a client or builds the authorization URL with it.
    await this.#checkEndpoints(state);
    await this.#update((record) => {
      record.discovery = state;
    });
  }

  // ── patchbay's flow ───────────────────────────────────────────────────────────────

  /**
   * Milliseconds this server's browser logins have taken so far (queued behind another
   * server's, or waiting for the person), the one in progress included. With
   * {@linkcode loginInProgress} this is a `LoginClock`: the connection layer's timeouts
   * leave this time out, so a person logging in never makes a server "time out".
   */
  get loginMs(): number {
    const current = this.#browserLogin;
    return this.#loginMs + (current ? Date.now() - current.started : 0);
  }

  /** Settles (never rejects) when the browser login in progress ends; `undefined` if none. */
  get loginInProgress(): Promise<void> | undefined {
    return this.#browserLogin?.done;
  }

  /**
   * Makes sure usable tokens exist before connecting, outside any request timeout: stored
   * tokens are used as they are, expired ones refreshed; otherwise the server is asked
   * (without a token) for its challenge and a browser login follows. Aborting `signal`
   * cancels that login (and frees the callback port).
   */
  async ensureLogin(
    options: { signal?: AbortSignal; force?: boolean } = {},
  ): Promise<LoginOutcome> {
    checkClientMetadataUrl(this.server, this.clientMetadataUrl);
    if (!options.force) {
      const tokens = await this.tokens();
      if (tokens) {
        if (!this.#expiresWithin(0)) return "stored";
        if (tokens.refresh_token && await this.#refresh(options.signal)) return "refreshed";
      }
    }
    const probe = await probeServer(this.#entry, this.#fetch, options.signal);
    if (probe.ok) {
      await this.#requireOAuthMetadata();
      this.#log.info("server answered without asking for authorization", {
        status: probe.status,
      });
      return "not_required";
    }
    const how = await this.#authorize({
      reason: "login",
      scope: probe.scope,
      resourceMetadataUrl: probe.resourceMetadataUrl,
      force: options.force,
      signal: options.signal,
      cancelsLogin: true,
    });
    // The client_credentials grant obtains new tokens without a browser: a login, not a
    // refresh.
    return how === "browser" || this.grant === "client_credentials" ? "authorized" : "refreshed";
  }

  /**
   * Wraps the transport's fetch: presents a fresh token on every request to the server,
   * and answers 401 and 403 `insufficient_scope` by authorizing and retrying, within
   * {@linkcode MAX_REAUTHORIZATIONS} and {@linkcode MAX_STEP_UP_ATTEMPTS}. Requests to
   * other addresses (metadata, token endpoints) only go through the endpoint policy.
   */
  wrapFetch(base: FetchLike = (input, init) => fetch(input, init)): FetchLike {
    // Requests the SDK's transport makes for OAuth itself obey the same endpoint policy.
    const other = this.#guarded(base);
    return async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (!this.#isResourceRequest(url)) return other(input, init);
      const signal = init?.signal ?? undefined;
      await this.#current();
      if (this.#expiresWithin(REFRESH_MARGIN_MS)) await this.#refresh(signal);
      const send = () => this.#send(base, input, init, url);
      let response = await send();
      let reauthorizations = 0;
      let stepUps = 0;
      while (true) {
        if (response.status === 401) {
          const challenge = extractWWWAuthenticateParams(response);
          await response.body?.cancel();
          if (reauthorizations >= MAX_REAUTHORIZATIONS) {
            throw rejectedAfterLoginError(this.server, challenge);
          }
          if (reauthorizations > 0 || this.#discoveryMovedTo(challenge.resourceMetadataUrl)) {
            // Refused again, or pointed elsewhere: the cached metadata may be stale.
            await this.invalidateCredentials("discovery");
          }
          const hadToken = (await this.tokens()) !== undefined;
          await this.#authorize({
            reason: hadToken ? "reauthorize" : "login",
            scope: computeScopeUnion(this.#requestedScope, challenge.scope),
            resourceMetadataUrl: challenge.resourceMetadataUrl,
            // A token the server refused right after a refresh calls for a new login.
            force: reauthorizations > 0,
            signal,
          });
          reauthorizations++;
        } else if (response.status === 403) {
          const challenge = extractWWWAuthenticateParams(response);
          if (challenge.error !== "insufficient_scope") return response;
          await response.body?.cancel();
          if (stepUps >= MAX_STEP_UP_ATTEMPTS) {
            throw insufficientScopeError(this.server, challenge.scope);
          }
          await this.#stepUp(challenge, signal);
          stepUps++;
        } else {
          return response;
        }
        response = await send();
      }
    };
  }

  // ── internals ─────────────────────────────────────────────────────────────────────

  get #configuredScope(): string | undefined {
    const scopes = this.#entry.auth!.scopes;
    return scopes && scopes.length > 0 ? scopes.join(" ") : undefined;
  }

  /** Authorizes once for everyone waiting: concurrent 401s share one login. */
  #authorize(request: AuthorizeRequest): Promise<"refresh" | "browser"> {
    const what = `login to ${this.server}`;
    // A caller already gone starts nothing: a login nobody awaits would fail unheard.
    if (request.signal?.aborted) return Promise.reject(new CancelledError(what));
    const cancelled = () => new CancelledError(what);
    if (this.#inflight) return abortable(this.#inflight, request.signal, cancelled);
    this.#inflight = this.#runAuthorization(request).finally(() => this.#inflight = undefined);
    // A caller whose signal cancels the login hears of it once the login has wound down
    // (callback port released); other callers just stop waiting.
    return request.cancelsLogin
      ? this.#inflight
      : abortable(this.#inflight, request.signal, cancelled);
  }

  async #runAuthorization(request: AuthorizeRequest): Promise<"refresh" | "browser"> {
    checkClientMetadataUrl(this.server, this.clientMetadataUrl);
    if (request.resourceMetadataUrl) {
      await this.#policy.check(request.resourceMetadataUrl, RESOURCE_METADATA_HINT, request.signal);
    }
    this.#reason = request.reason;
    this.#loginSignal = request.cancelsLogin ? request.signal : undefined;
    if (request.scope) {
      this.#requestedScope = computeScopeUnion(this.#requestedScope, request.scope);
    }
    this.#pendingLogin = undefined;
    const result = await this.#auth({
      scope: this.#requestedScope,
      resourceMetadataUrl: request.resourceMetadataUrl,
      forceReauthorization: request.force,
    });
    if (result === "AUTHORIZED") {
      await this.#announce("refresh");
      return "refresh";
    }
    const login = this.#pendingLogin as Promise<void> | undefined;
    if (!login) throw new Error("PatchbayOAuthProvider: the SDK redirected without a URL");
    await login;
    return "browser";
  }

  /** Exchanges the authorization code (the SDK checks `iss` and the PKCE binding). */
  async #redeem(code: string, iss: string | undefined): Promise<void> {
    this.#redactor?.addSecret(code);
    const result = await this.#auth({ authorizationCode: code, iss });
    if (result !== "AUTHORIZED") {
      throw new OAuthFailedError(this.server, {
        reason: "the authorization code could not be exchanged for tokens",
        remedy: `retry the login (/refresh, or patchbay auth login ${this.server})`,
      });
    }
    await this.#announce("browser");
  }

  /**
   * A server that answered without a token must still publish OAuth metadata: one that
   * does not, does not support OAuth, and `auth.method: oauth` on it is a configuration
   * error (CONTRACT.md 5.3), not a server that needs no login.
   */
  async #requireOAuthMetadata(): Promise<void> {
    let found: Awaited<ReturnType<typeof discoverOAuthServerInfo>>;
    try {
      found = await withSdkWarningsLogged(
        this.#log,
        () => discoverOAuthServerInfo(this.serverUrl, { fetchFn: this.#fetch }),
      );
    } catch (error) {
      throw typedOAuthFailure(error, this.#failureContext);
    }
    if (!found.resourceMetadata && !found.authorizationServerMetadata) {
      throw oauthUnsupportedError(this.server, this.serverUrl, found.authorizationServerUrl, true);
    }
  }

  async #announce(how: "browser" | "refresh"): Promise<void> {
    const record = await this.#current();
    const issuer = record?.issuer ?? "";
    const entry = record?.issuers[issuer];
    const what = how === "browser"
      ? "OAuth login complete"
      : this.grant === "client_credentials"
      ? "OAuth tokens obtained with the client_credentials grant"
      : "OAuth tokens refreshed";
    this.#log.info(what, {
      issuer,
      scope: entry?.tokens?.scope,
    });
    this.#onEvent({
      type: "authorized",
      server: this.server,
      how,
      issuer,
      scope: entry?.tokens?.scope,
      expiresAt: entry?.expiresAt,
    });
  }

  /** The SDK's `auth()` with patchbay's fetch, its warnings logged, its errors typed. */
  async #auth(options: Omit<AuthOptions, "serverUrl" | "fetchFn">) {
    try {
      return await withSdkWarningsLogged(
        this.#log,
        () => auth(this, { serverUrl: this.serverUrl, fetchFn: this.#fetch, ...options }),
      );
    } catch (error) {
      throw this.#fallbackRefusal(error) ?? typedOAuthFailure(error, this.#failureContext);
    }
  }

  /**
   * A server without OAuth metadata whose default endpoints (the 2025-03-26 fallback) do
   * not exist or refuse everyone does not support OAuth (CONTRACT.md 5.3): said so, with
   * the endpoint and its answer, rather than as a failed login.
   */
  #fallbackRefusal(error: unknown): OAuthUnsupportedError | undefined {
    const discovery = this.#record?.discovery;
    const last = this.#lastDocument;
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
      this.server,
      this.serverUrl,
      discovery.authorizationServerUrl,
      false,
      { url: last.url, status: last.status },
    );
  }

  async #stepUp(
    challenge: ReturnType<typeof extractWWWAuthenticateParams>,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const granted = (await this.tokens())?.scope;
    const union = computeScopeUnion(this.#requestedScope, granted, challenge.scope);
    if (granted && !isStrictScopeSuperset(union, granted)) {
      // Every scope asked for is already granted: another login cannot help.
      throw insufficientScopeError(this.server, challenge.scope);
    }
    this.#log.info("step-up authorization", { required: challenge.scope, granted });
    await this.#authorize({
      reason: "step_up",
      scope: union,
      resourceMetadataUrl: challenge.resourceMetadataUrl,
      force: true,
      signal,
    });
    const now = (await this.tokens())?.scope;
    if (now && challenge.scope && isStrictScopeSuperset(challenge.scope, now)) {
      throw insufficientScopeError(this.server, challenge.scope, now);
    }
  }

  /** Refreshes with the stored refresh token; `false` when a login is needed instead. */
  async #refresh(signal: AbortSignal | undefined): Promise<boolean> {
    const cancelled = () => new CancelledError(`refreshing the login to ${this.server}`);
    if (signal?.aborted) throw cancelled();
    this.#refreshing ??= this.#runRefresh().finally(() => this.#refreshing = undefined);
    await abortable(this.#refreshing, signal, cancelled);
    return !this.#expiresWithin(0) && (await this.tokens()) !== undefined;
  }

  async #runRefresh(): Promise<void> {
    const record = await this.#reload();
    const issuer = record?.issuer;
    const tokens = issuer ? record?.issuers[issuer]?.tokens : undefined;
    const discovery = record?.discovery;
    if (!issuer || !tokens?.refresh_token || !discovery) return;
    const client = await this.clientInformation({ issuer });
    if (!client) return;
    // Refused endpoints: no refresh there; a login discovers them again.
    if (!await this.#storedDiscoveryUsable(discovery)) return;
    try {
      const fresh = await refreshAuthorization(discovery.authorizationServerUrl, {
        metadata: discovery.authorizationServerMetadata,
        clientInformation: client,
        refreshToken: tokens.refresh_token,
        resource: discovery.resourceMetadata?.resource,
        addClientAuthentication: this.addClientAuthentication,
        dpop: this.dpop ? await this.dpop() : undefined,
        fetchFn: this.#fetch,
      });
      await this.saveTokens({ ...fresh, issuer }, { issuer });
      await this.#announce("refresh");
    } catch (error) {
      if (error instanceof OAuthError) {
        // The refresh token is expired or revoked: forget the tokens so a login follows.
        this.#log.info("OAuth refresh refused; a new login is needed", { error: error.code });
        await this.invalidateCredentials("tokens");
        return;
      }
      // The authorization server is unreachable: keep the tokens; the request decides.
      this.#log.warn("OAuth refresh failed", { error });
    }
  }

  /**
   * One request to the server with the current token: a DPoP-bound token is presented with
   * the `DPoP` scheme and a fresh proof, and a `use_dpop_nonce` challenge is answered once
   * with the nonce the server gave (RFC 9449 §9); a second challenge is a nonce loop.
   */
  async #send(
    base: FetchLike,
    input: Parameters<FetchLike>[0],
    init: RequestInit | undefined,
    url: URL,
  ): Promise<Response> {
    const session = this.dpop ? await this.dpop() : undefined;
    const response = await base(input, await this.#withCurrentToken(init, url, session));
    const bound = session && (await this.tokens())?.token_type?.toLowerCase() === "dpop";
    if (!bound) return response;
    session.observeNonce(response, url);
    if (!isDpopNonceChallenge(response) || !response.headers.has("dpop-nonce")) return response;
    await response.body?.cancel();
    this.#log.info("DPoP nonce challenge from the server; retrying once with its nonce");
    const retried = await base(input, await this.#withCurrentToken(init, url, session));
    session.observeNonce(retried, url);
    if (isDpopNonceChallenge(retried)) {
      await retried.body?.cancel();
      throw dpopNonceLoopError(this.server, `the MCP server ${this.serverUrl.href}`);
    }
    return retried;
  }

  async #withCurrentToken(
    init: RequestInit | undefined,
    url: URL,
    session: DpopSession | undefined,
  ): Promise<RequestInit> {
    const tokens = await this.tokens();
    const token = tokens?.access_token;
    if (!token) return init ?? {};
    const headers = new Headers(init?.headers);
    if (session && tokens.token_type?.toLowerCase() === "dpop") {
      // A DPoP-bound token is useless without its proof (RFC 9449 §7.1): fresh per request.
      const htm = (init?.method ?? "GET").toUpperCase();
      headers.set("authorization", `DPoP ${token}`);
      headers.set("dpop", await session.buildProof({ htm, htu: url, accessToken: token }));
    } else {
      headers.set("authorization", `Bearer ${token}`);
      headers.delete("dpop");
    }
    return { ...init, headers };
  }

  /** `private_key_jwt` with the SDK's signer, its failures typed. */
  #privateKeyJwt(clientId: string, privateKey: string): AddClientAuthentication {
    const settings = this.#entry.auth!;
    let key: string | Record<string, unknown> = privateKey;
    const text = privateKey.trim();
    if (text.startsWith("{")) {
      try {
        key = JSON.parse(text) as Record<string, unknown>;
      } catch {
        // Not JSON after all: the signer reports it as an unreadable key.
      }
    }
    const sign = createPrivateKeyJwtAuth({
      issuer: clientId,
      subject: clientId,
      privateKey: key,
      alg: settings.privateKeyAlg ?? DEFAULTS.oauth.privateKeyAlg,
    });
    return async (headers, params, url, metadata) => {
      try {
        await sign(headers, params, url, metadata);
      } catch (error) {
        throw new OAuthFailedError(this.server, {
          reason: `the private key in ${settings.privateKeySource ?? "auth.private_key"} could ` +
            `not sign a ${settings.privateKeyAlg ?? DEFAULTS.oauth.privateKeyAlg} client ` +
            `assertion (${(error as Error).message.split("\n")[0].slice(0, 160)})`,
          remedy: "give a PKCS#8 PEM (-----BEGIN PRIVATE KEY-----) or a private JWK, and set " +
            "auth.private_key_alg to the algorithm the key is for (RS256 for RSA, ES256 for " +
            "P-256, EdDSA for Ed25519)",
          cause: error,
        });
      }
    };
  }

  /** Every part of a private key is a secret: the PEM, its lines, a JWK's private members. */
  #registerPrivateKey(privateKey: string): void {
    for (const secret of privateKeySecrets(privateKey)) this.#redactor?.addSecret(secret);
  }

  /**
   * The DPoP key of this server: the one stored with its tokens (they are bound to it), or
   * a new P-256 key, stored before any token is asked for with it.
   */
  async #dpopSession(): Promise<DpopSession> {
    const stored = (await this.#current())?.dpopKey;
    if (stored) {
      this.#redactor?.addSecret(stored.privateJwk.d);
      try {
        return await DpopSession.create({ keyPair: await loadDpopKeyPair(stored) });
      } catch (error) {
        this.#log.warn("the stored DPoP key cannot be used; making a new one", { error });
      }
    }
    const fresh = await newDpopKey();
    this.#redactor?.addSecret(fresh.stored.privateJwk.d);
    await this.#update((record) => {
      record.dpopKey = fresh.stored;
      // Tokens bound to another key are useless with this one.
      for (const entry of Object.values(record.issuers)) {
        if (entry.tokens?.token_type?.toLowerCase() === "dpop") {
          entry.tokens = undefined;
          entry.expiresAt = undefined;
        }
      }
    });
    return await DpopSession.create({ keyPair: fresh.keyPair });
  }

  /** Requests to the MCP server itself, not to metadata or authorization endpoints. */
  #isResourceRequest(url: URL): boolean {
    if (url.origin !== this.serverUrl.origin) return false;
    if (url.pathname.startsWith("/.well-known/")) return false;
    const discovery = this.#record?.discovery;
    return !USED_ENDPOINTS.some(([field]) => sameEndpoint(endpointOf(discovery, field), url));
  }

  /** The server names protected-resource metadata other than the cached one. */
  #discoveryMovedTo(resourceMetadataUrl: URL | undefined): boolean {
    const cached = this.#record?.discovery?.resourceMetadataUrl;
    return resourceMetadataUrl !== undefined && cached !== undefined &&
      cached !== resourceMetadataUrl.href;
  }

  #expiresWithin(ms: number): boolean {
    const record = this.#record;
    const entry = record?.issuer ? record.issuers[record.issuer] : undefined;
    if (entry?.expiresAt === undefined) return false;
    // Short-lived tokens get a proportionate margin, not one longer than their life.
    const lifetime = entry.expiresAt - (entry.obtainedAt ?? entry.expiresAt);
    const margin = Math.min(ms, lifetime / 10);
    return entry.expiresAt - margin <= this.#now();
  }

  get #failureContext(): FailureContext {
    return {
      server: this.server,
      serverUrl: this.serverUrl,
      redirectUri: this.#broker.redirectUri,
      lastDocument: this.#lastDocument,
      grant: this.grant,
      clientAuthentication: this.clientAuthentication,
      privateKeySource: this.#entry.auth!.privateKeySource,
    };
  }

  /** `base` behind the endpoint policy, naming each address by its role in the metadata. */
  #guarded(base: FetchLike): FetchLike {
    return guardedFetch(base, {
      policy: this.#policy,
      roleOf: (url) => this.#roleOf(url),
      onResponse: (document) => this.#lastDocument = document,
    });
  }

  /**
   * Checks every address of `state` patchbay will request or open: the metadata URLs
   * and the endpoints it uses (authorization, token, registration, revocation).
   */
  async #checkEndpoints(state: OAuthDiscoveryState): Promise<void> {
    if (state.resourceMetadataUrl) {
      await this.#policy.check(state.resourceMetadataUrl, RESOURCE_METADATA_HINT);
    }
    await this.#policy.check(state.authorizationServerUrl, AUTHORIZATION_SERVER);
    for (const [field, credentials] of USED_ENDPOINTS) {
      const value = endpointOf(state, field);
      if (value === undefined) continue;
      await this.#policy.check(String(value), { ...endpointRole(state, field), credentials });
    }
  }

  /** Whether stored discovery passes the endpoint policy; if not, it is forgotten. */
  async #storedDiscoveryUsable(state: OAuthDiscoveryState): Promise<boolean> {
    try {
      await this.#checkEndpoints(state);
      return true;
    } catch (error) {
      if (!(error instanceof OAuthEndpointRefusedError)) throw error;
      this.#log.warn("stored OAuth discovery names a refused address; discovering again", {
        endpoint: error.endpoint,
        reason: error.reason,
      });
      await this.invalidateCredentials("discovery");
      return false;
    }
  }

  /** What `url` is in the discovered metadata, for messages. */
  #roleOf(url: URL): EndpointRole | undefined {
    const discovery = this.#record?.discovery;
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

  #registerTokens(tokens: StoredOAuthTokens): void {
    this.#redactor?.addSecret(tokens.access_token);
    this.#redactor?.addSecret(tokens.refresh_token);
    this.#redactor?.addSecret(tokens.id_token);
  }

  /** The record in memory (loaded once), or undefined if it is for another URL. */
  async #current(): Promise<ServerCredentials | undefined> {
    if (!this.#loaded) await this.#reload();
    return this.#record;
  }

  async #reload(): Promise<ServerCredentials | undefined> {
    let stored: ServerCredentials | undefined;
    try {
      stored = await this.#store.load(this.server);
    } catch (error) {
      // A re-read only looks for another process's refresh: with the store unreachable
      // (Redis away), the login in memory is still this process's latest, so requests go
      // on with it. A first read has nothing to fall back on and fails, and so does any
      // other failure (a damaged document, a refused read), which the person must see.
      if (!this.#loaded || !(error instanceof StoreConnectError)) throw error;
      this.#log.warn("could not read the stored OAuth login again; using the one in memory", {
        error,
      });
      return this.#record;
    }
    this.#loaded = true;
    // Tokens are bound to the URL they were obtained for: never sent to a changed one.
    this.#record = stored?.serverUrl === this.serverUrl.href ? stored : undefined;
    if (stored && !this.#record) {
      this.#log.info("stored OAuth credentials are for another URL; ignoring them", {
        stored: stored.serverUrl,
      });
    }
    for (const entry of Object.values(this.#record?.issuers ?? {})) {
      if (entry.tokens) this.#registerTokens(entry.tokens);
      this.#redactor?.addSecret(entry.client?.client_secret);
    }
    return this.#record;
  }

  async #update(change: (record: ServerCredentials) => void): Promise<void> {
    const record = structuredClone(
      (await this.#current()) ?? emptyCredentials(this.server, this.serverUrl.href),
    );
    change(record);
    // In memory before the store is asked: when it cannot take the record, what was just
    // obtained (a rotated refresh token cannot be obtained again) still serves the rest of
    // this session; the store's error tells the person what the next one needs.
    this.#record = record;
    await this.#store.save(record);
  }
}

/** The `resource_metadata` of a server's `WWW-Authenticate` challenge. */
const RESOURCE_METADATA_HINT: EndpointRole = {
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
const USED_ENDPOINTS: ReadonlyArray<readonly [string, boolean]> = [
  ["authorization_endpoint", false],
  ["token_endpoint", true],
  ["registration_endpoint", false],
  ["revocation_endpoint", true],
];

/**
 * The address of an endpoint patchbay uses: from the authorization server's metadata, or,
 * for a server that publishes none (the 2025-03-26 fallback), the default path on the
 * authorization server's origin, which is then the MCP server's own.
 */
function endpointOf(
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

function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
}
