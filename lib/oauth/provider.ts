/**
 * The OAuth client for one MCP server: the SDK's `OAuthClientProvider` (sdk_provider.ts)
 * with the parts of the MCP authorization specification the SDK leaves to the host.
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
 *   `EndpointPolicy` before it is requested or opened: discovered endpoints as soon as
 *   discovery ends, before registration or any browser (discovered_endpoints.ts); each
 *   request again, with its host resolved then (guarded_fetch.ts);
 * - tokens and client secrets registered with the log's redactor the moment they exist;
 * - a clock of the time spent waiting for the person (a `LoginClock`, see
 *   lib/async/wait_clock.ts), which the connection layer's timeouts leave out.
 *
 * @module
 */

import {
  auth,
  type AuthOptions,
  computeScopeUnion,
  extractWWWAuthenticateParams,
  type FetchLike,
  isStrictScopeSuperset,
  OAuthError,
  refreshAuthorization,
} from "@modelcontextprotocol/client";
import { abortable } from "../async/abortable.ts";
import { CancelledError, OAuthFailedError } from "../errors.ts";
import { STEPS } from "../errors/failure_table.ts";
import type { AuthorizationReason } from "./broker.ts";
import { probeServer } from "./challenge_probe.ts";
import { configuredScope, usesBrowser } from "./client_auth.ts";
import { fallbackRefusal, isUsedEndpoint, RESOURCE_METADATA_HINT } from "./discovered_endpoints.ts";
import {
  insufficientScopeError,
  rejectedAfterLoginError,
  typedOAuthFailure,
} from "./login_errors.ts";
import { checkClientMetadataUrl, requireOAuthMetadata } from "./policy.ts";
import { sendWithToken } from "./resource_requests.ts";
import { type OAuthProviderOptions, SdkOAuthProvider } from "./sdk_provider.ts";
import { withSdkWarningsLogged } from "./sdk_warnings.ts";

export type { OAuthProviderOptions } from "./sdk_provider.ts";

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
export class PatchbayOAuthProvider extends SdkOAuthProvider {
  /** The union of configured and challenged scopes requested so far. */
  #requestedScope: string | undefined;
  #inflight: Promise<"refresh" | "browser"> | undefined;
  #refreshing: Promise<void> | undefined;

