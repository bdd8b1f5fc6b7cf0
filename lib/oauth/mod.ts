/**
 * OAuth for MCP servers, and the seam the connection layer plugs into.
 *
 * ```ts
 * // Once per session, when the first entry that uses OAuth appears (the manager calls
 * // lib/connections/open.ts's factory, at start or at a /refresh): while none does, no
 * // callback listener ever exists (docs/authentication.md). Logins are kept in files, or
 * // in Redis when Memory.backend is "redis".
 * const store = tokenStoreFor(config.memory, env, { redactor, log, onEvent });
 * const oauth = new OAuthRuntime({ log, redactor, onEvent, getEnv, store });
 *
 * // Per HTTP server, for every connection attempt (lib/connections/server_session.ts):
 * const provider = oauth?.providerFor(server);           // the same instance each time
 * if (provider) await provider.ensureLogin({ signal });   // stored, refreshed or a browser
 *                                                         // login; abort cancels it
 * new StreamableHTTPClientTransport(new URL(server.url), {
 *   authProvider: provider,
 *   fetch: provider
 *     ? provider.wrapFetch(fetch)                         // 401/403 on any request:
 *     : bearerFetch(server, { log }),                     // log in again and retry
 *   requestInit: { headers: server.headers },
 * });
 * // Deadlines leave out provider.loginMs (a LoginClock): a person logging in is not a
 * // server timing out.
 *
 * await oauth?.close();                                   // at exit (the manager does it)
 * ```
 *
 * @module
 */

import type { FetchLike } from "@modelcontextprotocol/client";
import type { ServerConfig } from "../config/types.ts";
import { usesOAuth } from "./uses_oauth.ts";
import type { Log } from "../log/log.ts";
import { ProxyRouter } from "../proxy.ts";
import type { Redactor } from "../redact/redact.ts";
import { type BrowserOpener, openBrowser } from "./browser.ts";
import { AuthorizationBroker, type OAuthEvent } from "./broker.ts";
import type { Resolver } from "./host_location.ts";
import { PatchbayOAuthProvider } from "./provider.ts";
import { FileTokenStore, type TokenStore } from "./token_store.ts";
import { loginFailureWords } from "./messages.ts";
import type { Surface } from "../errors/failure_table.ts";

export { type AuthorizationReason, type OAuthEvent } from "./broker.ts";
export { bearerFetch, hasAuthorizationHeader } from "./bearer.ts";
export { type BrowserOpener, openBrowser } from "./browser.ts";
export { CALLBACK_PORT, CALLBACK_TIMEOUT_MS, redirectUriFor } from "./callback.ts";
export { EndpointPolicy, type EndpointRole } from "./endpoint_policy.ts";
export {
  type AddressKind,
  classifyAddress,
  type Resolver,
  systemResolver,
} from "./host_location.ts";
export { guardedFetch } from "./guarded_fetch.ts";
export { logout, type LogoutResult } from "./logout.ts";
export {
  type LoginOutcome,
  MAX_REAUTHORIZATIONS,
  MAX_STEP_UP_ATTEMPTS,
  PatchbayOAuthProvider,
} from "./provider.ts";
export { RedisTokenStore, tokenStoreFor } from "./redis_token_store.ts";
export { FileTokenStore, type ServerCredentials, type TokenStore } from "./token_store.ts";

export { type OAuthServerConfig, usesOAuth } from "./uses_oauth.ts";

