/**
 * Browser logins, one at a time: several servers needing a login share the fixed callback
 * port, so their logins are queued. For each one the broker binds the callback listener
 * (only while a login is in progress: port 3000 is a common development port, and holding
 * it for a whole session would break the person's other tools), shows the authorization
 * URL, opens the browser, and waits for the callback.
 *
 * @module
 */

import { CancelledError, OAuthLoginRequiredError } from "../errors.ts";
import { type Log, silentLog } from "../log/log.ts";
import { abortable } from "../async/abortable.ts";
import { type BrowserOpener, type BrowserOpenResult, openBrowser } from "./browser.ts";
import {
  type AuthorizationCallback,
  CALLBACK_TIMEOUT_MS,
  CallbackListener,
  type ExpectedCallback,
  type FailureWords,
  type RejectedCallback,
} from "./callback.ts";

/** Why a browser login is needed. */
export type AuthorizationReason =
  /** First login: no usable tokens are stored. */
  | "login"
  /** The server refused the current token (401) and it could not be refreshed. */
  | "reauthorize"
  /** The server needs more scopes for a request (403 insufficient_scope). */
  | "step_up";

/** Why a login is needed, in words. */
const REASON_TEXT: Record<AuthorizationReason, string> = {
  login: "no usable login is stored",
  reauthorize: "it refused the stored login",
  step_up: "it needs more scopes than the stored login has",
};

/** What happens during OAuth, for the interface to show. lib/ never prints. */
export type OAuthEvent =
  /** Another server's login is in progress; this one waits its turn. */
  | { type: "queued"; server: string; behind: string }
  /** A login starts: always show `url`, the browser may not open. */
  | {
    type: "authorization_started";
    server: string;
    url: string;
    reason: AuthorizationReason;
    scope?: string;
  }
  | { type: "browser_opened"; server: string; command: string }
  /** No browser opened: the person must open `url` by hand. */
  | { type: "browser_failed"; server: string; url: string; reason: string }
  /** A callback was turned away (state mismatch, no login in progress). */
  | { type: "callback_rejected"; server: string; reason: string }
  /** Tokens were obtained or refreshed. */
  | {
    type: "authorized";
    server: string;
    how: "browser" | "refresh";
    issuer: string;
    scope?: string;
    expiresAt?: number;
  }
  /**
   * The token store could not take a login (Redis away): it is kept in an owner-only file
   * at `path` and moved to the store once it answers. Once per server and outage.
   */
  | { type: "login_kept_locally"; server: string; store: string; path: string; reason: string }
  /**
   * The token store is unreachable (Redis away) and answers from the logins kept locally
   * in `dir` instead; others it holds are unavailable meanwhile. Once per outage.
   */
  | { type: "logins_read_locally"; store: string; dir: string; reason: string };

/** One login to perform. */
export interface AuthorizationRequest extends ExpectedCallback {
  /** The authorization URL to open. */
  url: URL;
  reason: AuthorizationReason;
  /** The scope requested, for the message. */
  scope?: string;
  signal?: AbortSignal;
}

/** Options of {@linkcode AuthorizationBroker}. */
export interface AuthorizationBrokerOptions {
  /** @default openBrowser */
  opener?: BrowserOpener;
  onEvent?: (event: OAuthEvent) => void;
  log?: Log;
  /** @default CALLBACK_TIMEOUT_MS (5 minutes) */
  timeoutMs?: number;
  /** Only tests pick another port. @default 3000 */
  port?: number;
  /**
   * A failed login in the words the terminal shows (its surface's remedy, secrets masked),
   * for the browser's page. @default the error's own words
   */
  describe?: (error: unknown) => FailureWords;
  /**
   * `false`: a login that needs the person fails at once with `OAuthLoginRequiredError`,
   * before the callback port is bound or a browser opened (`patchbay doctor`).
   * @default true
   */
  interactive?: boolean;
}

/** Queues browser logins and runs each through the callback listener. */
export class AuthorizationBroker {
  readonly listener: CallbackListener;
  readonly #opener: BrowserOpener;
  readonly #onEvent: (event: OAuthEvent) => void;
  readonly #log: Log;
  readonly #timeoutMs: number;
  readonly #interactive: boolean;
  /** Settles when the login ahead of the newest one has finished. */
  #tail: Promise<void> = Promise.resolve();
  /**
   * Servers whose logins are queued or running, oldest first. Kept from the moment a
   * login is requested, so one requested while another is about to start is still
   * seen as queued behind it.
   */
  #queue: { server: string }[] = [];
  #closed = false;

