/**
 * The OAuth callback listener: `http://localhost:3000/callback` (docs/authentication.md:
 * fixed, not configurable), where the browser lands after the person approves patchbay at
 * an authorization server.
 *
 * It binds loopback addresses only (127.0.0.1, and ::1 where the host has IPv6), serves
 * `/callback` and nothing else, and accepts a response only when its `state` matches the
 * login in progress (CSRF and stale-tab defence) and its `iss` passes the RFC 9207 check
 * (authorization-server mix-up defence). One login is awaited at a time; the
 * {@linkcode AuthorizationBroker} queues the others.
 *
 * The page the browser shows says what the terminal says: it answers once the code has
 * been exchanged for tokens ({@linkcode CallbackListener.ended}), "Login complete" only when
 * that succeeded, else the failure in the terminal's words (message, cause, remedy). It
 * waits at most {@linkcode EXCHANGE_WAIT_MS}; past that it says the login is still being
 * completed, and the terminal says how it ends.
 *
 * @module
 */

import { validateAuthorizationResponseIssuer } from "@modelcontextprotocol/client";
import { DEFAULTS } from "../defaults.ts";
import { CancelledError, DenoPermissionError, OAuthFailedError } from "../errors.ts";
import { OAUTH_STEPS } from "../errors/oauth_steps.ts";
import { valueWithin } from "../async/deadline.ts";
import { type FailureWords, ownWords, page } from "./callback_page.ts";

export type { FailureWords } from "./callback_page.ts";
import { denoPermissionFlag } from "../deno_permission/denial.ts";
import { type Log, silentLog } from "../log/log.ts";
import { describeHolder, findPortHolder } from "./port_holder.ts";

/** Milliseconds a browser login may take before patchbay stops waiting (5 minutes). */
export const CALLBACK_TIMEOUT_MS: number = DEFAULTS.oauthCallback.timeoutSeconds * 1000;

/**
 * Longest the callback page waits for the code's exchange before answering (a token
 * endpoint that does not answer must not hold the browser's tab); past it, the page says
 * the login is still being completed, and the terminal tells how it ends.
 */
export const EXCHANGE_WAIT_MS = 30_000;

/** The fixed callback port (docs/authentication.md). */
export const CALLBACK_PORT: number = DEFAULTS.oauthCallback.port;

/** The path the authorization server redirects to. */
export const CALLBACK_PATH: string = DEFAULTS.oauthCallback.path;

/** The redirect URI patchbay registers and sends: `http://localhost:3000/callback`. */
export function redirectUriFor(port: number = CALLBACK_PORT): string {
  return `http://${DEFAULTS.oauthCallback.host}:${port}${CALLBACK_PATH}`;
}

/** What the listener waits for. */
export interface ExpectedCallback {
  /** Server name, for messages. */
  server: string;
  /** The `state` sent with the authorization request. */
  state: string;
  /** The issuer from the authorization server's validated metadata, if known. */
  issuer?: string;
  /** The server advertised `authorization_response_iss_parameter_supported`. */
  issRequired: boolean;
}

/** A successful authorization response. */
export interface AuthorizationCallback {
  code: string;
  /** The `iss` parameter (RFC 9207), when sent. */
  iss?: string;
}

/** How a login ended once its code was received, for the page the browser shows. */
export type LoginEnd = { ok: true } | { ok: false; error: unknown };

/** Something the listener turned away, for the UI and the log. */
export interface RejectedCallback {
  server: string;
  reason: string;
}

/** Options of {@linkcode CallbackListener}. */
export interface CallbackListenerOptions {
  /** Only tests pick another port; patchbay always uses the contract's. @default 3000 */
  port?: number;
  log?: Log;
  /** Told about callbacks that were ignored (state mismatch, no login in progress). */
  onRejected?: (event: RejectedCallback) => void;
  /**
   * A failed login in the words the terminal shows it (the surface's remedy, secrets
   * masked), for the page. @default the error's own message, cause and remedy
   */
  describe?: (error: unknown) => FailureWords;
}

interface Pending {
  expected: ExpectedCallback;
  resolve: (callback: AuthorizationCallback) => void;
  reject: (error: unknown) => void;
}

/** Loopback addresses bound, in order; the first is required. */
const LOOPBACK_ADDRESSES = ["127.0.0.1", "::1"] as const;

