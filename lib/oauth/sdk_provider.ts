/**
 * The SDK side of one server's OAuth client: an `OAuthClientProvider`, what the SDK's
 * `auth()` and transports read and store through it (the client registration, tokens per
 * issuer, discovery results, the PKCE verifier, the client metadata and grant hooks) and
 * the browser redirect, handed to the {@linkcode AuthorizationBroker}.
 *
 * Discovery results are checked before they are kept (policy.ts, and every address
 * against the {@linkcode EndpointPolicy}: discovered_endpoints.ts), and checked again when
 * read back. Tokens and client secrets are registered with the log's redactor the moment
 * they exist. The flow around it (logins, refresh, retried requests) is
 * `PatchbayOAuthProvider` (provider.ts), which extends this class.
 *
 * @module
 */

import { parseErrorResponse } from "@modelcontextprotocol/client";
import type {
  AddClientAuthentication,
  DpopSession,
  FetchLike,
  OAuthClientInformationContext,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import type { HttpServerConfig, OAuthSettings } from "../config/types.ts";
import { OAuthEndpointRefusedError } from "../errors.ts";
import type { Log } from "../log/log.ts";
import type { Redactor } from "../redact/redact.ts";
import type { AuthorizationBroker, AuthorizationReason, OAuthEvent } from "./broker.ts";
import {
  type ClientAuthentication,
  clientAuthenticationOf,
  clientCredentialsRequest,
  clientMetadataFor,
  type Grant,
  grantOf,
  JWT_BEARER_GRANT_TYPE,
  privateKeyJwt,
  usesBrowser,
} from "./client_auth.ts";
import { type GrantTarget, organisationTokenRequest } from "./org_grants.ts";
import { idpFetch } from "./token_exchange.ts";
import { CredentialCache } from "./credential_cache.ts";
import { checkEndpoints, roleOf } from "./discovered_endpoints.ts";
import { EndpointPolicy } from "./endpoint_policy.ts";
import type { Resolver } from "./host_location.ts";
import { type FetchedDocument, guardedFetch } from "./guarded_fetch.ts";
import { type FailureContext, oversizedTokenError } from "./login_errors.ts";
import { oversizedToken } from "./answer_limits.ts";
import { checkDiscovery } from "./policy.ts";
import { dpopSessionFor } from "./resource_requests.ts";
import type { IssuerCredentials, TokenStore } from "./token_store.ts";

/** Options of `PatchbayOAuthProvider`. */
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

/** The SDK `OAuthClientProvider` of one server; the login flow is its subclass's. */
export abstract class SdkOAuthProvider implements OAuthClientProvider {
  readonly server: string;
  readonly serverUrl: URL;
  protected readonly entry: HttpServerConfig;
  protected readonly broker: AuthorizationBroker;
  protected readonly log: Log;
  protected readonly redactor?: Redactor;
  protected readonly onEvent: (event: OAuthEvent) => void;
  /** The stored record of this server, cached. */
  protected readonly credentials: CredentialCache;
  /** The caller's fetch behind the endpoint policy: every OAuth request goes through it. */
  protected readonly oauthFetch: FetchLike;
  protected readonly policy: EndpointPolicy;
  protected readonly now: () => number;
  /** What the next browser login is for, for the broker's messages. */
  protected reason: AuthorizationReason = "login";
  /** Cancels the next browser login itself (a person's own cancellation only). */
  protected loginSignal: AbortSignal | undefined;
  /** The browser login the last redirect started, for whoever asked for it. */
  protected pendingLogin: Promise<void> | undefined;
  /** The last OAuth answer (a metadata document), to report an invalid one with its values. */
  #lastDocument: FetchedDocument | undefined;
  #codeVerifier: string | undefined;
  #state: string | undefined;
  /** The browser login in progress (queued or waiting for the person), for the clock. */
  #browserLogin: { started: number; done: Promise<void> } | undefined;
  #loginMs = 0;
  #dpop: Promise<DpopSession> | undefined;
  /** Where the SDK's discovery last said tokens come from (organisation grants). */
  #target: GrantTarget = {};
  /** JWT bearer token requests in the current `auth()` run (organisation grants). */
  #jwtRequests = 0;
  /** The authorization server's refusal of the last JWT bearer token request. */
  #jwtRefusal: Error | undefined;

  /**
   * The token request of a grant without a browser (set only for `client_credentials`,
   * `jwt_bearer` and `token_exchange`: the SDK then asks for tokens without a browser).
   */
  prepareTokenRequest?: (scope?: string) => URLSearchParams | Promise<URLSearchParams>;
  /** `private_key_jwt` client authentication (set only when the entry has a private key). */
  addClientAuthentication?: AddClientAuthentication;
  /**
   * The DPoP session (set only with `auth.dpop`): the SDK signs token requests with it, and
   * `wrapFetch` every request to the server.
   */
  dpop?: () => Promise<DpopSession>;

  constructor(options: OAuthProviderOptions) {
    if (!options.server.auth) {
      throw new Error(`PatchbayOAuthProvider: server '${options.server.name}' has no auth`);
    }
    this.entry = options.server;
    this.server = options.server.name;
    this.serverUrl = new URL(options.server.url);
    this.broker = options.broker;
    this.log = options.log;
    this.redactor = options.redactor;
    this.onEvent = options.onEvent ?? (() => {});
    this.credentials = new CredentialCache({
      server: this.server,
      serverUrl: this.serverUrl,
      store: options.store,
      log: options.log,
      redactor: options.redactor,
    });
    this.policy = new EndpointPolicy({
      server: options.server.name,
      serverUrl: this.serverUrl,
      allowInternalHosts: options.server.auth.allowInternalHosts,
      resolve: options.resolve,
    });
    const base: FetchLike = options.fetch ?? ((input, init) => fetch(input, init));
    this.oauthFetch = this.guarded(base);
    this.now = options.now ?? Date.now;
    const settings = options.server.auth;
    this.redactor?.addSecret(settings.clientSecret);
    if (this.grant === "client_credentials") this.prepareTokenRequest = clientCredentialsRequest;
    if (this.grant === "jwt_bearer" || this.grant === "token_exchange") {
      let idp: FetchLike | undefined;
      const prepare = organisationTokenRequest({
        server: this.server,
        serverUrl: this.serverUrl,
        settings,
        target: () => this.#target,
        idpFetch: () =>
          idp ??= idpFetch(this.server, settings.idp ?? {}, base, {
            allowInternalHosts: settings.allowInternalHosts,
            resolve: options.resolve,
          }),
        redactor: this.redactor,
      });
      // The SDK's auth() asks once more after invalid_grant or invalid_client; a refused
      // JWT is reported instead, neither presented again nor replaced by another grant.
      this.prepareTokenRequest = (scope) => {
        if (this.#jwtRequests++ > 0 && this.#jwtRefusal) throw this.#jwtRefusal;
        return prepare(scope);
      };
    }
    const { clientId, privateKey } = settings;
    if (privateKey !== undefined && clientId !== undefined) {
      this.addClientAuthentication = privateKeyJwt(
        this.server,
        { ...settings, clientId, privateKey },
        this.redactor,
      );
    }
    if (settings.dpop) {
      this.dpop = () =>
        this.#dpop ??= dpopSessionFor(this.credentials, {
          log: this.log,
          redactor: this.redactor,
        });
    }
  }

  /** The entry's `auth` settings. */
  protected get settings(): OAuthSettings {
    return this.entry.auth!;
  }

  /** How tokens are obtained for this server. */
  get grant(): Grant {
    return grantOf(this.settings);
  }

  /** How the client authenticates at the token endpoint. */
  get clientAuthentication(): ClientAuthentication {
    return clientAuthenticationOf(this.settings);
  }

  // ── OAuthClientProvider ───────────────────────────────────────────────────────────

  /** The callback for a browser login; none for the grants without a browser. */
  get redirectUrl(): string | undefined {
    return usesBrowser(this.grant) ? this.broker.redirectUri : undefined;
  }

  /** The SDK tells the authorization server's issuer it found (the ID-JAG's audience). */
  saveAuthorizationServerUrl(issuer: string): void {
    this.#target = { ...this.#target, authorizationServer: issuer };
  }

  /** The SDK tells the resource identifier it found (the ID-JAG's resource). */
  saveResourceUrl(resource: string): void {
    this.#target = { ...this.#target, resource };
  }

  get clientMetadataUrl(): string | undefined {
    return this.settings.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return clientMetadataFor(this.settings, this.broker.redirectUri);
  }

  state(): string {
    this.#state = randomToken();
    return this.#state;
  }

  async clientInformation(
    ctx?: OAuthClientInformationContext,
  ): Promise<StoredOAuthClientInformation | undefined> {
    const record = await this.credentials.current();
    const issuer = ctx?.issuer ?? record?.issuer;
    const { clientId, clientSecret } = this.settings;
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
    if (client.client_id === this.settings.clientId) return;
    const issuer = ctx?.issuer ?? client.issuer;
    if (!issuer) return;
    this.redactor?.addSecret(client.client_secret);
    await this.credentials.update((record) => {
      record.issuers[issuer] = { ...record.issuers[issuer], client: { ...client, issuer } };
    });
    this.log.info("registered OAuth client", { issuer, client_id: client.client_id });
  }

  async tokens(ctx?: OAuthClientInformationContext): Promise<StoredOAuthTokens | undefined> {
    // With a context the SDK is about to decide on a refresh or a login: read the store
    // again, in case another patchbay process refreshed meanwhile (refresh tokens may be
    // single-use). Without one, it is the per-request read: memory suffices.
    const record = ctx ? await this.credentials.reload() : await this.credentials.current();
    const issuer = ctx?.issuer ?? record?.issuer;
    return issuer ? record?.issuers[issuer]?.tokens : undefined;
  }

  async saveTokens(tokens: StoredOAuthTokens, ctx?: OAuthClientInformationContext): Promise<void> {
    const issuer = ctx?.issuer ?? tokens.issuer ?? this.credentials.record?.issuer;
    if (!issuer) throw new Error("PatchbayOAuthProvider: tokens without an issuer");
    // Never stored: it would be sent in every request's header, and read at every start.
    const oversized = oversizedToken(tokens);
    if (oversized) throw oversizedTokenError(this.server, issuer, oversized);
    this.credentials.registerTokens(tokens);
    const now = this.now();
    await this.credentials.update((record) => {
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
    const metadata = this.credentials.record?.discovery?.authorizationServerMetadata;
    const state = authorizationUrl.searchParams.get("state") ?? this.#state ?? "";
    const login = this.broker.authorize({
      server: this.server,
      url: authorizationUrl,
      state,
      issuer: metadata?.issuer,
      issRequired: metadata?.authorization_response_iss_parameter_supported === true,
      reason: this.reason,
      scope: authorizationUrl.searchParams.get("scope") ?? undefined,
      signal: this.loginSignal,
    }, ({ code, iss }) => this.redeem(code, iss));
    // Whoever started the login awaits it; if nobody does (a transport used without
    // wrapFetch), its failure is logged rather than left unhandled.
    login.catch((error) => this.log.warn("OAuth login failed", { error }));
    this.pendingLogin = login;
    const started = Date.now();
    const done = login.then(() => {}, () => {}).then(() => {
      this.#loginMs += Date.now() - started;
      if (this.#browserLogin?.done === done) this.#browserLogin = undefined;
    });
    this.#browserLogin = { started, done };
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.redactor?.addSecret(codeVerifier);
    this.#codeVerifier = codeVerifier;
  }

  codeVerifier(): string {
    if (!this.#codeVerifier) throw new Error("PatchbayOAuthProvider: no PKCE code verifier");
    return this.#codeVerifier;
  }

  async invalidateCredentials(
    scope: "all" | "client" | "tokens" | "verifier" | "discovery",
  ): Promise<void> {
    this.log.info("discarding stored OAuth credentials", { scope });
    if (scope === "verifier" || scope === "all") this.#codeVerifier = undefined;
    if (scope === "verifier") return;
    if (scope === "all") {
      await this.credentials.delete();
      // The DPoP key went with the record: the next tokens are bound to a new one.
      this.#dpop = undefined;
      return;
    }
    await this.credentials.update((record) => {
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
    const state = (await this.credentials.current())?.discovery;
    // Checked again, not trusted from the store: addresses may resolve differently now,
    // and a state stored by an older patchbay was never checked. One that fails is
    // forgotten, so discovery runs again (and is checked again when saved).
    return state && await this.storedDiscoveryUsable(state) ? state : undefined;
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    const record = await this.credentials.current();
    checkDiscovery(state, {
      server: this.server,
      serverUrl: this.serverUrl,
      redirectUri: this.broker.redirectUri,
      grant: this.grant,
      clientMetadataUrl: this.clientMetadataUrl,
      hasClient: (issuer) =>
        this.settings.clientId !== undefined || record?.issuers[issuer]?.client !== undefined,
    });
    // Before the SDK registers a client or builds the authorization URL with it.
    await checkEndpoints(this.policy, state);
    await this.credentials.update((record) => {
      record.discovery = state;
    });
  }

  // ── the login clock ───────────────────────────────────────────────────────────────

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

  // ── for the flow ──────────────────────────────────────────────────────────────────

  /** Exchanges the authorization code the broker received for tokens. */
  protected abstract redeem(code: string, iss: string | undefined): Promise<void>;

  /** The last OAuth answer received (a metadata document, a token endpoint's answer). */
  protected get lastDocument(): FetchedDocument | undefined {
    return this.#lastDocument;
  }

  /** What the messages of a failed OAuth step need. */
  protected get failureContext(): FailureContext {
    return {
      server: this.server,
      serverUrl: this.serverUrl,
      redirectUri: this.broker.redirectUri,
      lastDocument: this.#lastDocument,
      grant: this.grant,
      clientAuthentication: this.clientAuthentication,
      privateKeySource: this.settings.privateKeySource,
      assertionField: this.grant === "jwt_bearer"
        ? this.settings.assertion?.field
        : this.grant === "token_exchange"
        ? this.settings.idp?.subjectToken?.field
        : undefined,
    };
  }

  /** A new `auth()` run starts: its JWT bearer token request is its first. */
  protected beginAuthorization(): void {
    this.#jwtRequests = 0;
    this.#jwtRefusal = undefined;
  }

  /** `base` behind the endpoint policy, naming each address by its role in the metadata. */
  protected guarded(base: FetchLike): FetchLike {
    const seen: FetchLike = async (input, init) => {
      const response = await base(input, init);
      const body = init?.body;
      if (
        !response.ok && body instanceof URLSearchParams &&
        body.get("grant_type") === JWT_BEARER_GRANT_TYPE
      ) {
        this.#jwtRefusal = await parseErrorResponse(response.clone()).catch(() => undefined);
      }
      return response;
    };
    return guardedFetch(seen, {
      policy: this.policy,
      roleOf: (url) => roleOf(this.credentials.record?.discovery, url),
      onResponse: (document) => this.#lastDocument = document,
    });
  }

  /** Whether stored discovery passes the endpoint policy; if not, it is forgotten. */
  protected async storedDiscoveryUsable(state: OAuthDiscoveryState): Promise<boolean> {
    try {
      await checkEndpoints(this.policy, state);
      return true;
    } catch (error) {
      if (!(error instanceof OAuthEndpointRefusedError)) throw error;
      this.log.warn("stored OAuth discovery names a refused address; discovering again", {
        endpoint: error.endpoint,
        reason: error.reason,
      });
      await this.invalidateCredentials("discovery");
      return false;
    }
  }
}

function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
}