/** Options of {@linkcode createOAuthRuntime}. */
export interface OAuthRuntimeOptions {
  log: Log;
  /** Tokens and secrets are registered here as soon as they exist. */
  redactor?: Redactor;
  /** What to show the person (authorization URLs, browser failures, completed logins). */
  onEvent?: (event: OAuthEvent) => void;
  /**
   * Where logins are kept (`tokenStoreFor` picks it from the Memory settings); closed with
   * the runtime. @default FileTokenStore in ~/.config/patchbay/oauth
   */
  store?: TokenStore;
  /** @default openBrowser with `$BROWSER` read through `getEnv` */
  opener?: BrowserOpener;
  /**
   * Reads `$BROWSER` and the proxy variables (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY);
   * pass the Environment, so .env can set them. @default Deno.env.get
   */
  getEnv?: (name: string) => string | undefined;
  /**
   * Fetch for discovery, registration and token requests.
   * @default a {@linkcode ProxyRouter} over `getEnv`, closed with the runtime
   */
  fetch?: FetchLike;
  /**
   * Resolves host names for the endpoint policy (tests make a name public or local here).
   * @default systemResolver
   */
  resolve?: Resolver;
  /** How long a browser login may take. @default CALLBACK_TIMEOUT_MS */
  timeoutMs?: number;
  /** Tests only: the contract fixes the port at 3000. */
  port?: number;
  /**
   * `false`: logins that need the person fail at once (`OAuthLoginRequiredError`); stored
   * tokens and refreshes still work (`patchbay doctor`). @default true
   */
  interactive?: boolean;
  /**
   * Where the terminal shows a failed login: the browser's callback page words its remedy
   * the same way (a scripting command's names no slash command). @default "repl"
   */
  surface?: Surface;
}

/** OAuth for one session: the login queue, the token store, a provider per server. */
export class OAuthRuntime {
  readonly broker: AuthorizationBroker;
  readonly store: TokenStore;
  readonly #options: OAuthRuntimeOptions;
  /** By server name, with the address and auth settings it was made for. */
  readonly #providers = new Map<string, { key: string; provider: PatchbayOAuthProvider }>();
  /** The proxy-aware fetch, unless one was given. */
  readonly #network?: ProxyRouter;

  constructor(options: OAuthRuntimeOptions) {
    this.#options = options;
    const getEnv = options.getEnv ?? ((name: string) => Deno.env.get(name));
    if (!options.fetch) {
      this.#network = new ProxyRouter({
        env: { get: getEnv },
        log: options.log.child("network"),
      });
    }
    this.store = options.store ?? new FileTokenStore();
    this.broker = new AuthorizationBroker({
      log: options.log.child("callback"),
      onEvent: options.onEvent,
      opener: options.opener ?? ((url) => openBrowser(url, { getEnv: options.getEnv })),
      timeoutMs: options.timeoutMs,
      port: options.port,
      interactive: options.interactive,
      describe: (error) => loginFailureWords(error, options.surface ?? "repl", options.redactor),
    });
  }

  /**
   * The provider for `server` (the same instance on every call while its `url` and `auth`
   * stay the same), or `undefined` when the entry does not use OAuth. The connection
   * manager asks once per server and configuration.
   */
  providerFor(server: ServerConfig): PatchbayOAuthProvider | undefined {
    if (!usesOAuth(server)) return undefined;
    // An entry whose address or auth settings changed (`/refresh`) gets a provider of them.
    const key = JSON.stringify([new URL(server.url).href, server.auth]);
    const existing = this.#providers.get(server.name);
    if (existing?.key === key) return existing.provider;
    const provider = new PatchbayOAuthProvider({
      server,
      store: this.store,
      broker: this.broker,
      log: this.#options.log.child(`oauth:${server.name}`),
      redactor: this.#options.redactor,
      onEvent: this.#options.onEvent,
      fetch: this.#options.fetch ?? this.#network!.fetch,
      resolve: this.#options.resolve,
    });
    this.#providers.set(server.name, { key, provider });
    return provider;
  }

  /**
   * Stops the callback listener if a login left it open, and releases proxy connections
   * and the token store's connection.
   */
  async close(): Promise<void> {
    await this.broker.close();
    this.#network?.close();
    await this.store.close();
  }
}

/**
 * The session's OAuth support, or `undefined` when no entry uses OAuth, in which case
 * nothing listens on the callback port.
 */
export function createOAuthRuntime(
  servers: readonly ServerConfig[],
  options: OAuthRuntimeOptions,
): OAuthRuntime | undefined {
  return servers.some(usesOAuth) ? new OAuthRuntime(options) : undefined;
}