  constructor(options: AuthorizationBrokerOptions = {}) {
    this.#log = options.log ?? silentLog;
    this.#onEvent = options.onEvent ?? (() => {});
    this.#opener = options.opener ?? ((url) => openBrowser(url));
    this.#timeoutMs = options.timeoutMs ?? CALLBACK_TIMEOUT_MS;
    this.#interactive = options.interactive ?? true;
    this.listener = new CallbackListener({
      port: options.port,
      log: this.#log,
      onRejected: (event: RejectedCallback) =>
        this.#onEvent({ type: "callback_rejected", ...event }),
      describe: options.describe,
    });
  }

  /** The redirect URI registered with authorization servers. */
  get redirectUri(): string {
    return this.listener.redirectUri;
  }

  /**
   * Runs one login when its turn comes. `finish` (the code exchange) runs within the turn,
   * so what the person sees about one login is over before the next begins; the browser's
   * page answers once it has, with its outcome.
   */
  async authorize<T>(
    request: AuthorizationRequest,
    finish: (callback: AuthorizationCallback) => Promise<T>,
  ): Promise<T> {
    if (!this.#interactive) {
      throw new OAuthLoginRequiredError(
        request.server,
        `a browser login is needed (${REASON_TEXT[request.reason]}) and this run does ` +
          "not start one",
      );
    }
    const ahead = this.#tail;
    let release!: () => void;
    const mine = new Promise<void>((resolve) => release = resolve);
    // The next login starts only when this one and every one before it are over, even if
    // this one is cancelled while it waits.
    this.#tail = Promise.all([ahead, mine]).then(() => {});
    const behind = this.#queue[0]?.server;
    const entry = { server: request.server };
    this.#queue.push(entry);
    try {
      if (behind !== undefined) {
        this.#onEvent({ type: "queued", server: request.server, behind });
      }
      await abortable(
        ahead,
        request.signal,
        () => new CancelledError(`login to ${request.server}`),
      );
      if (this.#closed) throw new CancelledError(`login to ${request.server}`);
      const callback = await this.#run(request);
      // The browser's page waits for this, so it says what the terminal says.
      let result: T;
      try {
        result = await finish(callback);
      } catch (error) {
        this.listener.ended(request, { ok: false, error });
        throw error;
      }
      this.listener.ended(request, { ok: true });
      return result;
    } finally {
      this.#queue.splice(this.#queue.indexOf(entry), 1);
      if (this.#queue.length === 0) await this.listener.close();
      release();
    }
  }

  /** Cancels the login in progress and stops the listener; later logins are refused. */
  async close(): Promise<void> {
    this.#closed = true;
    this.listener.cancel(new CancelledError("OAuth login (patchbay is closing)"));
    await this.listener.close();
  }

  async #run(request: AuthorizationRequest): Promise<AuthorizationCallback> {
    // Bound before the browser opens, so the redirect can never arrive at a closed port.
    await this.listener.start(request.server);
    const callback = this.listener.expect(request, {
      signal: request.signal,
      timeoutMs: this.#timeoutMs,
    });
    this.#onEvent({
      type: "authorization_started",
      server: request.server,
      url: request.url.href,
      reason: request.reason,
      scope: request.scope,
    });
    this.#log.info("opening the browser for OAuth authorization", {
      server: request.server,
      reason: request.reason,
      scope: request.scope,
    });
    // The callback is awaited from now on, while the opener runs: a login cancelled (or
    // timed out) before the opener returns must fail this login, not the process.
    let waiting = true;
    const opening = this.#openBrowser(request, () => waiting);
    try {
      return await callback;
    } finally {
      waiting = false;
      // The opener is bounded (OPENER_GRACE_MS): nothing of this login outlives it.
      await opening;
    }
  }

  /** Runs the opener and reports how it went while the login still waits; never rejects. */
  async #openBrowser(request: AuthorizationRequest, waiting: () => boolean): Promise<void> {
    let opened: BrowserOpenResult;
    try {
      opened = await this.#opener(request.url);
    } catch (error) {
      opened = { opened: false, reason: `the opener failed: ${(error as Error)?.message}` };
    }
    if (opened.opened) {
      this.#onEvent({ type: "browser_opened", server: request.server, command: opened.command! });
      return;
    }
    this.#log.warn("no browser opened", { server: request.server, reason: opened.reason });
    if (!waiting()) return;
    this.#onEvent({
      type: "browser_failed",
      server: request.server,
      url: request.url.href,
      reason: opened.reason ?? "the opener failed",
    });
  }
}