  constructor(options: OAuthProviderOptions) {
    super(options);
    this.#requestedScope = configuredScope(this.settings);
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
    const probe = await probeServer(this.entry, this.oauthFetch, options.signal);
    if (probe.ok) {
      await requireOAuthMetadata(() => this.failureContext, this.oauthFetch, this.log);
      this.log.info("server answered without asking for authorization", {
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
    // The grants without a browser obtain new tokens that way: a login, not a refresh.
    return how === "browser" || !usesBrowser(this.grant) ? "authorized" : "refreshed";
  }

  /**
   * Wraps the transport's fetch: presents a fresh token on every request to the server,
   * and answers 401 and 403 `insufficient_scope` by authorizing and retrying, within
   * {@linkcode MAX_REAUTHORIZATIONS} and {@linkcode MAX_STEP_UP_ATTEMPTS}. Requests to
   * other addresses (metadata, token endpoints) only go through the endpoint policy.
   */
  wrapFetch(base: FetchLike = (input, init) => fetch(input, init)): FetchLike {
    // Requests the SDK's transport makes for OAuth itself obey the same endpoint policy.
    const other = this.guarded(base);
    return async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (!this.#isResourceRequest(url)) return other(input, init);
      const signal = init?.signal ?? undefined;
      await this.credentials.current();
      if (this.#expiresWithin(REFRESH_MARGIN_MS)) await this.#refresh(signal);
      const send = async () =>
        sendWithToken(base, input, init, url, {
          server: this.server,
          serverUrl: this.serverUrl,
          tokens: () => this.tokens(),
          session: this.dpop ? await this.dpop() : undefined,
          log: this.log,
        });
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

  /** Authorizes once for everyone waiting: concurrent 401s share one login. */
  #authorize(request: AuthorizeRequest): Promise<"refresh" | "browser"> {
    const what = `login to ${this.server}`;
    const cancelled = () => new CancelledError(what);
    // A caller already gone starts nothing: a login nobody awaits would fail unheard.
    if (request.signal?.aborted) return Promise.reject(cancelled());
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
      await this.policy.check(request.resourceMetadataUrl, RESOURCE_METADATA_HINT, request.signal);
    }
    this.reason = request.reason;
    this.loginSignal = request.cancelsLogin ? request.signal : undefined;
    if (request.scope) {
      this.#requestedScope = computeScopeUnion(this.#requestedScope, request.scope);
    }
    this.pendingLogin = undefined;
    const result = await this.#auth({
      scope: this.#requestedScope,
      resourceMetadataUrl: request.resourceMetadataUrl,
      forceReauthorization: request.force,
    });
    if (result === "AUTHORIZED") {
      await this.#announce("refresh");
      return "refresh";
    }
    const login = this.pendingLogin as Promise<void> | undefined;
    if (!login) throw new Error("PatchbayOAuthProvider: the SDK redirected without a URL");
    await login;
    return "browser";
  }

  /** Exchanges the authorization code (the SDK checks `iss` and the PKCE binding). */
  protected async redeem(code: string, iss: string | undefined): Promise<void> {
    this.redactor?.addSecret(code);
    const result = await this.#auth({ authorizationCode: code, iss });
    if (result !== "AUTHORIZED") {
      throw new OAuthFailedError(this.server, {
        reason: "the authorization code could not be exchanged for tokens",
        remedy: STEPS.retryLogin(this.server),
      });
    }
    await this.#announce("browser");
  }

  async #announce(how: "browser" | "refresh"): Promise<void> {
    const record = await this.credentials.current();
    const issuer = record?.issuer ?? "";
    const entry = record?.issuers[issuer];
    const what = how === "browser"
      ? "OAuth login complete"
      : !usesBrowser(this.grant)
      ? `OAuth tokens obtained with the ${this.grant} grant`
      : "OAuth tokens refreshed";
    this.log.info(what, {
      issuer,
      scope: entry?.tokens?.scope,
    });
    this.onEvent({
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
    this.beginAuthorization();
    try {
      return await withSdkWarningsLogged(
        this.log,
        () => auth(this, { serverUrl: this.serverUrl, fetchFn: this.oauthFetch, ...options }),
      );
    } catch (error) {
      throw fallbackRefusal(error, {
        server: this.server,
        serverUrl: this.serverUrl,
        discovery: this.credentials.record?.discovery,
        lastDocument: this.lastDocument,
      }) ?? typedOAuthFailure(error, this.failureContext);
    }
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
    this.log.info("step-up authorization", { required: challenge.scope, granted });
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
    const record = await this.credentials.reload();
    const issuer = record?.issuer;
    const tokens = issuer ? record?.issuers[issuer]?.tokens : undefined;
    const discovery = record?.discovery;
    if (!issuer || !tokens?.refresh_token || !discovery) return;
    const client = await this.clientInformation({ issuer });
    if (!client) return;
    // Refused endpoints: no refresh there; a login discovers them again.
    if (!await this.storedDiscoveryUsable(discovery)) return;
    try {
      const fresh = await refreshAuthorization(discovery.authorizationServerUrl, {
        metadata: discovery.authorizationServerMetadata,
        clientInformation: client,
        refreshToken: tokens.refresh_token,
        resource: discovery.resourceMetadata?.resource,
        addClientAuthentication: this.addClientAuthentication,
        dpop: this.dpop ? await this.dpop() : undefined,
        fetchFn: this.oauthFetch,
      });
      await this.saveTokens({ ...fresh, issuer }, { issuer });
      await this.#announce("refresh");
    } catch (error) {
      if (error instanceof OAuthError) {
        // The refresh token is expired or revoked: forget the tokens so a login follows.
        this.log.info("OAuth refresh refused; a new login is needed", { error: error.code });
        await this.invalidateCredentials("tokens");
        return;
      }
      // The authorization server is unreachable: keep the tokens; the request decides.
      this.log.warn("OAuth refresh failed", { error });
    }
  }

  /** Requests to the MCP server itself, not to metadata or authorization endpoints. */
  #isResourceRequest(url: URL): boolean {
    if (url.origin !== this.serverUrl.origin) return false;
    if (url.pathname.startsWith("/.well-known/")) return false;
    return !isUsedEndpoint(this.credentials.record?.discovery, url);
  }

  /** The server names protected-resource metadata other than the cached one. */
  #discoveryMovedTo(resourceMetadataUrl: URL | undefined): boolean {
    const cached = this.credentials.record?.discovery?.resourceMetadataUrl;
    return resourceMetadataUrl !== undefined && cached !== undefined &&
      cached !== resourceMetadataUrl.href;
  }

  #expiresWithin(ms: number): boolean {
    return this.credentials.expiresWithin(ms, this.now());
  }
}