/** Host header values a browser sends for the redirect URI on this port. */
function allowedHosts(port: number): Set<string> {
  return new Set([`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]);
}

/** The local HTTP server receiving authorization responses. */
export class CallbackListener {
  readonly port: number;
  readonly #log: Log;
  readonly #onRejected?: (event: RejectedCallback) => void;
  readonly #hosts: Set<string>;
  readonly #describe: (error: unknown) => FailureWords;
  /** Pages waiting for the end of their login, by the login they answer. */
  readonly #pages = new Map<ExpectedCallback, (end: LoginEnd) => void>();
  #servers: Deno.HttpServer[] = [];
  #pending: Pending | undefined;
  #lastServer = "";

  constructor(options: CallbackListenerOptions = {}) {
    this.port = options.port ?? CALLBACK_PORT;
    this.#log = options.log ?? silentLog;
    this.#onRejected = options.onRejected;
    this.#hosts = allowedHosts(this.port);
    this.#describe = options.describe ?? ownWords;
  }

  /** The redirect URI this listener serves. */
  get redirectUri(): string {
    return redirectUriFor(this.port);
  }

  get listening(): boolean {
    return this.#servers.length > 0;
  }

  /**
   * Binds the port on loopback. `server` names the MCP server whose login needs it, for
   * the error raised when another process holds the port.
   */
  async start(server: string): Promise<void> {
    if (this.listening) return;
    this.#lastServer = server;
    for (const hostname of LOOPBACK_ADDRESSES) {
      try {
        this.#servers.push(Deno.serve({
          hostname,
          port: this.port,
          onListen: () => {},
          onError: (error) => {
            this.#log.error("callback handler failed", { error });
            return page(500, "Something went wrong", "Return to the terminal.");
          },
        }, (request) => this.#handle(request)));
      } catch (error) {
        // ::1 is optional (hosts without IPv6), but if someone else holds it, a browser
        // resolving localhost to ::1 would deliver the code to them: treat it as busy.
        const busy = error instanceof Deno.errors.AddrInUse;
        if (hostname === "::1" && !busy) {
          this.#log.debug("callback listener: ::1 unavailable", { error });
          continue;
        }
        await this.close();
        const flag = denoPermissionFlag(error);
        if (flag) {
          throw new DenoPermissionError(
            flag,
            `listening on ${hostname}:${this.port} for the OAuth callback of server '${server}'`,
            error,
          );
        }
        throw busy ? await portBusyError(server, this.port, error) : new OAuthFailedError(server, {
          reason: `could not listen on ${hostname}:${this.port} for the OAuth callback: ` +
            (error as Error).message,
          cause: error,
        });
      }
    }
    this.#log.info(`OAuth callback listener on ${this.redirectUri}`);
  }

  /**
   * Waits for the authorization response of one login. Rejects with `OAuthFailedError`
   * on denial, issuer mismatch or timeout, and `CancelledError` when `signal` aborts.
   */
  expect(
    expected: ExpectedCallback,
    options: { signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<AuthorizationCallback> {
    if (this.#pending) {
      return Promise.reject(new Error("CallbackListener: a login is already awaited"));
    }
    const timeoutMs = options.timeoutMs ?? CALLBACK_TIMEOUT_MS;
    return new Promise<AuthorizationCallback>((resolve, reject) => {
      const timer = setTimeout(() => {
        settle(() =>
          reject(
            new OAuthFailedError(expected.server, {
              reason: `no authorization response reached ${this.redirectUri} within ` +
                formatDuration(timeoutMs),
              remedy: OAUTH_STEPS.callbackTimeout(
                formatDuration(timeoutMs),
                this.port,
                expected.server,
              ),
            }),
          )
        );
      }, timeoutMs);
      const onAbort = () => settle(() => reject(new CancelledError(`login to ${expected.server}`)));
      const settle = (action: () => void) => {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
        if (this.#pending?.expected === expected) this.#pending = undefined;
        action();
      };
      if (options.signal?.aborted) return onAbort();
      options.signal?.addEventListener("abort", onAbort, { once: true });
      this.#pending = {
        expected,
        resolve: (callback) => settle(() => resolve(callback)),
        reject: (error) => settle(() => reject(error)),
      };
    });
  }

  /**
   * Tells the page of login `expected` how it ended, once its code was exchanged (or the
   * exchange failed): the browser then reads what the terminal says.
   */
  ended(expected: ExpectedCallback, end: LoginEnd): void {
    this.#pages.get(expected)?.(end);
  }

  /** Ends the login being awaited, if any, with `error`. */
  cancel(error: unknown): void {
    this.#pending?.reject(error);
  }

  /** Stops listening (in-flight responses are finished first, a waiting page at once). */
  async close(): Promise<void> {
    const servers = this.#servers;
    this.#servers = [];
    // A page still waiting for its login's end answers now: shutting down waits for it.
    const cancelled = new CancelledError("the login (patchbay is closing)");
    for (const answer of [...this.#pages.values()]) answer({ ok: false, error: cancelled });
    await Promise.all(servers.map((server) => server.shutdown().catch(() => {})));
  }

  async #handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname !== CALLBACK_PATH) {
      return page(404, "Not found", "This address only receives patchbay's OAuth logins.");
    }
    if (request.method !== "GET") {
      return page(405, "Method not allowed", "The callback accepts GET only.", { Allow: "GET" });
    }
    // DNS rebinding: a page on another site resolving its name to 127.0.0.1 reaches this
    // port with its own Host header.
    if (!this.#hosts.has((request.headers.get("host") ?? "").toLowerCase())) {
      return page(400, "Wrong host", "This callback answers only on localhost.");
    }
    const pending = this.#pending;
    const params = url.searchParams;
    if (!pending) {
      this.#reject(this.#lastServer, "a callback arrived while no login was in progress");
      return page(
        400,
        "No login in progress",
        "patchbay is not waiting for an authorization right now (this tab may be from an " +
          "earlier attempt). Return to the terminal.",
      );
    }
    const { expected } = pending;
    if (params.get("state") !== expected.state) {
      this.#reject(
        expected.server,
        "a callback with a state that does not match this login was ignored",
      );
      return page(
        400,
        "Login not recognised",
        "This authorization response does not belong to the login patchbay is waiting for " +
          "(state mismatch), so it was ignored. If you started a new login, use its tab.",
      );
    }
    try {
      validateAuthorizationResponseIssuer({
        iss: params.get("iss") ?? undefined,
        expectedIssuer: expected.issuer,
        issParameterSupported: expected.issRequired,
      });
    } catch (error) {
      // RFC 9207: the response came from (or claims) another authorization server. Its
      // other parameters are attacker-controlled and are neither used nor shown.
      pending.reject(
        new OAuthFailedError(expected.server, {
          reason: "the authorization response did not come from the authorization server " +
            "patchbay contacted (RFC 9207 issuer check failed), so it was refused",
          remedy: OAUTH_STEPS.issuerRefused,
          cause: error,
        }),
      );
      return page(400, "Login refused", "The response's issuer did not match. See the terminal.");
    }
    const error = params.get("error");
    if (error !== null) {
      pending.reject(authorizationError(expected.server, error, params));
      return error === "access_denied"
        ? page(200, "Authorization denied", "patchbay was not authorized. You can close this tab.")
        : page(
          400,
          "Login failed",
          `The authorization server answered ${error}. See the terminal.`,
        );
    }
    const code = params.get("code");
    if (!code) {
      pending.reject(
        new OAuthFailedError(expected.server, {
          reason: "the authorization response carried neither a code nor an error",
          remedy: OAUTH_STEPS.noCode(expected.server),
        }),
      );
      return page(400, "Login failed", "The response carried no authorization code.");
    }
    // The page answers once the code has been exchanged, and says how that went.
    const ended = new Promise<LoginEnd>((resolve) => this.#pages.set(expected, resolve));
    pending.resolve({ code, iss: params.get("iss") ?? undefined });
    let end: LoginEnd | undefined;
    try {
      end = await valueWithin(ended, EXCHANGE_WAIT_MS);
    } finally {
      this.#pages.delete(expected);
    }
    if (!end) {
      return page(
        200,
        "Login still being completed",
        `patchbay received the authorization for ${expected.server} and is still exchanging ` +
          "it for tokens. The terminal says how the login ends.",
      );
    }
    if (end.ok) {
      return page(
        200,
        "Login complete",
        `patchbay is now authorized for ${expected.server}. You can close this tab and ` +
          "return to the terminal.",
      );
    }
    const words = this.#describe(end.error);
    return page(400, "Login failed", [
      words.message,
      `Cause: ${words.cause}`,
      `Remedy: ${words.remedy}`,
    ]);
  }

  #reject(server: string, reason: string): void {
    this.#log.warn(`OAuth callback ignored: ${reason}`, { server });
    this.#onRejected?.({ server, reason });
  }
}

function authorizationError(server: string, error: string, params: URLSearchParams) {
  if (error === "access_denied") {
    return new OAuthFailedError(server, {
      reason: "authorization was denied in the browser (error=access_denied)",
      remedy: OAUTH_STEPS.accessDenied(server),
    });
  }
  const description = params.get("error_description");
  return new OAuthFailedError(server, {
    reason: `the authorization server answered error=${error}` +
      (description ? ` (${description.slice(0, 200)})` : ""),
    remedy: error === "invalid_scope"
      ? OAUTH_STEPS.scopesInEntry
      : OAUTH_STEPS.authorizationRefused,
  });
}

async function portBusyError(server: string, port: number, cause: unknown) {
  const holder = await findPortHolder(port);
  const who = holder ? describeHolder(holder) : "another process";
  return new OAuthFailedError(server, {
    reason: `port ${port} on localhost, where the OAuth callback must arrive, is already ` +
      `in use by ${who}` + (holder?.commandLine ? ` [${holder.commandLine}]` : ""),
    remedy: OAUTH_STEPS.portBusy(
      port,
      holder ? describeHolder(holder) : "the process using it",
      server,
    ),
    cause,
  });
}

function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds % 60 === 0 && seconds >= 60) {
    const minutes = seconds / 60;
    return `${minutes} minute${minutes === 1 ? "" : "s"}`;
  }
  return `${seconds} s`;
}
