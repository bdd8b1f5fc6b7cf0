/**
 * One server's connection over its whole life: the state machine of `state.ts`, the
 * current session, the last lists the server gave, restarts with bounded exponential
 * backoff after a loss, and requests mapped to typed errors.
 *
 * @module
 */

import type {
  LoggingLevel,
  LoggingMessageNotification,
  RequestOptions,
  Root,
} from "@modelcontextprotocol/client";
import type { ServerConfig } from "../config/types.ts";
import {
  CancelledError,
  ConnectionClosedError,
  PatchbayError,
  ServerConnectError,
  ServerUnavailableError,
} from "../errors.ts";
import type { Log, LogLevel } from "../log.ts";
import type { PatchbayOAuthProvider } from "../oauth/mod.ts";
import { HttpTransport } from "../transports/http.ts";
import { combineClocks, type LoginClock, startDeadline, WaitClock } from "../deadline.ts";
import { timerDelay } from "../timers.ts";
import { cleanText, isConnectionLoss, RECONNECT_REMEDY, requestError } from "./failures.ts";
import { rootsOf } from "./requests.ts";
import { type ListName, type Lists, openSession, Session, type SessionOptions } from "./session.ts";
import { assertTransition } from "./state.ts";
import type {
  ConnectionEvent,
  ConnectionState,
  ProgressUpdate,
  ServerRequestHandlers,
  ServerStatus,
} from "./types.ts";

/**
 * Room the SDK's own request timers get beyond a request's timeout for the time the
 * server waits on patchbay (a person filling in its form); patchbay's deadline, which
 * leaves that time out, is the real bound.
 */
const SERVER_WAITS_ON_US_ALLOWANCE_MS = 60 * 60 * 1000;
/** Restarts after a lost connection. */
export interface BackoffPolicy {
  /** Wait before the first attempt. */
  initialDelayMs: number;
  /** Each further wait is this many times the previous one. */
  factor: number;
  /** Longest wait. */
  maxDelayMs: number;
  /** Attempts before the server is marked failed (then only /refresh retries). */
  maxAttempts: number;
  /** A connection that lived this long starts a fresh series of attempts when lost. */
  stableAfterMs: number;
}

/** 0.5, 1, 2, 4, 8, 16 s: about half a minute of attempts, then `failed`. */
export const RECONNECT_BACKOFF: BackoffPolicy = {
  initialDelayMs: 500,
  factor: 2,
  maxDelayMs: 30_000,
  maxAttempts: 6,
  stableAfterMs: 60_000,
};

/** MCP's eight log levels onto patchbay's four. */
const LOG_LEVELS: Readonly<Record<LoggingLevel, LogLevel>> = {
  debug: "debug",
  info: "info",
  notice: "info",
  warning: "warn",
  error: "error",
  critical: "error",
  alert: "error",
  emergency: "error",
};

/** Options of {@linkcode ServerConnection}. */
export interface ConnectionOptions {
  config: ServerConfig;
  /** This server's log. */
  log: Log;
  emit: (event: ConnectionEvent) => void;
  /** Called whenever this server's lists or connectedness change. */
  changed: () => void;
  session: Omit<SessionOptions, "log" | "hooks" | "signal" | "oauth" | "cleanup" | "requests">;
  /** The current answers to sampling and elicitation requests. */
  handlers: () => ServerRequestHandlers;
  /**
   * The OAuth provider of an entry with `auth.method: oauth`: the same one for every
   * attempt, so reconnects and `/refresh` reuse its tokens (no second browser login).
   */
  oauth?: PatchbayOAuthProvider;
  backoff: BackoffPolicy;
  /** Log level to ask of the server once connected, if any. */
  logLevel: () => LoggingLevel | undefined;
}

/** Options of {@linkcode ServerConnection.request}. */
export interface ConnectionRequestOptions {
  /** @default the server's timeout */
  timeoutSeconds?: number;
  signal?: AbortSignal;
  /** For tool calls: the catalogue name (for error messages). */
  tool?: string;
  onProgress?: (update: ProgressUpdate) => void;
}

const EMPTY_LISTS: Lists = { tools: [], prompts: [], resources: [], templates: [] };

/** The connection to one configured server. */
export class ServerConnection {
  readonly config: ServerConfig;
  readonly #options: ConnectionOptions;
  readonly #log: Log;
  #state: ConnectionState = "disconnected";
  #since = new Date();
  #error?: PatchbayError;
  #session?: Session;
  #lists: Lists = EMPTY_LISTS;
  #info: Pick<ServerStatus, "serverInfo" | "protocolVersion" | "instructions"> = {};
  #attempt?: Promise<boolean>;
  #retryTimer?: ReturnType<typeof setTimeout>;
  /**
   * When this server waits on patchbay (its sampling or elicitation request is being
   * answered): its deadlines leave that time out.
   */
  readonly waiting = new WaitClock();

  /** The time this server's deadlines leave out: logins, and the server waiting on us. */
  get clock(): LoginClock {
    return combineClocks(this.session?.oauth, this.waiting);
  }
  #retries = 0;
  #connectedAt = 0;
  #relisting = new Map<ListName, { again: boolean }>();
  /** Shutdowns of dead or failed sessions still running; `close()` waits for them. */
  #cleanups = new Set<Promise<void>>();
  /** Re-listings in flight; `close()` waits for them, so none reports after it. */
  #relists = new Set<Promise<void>>();
  readonly #closed = new AbortController();
  /** The roots offered to the server; `undefined`: none, and no roots capability. */
  #roots?: Root[];

  constructor(options: ConnectionOptions) {
    this.config = options.config;
    this.#options = options;
    this.#log = options.log;
    this.#roots = options.config.roots && rootsOf(options.config.roots);
  }

  get name(): string {
    return this.config.name;
  }

  get state(): ConnectionState {
    return this.#state;
  }

  /** The last lists the server gave (kept while it is away, so names stay stable). */
  get lists(): Lists {
    return this.#lists;
  }

  /** Time spent in this server's browser logins, which its timeouts leave out. */
  get oauth(): PatchbayOAuthProvider | undefined {
    return this.#options.oauth;
  }

  /** The live session, when connected. */
  get session(): Session | undefined {
    return this.#state === "connected" ? this.#session : undefined;
  }

  status(target: string): ServerStatus {
    return {
      name: this.name,
      transport: this.config.transport,
      target,
      state: this.#state,
      since: this.#since,
      counts: {
        tools: this.#lists.tools.length,
        prompts: this.#lists.prompts.length,
        resources: this.#lists.resources.length,
      },
      error: this.#error,
      ...this.#info,
      ...(this.config.disabled ? { disabled: true } : {}),
    };
  }

  /** Connects unless connected, connecting, disabled or closed; never rejects. */
  async connect(): Promise<void> {
    if (this.config.disabled || this.#state === "closed" || this.#state === "connected") return;
    if (this.#attempt) {
      await this.#attempt;
      return;
    }
    this.#cancelRetry();
    this.#retries = 0;
    this.#enter("connecting");
    if (!(await this.#runAttempt()) && this.#state === "connecting") {
      this.#enter("failed", this.#error);
    }
  }

  /**
   * `/refresh`: a connected server is listed again (`force`: reconnected); any other
   * connects now, skipping a pending backoff wait.
   */
  async refresh(force = false): Promise<void> {
    if (this.config.disabled || this.#state === "closed") return;
    if (this.#attempt) await this.#attempt;
    if (this.#state === "connected" && this.#session && !force) {
      await this.#relistAll(this.#session);
      return;
    }
    if (this.#state === "connected" && this.#session) {
      const old = this.#session;
      this.#session = undefined;
      this.#enter("connecting");
      await old.close();
    } else if (this.#state === "reconnecting") {
      this.#cancelRetry();
      this.#enter("connecting");
    } else if (this.#state !== "connecting") {
      return this.connect();
    }
    this.#retries = 0;
    if (!(await this.#runAttempt()) && this.#state === "connecting") {
      this.#enter("failed", this.#error);
    }
  }

  /**
   * Replaces the folders offered as roots (absolute paths; `undefined` offers none). A
   * session that declared the roots capability is told with `notifications/roots/list_changed`
   * and asks again; one whose declaration must change (roots appearing or vanishing) is
   * reconnected, since capabilities are fixed by the handshake. Not connected: the next
   * connection uses them.
   */
  async setRoots(folders: readonly string[] | undefined): Promise<void> {
    this.#roots = folders && rootsOf(folders);
    const session = this.session;
    if (!session) return;
    if (session.offersRoots && this.#roots) {
      this.#log.info(`roots changed: ${folders!.join(", ") || "(none)"}`);
      // A session that ends meanwhile loses nothing: the next one is offered these roots.
      await session.client.sendRootsListChanged().catch((error) =>
        this.#log.debug(`roots/list_changed not sent: ${cleanText(error)}`)
      );
      return;
    }
    if (session.offersRoots === (this.#roots !== undefined)) return;
    this.#log.info("roots capability changed; reconnecting to declare it");
    await this.refresh(true);
  }

  /** Ends the session and every pending attempt; the state becomes `closed`. */
  async close(): Promise<void> {
    if (this.#state === "closed") return;
    this.#closed.abort();
    this.#cancelRetry();
    const session = this.#session;
    this.#session = undefined;
    this.#enter("closed");
    await Promise.all([session?.close(), this.#attempt]);
    await Promise.all([...this.#cleanups, ...this.#relists]);
  }

  #cleanup(closing: Promise<void>): void {
    const tracked = closing.catch(() => {}).finally(() => this.#cleanups.delete(tracked));
    this.#cleanups.add(tracked);
  }

  /**
   * Runs one request on the live session with a hard deadline, the caller's signal and
   * progress, mapping failures to typed errors that name this server.
   */
  async request<T>(
    what: string,
    run: (session: Session, options: RequestOptions) => Promise<T>,
    options: ConnectionRequestOptions = {},
  ): Promise<T> {
    const session = this.session;
    if (!session) throw this.unavailable();
    if (options.signal?.aborted) throw new CancelledError(`${what} on server '${this.name}'`);
    const seconds = options.timeoutSeconds ?? this.config.timeoutSeconds;
    const ms = seconds * 1000;
    const controller = new AbortController();
    const timedOut = new Error(`${what} timed out`);
    const cancelled = new Error(`${what} cancelled`);
    // The SDK's own timers reset on progress; this one does not: the bound holds. It
    // stops while the person logs in again (a refused token mid-session), and while the
    // server waits on us (a form the person fills in, a sampling answer): the SDK's timers
    // get room for that, and this deadline is the one that counts.
    const cancelDeadline = startDeadline(
      ms,
      () => controller.abort(timedOut),
      this.clock,
    );
    const onAbort = () => controller.abort(cancelled);
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const onProgress = options.onProgress;
    try {
      return await run(session, {
        signal: controller.signal,
        timeout: timerDelay(session.sdkTimeoutMs(ms) + SERVER_WAITS_ON_US_ALLOWANCE_MS),
        resetTimeoutOnProgress: true,
        maxTotalTimeout: timerDelay(session.sdkTimeoutMs(ms) + SERVER_WAITS_ON_US_ALLOWANCE_MS),
        onprogress: onProgress &&
          ((p) => onProgress({ progress: p.progress, total: p.total, message: p.message })),
      });
    } catch (error) {
      const gone = session.closing || this.#session !== session;
      const failure = requestError(error, {
        server: this.name,
        what,
        tool: options.tool,
        timeoutSeconds: seconds,
        timedOut: controller.signal.reason === timedOut,
        cancelled: controller.signal.reason === cancelled,
        closedBecause: gone ? session.closeReason() : undefined,
      });
      if (
        !gone && failure instanceof ConnectionClosedError &&
        session.transport instanceof HttpTransport && isConnectionLoss(error)
      ) {
        // HTTP has no process to watch: a request that cannot reach the server is the loss.
        this.#lost(session, failure.reason);
      }
      throw failure;
    } finally {
      cancelDeadline();
      options.signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Why requests cannot be made now, as an error naming the server. */
  unavailable(): ServerUnavailableError {
    const state = this.config.disabled ? "disabled" : this.#state;
    const error = this.#error;
    const reason = this.config.disabled
      ? 'the entry has "disabled": true'
      : error
      ? error.reason
      : this.#state === "connecting"
      ? "it is still connecting"
      : this.#state === "closed"
      ? "the session is closing"
      : "it has not been connected";
    const remedy = this.config.disabled
      ? 'remove "disabled" from the entry (or set it to false) and restart patchbay'
      : this.#state === "reconnecting"
      ? RECONNECT_REMEDY
      : error?.remedy ?? "run /refresh to connect it";
    return new ServerUnavailableError(this.name, state, { reason, remedy, cause: error });
  }

  #enter(state: ConnectionState, error?: PatchbayError): void {
    assertTransition(this.name, this.#state, state);
    this.#state = state;
    this.#since = new Date();
    this.#error = state === "connected" ? undefined : error;
    const level = state === "failed" ? "warn" : "info";
    this.#log[level](`state ${state}`, error ? { reason: error.reason } : undefined);
    this.#options.emit({ type: "state", server: this.name, state, error: this.#error });
  }

  #runAttempt(): Promise<boolean> {
    const attempt = this.#attempt = this.#open().finally(() => this.#attempt = undefined);
    return attempt;
  }

  async #open(): Promise<boolean> {
    // Losses reported before this attempt adopts its session are replayed after.
    const holder: { session?: Session; lostEarly?: string; changedEarly: Set<ListName> } = {
      changedEarly: new Set(),
    };
    let session: Session;
    try {
      session = await openSession(this.config, {
        ...this.#options.session,
        requests: {
          handlers: this.#options.handlers,
          roots: () => this.#roots,
          waiting: this.waiting,
        },
        log: this.#log,
        signal: this.#closed.signal,
        oauth: this.#options.oauth,
        cleanup: (closing) => this.#cleanup(closing),
        hooks: {
          listChanged: (list) =>
            holder.session
              ? this.#listChanged(holder.session, list)
              : holder.changedEarly.add(list),
          resourceUpdated: (uri) =>
            this.#options.emit({ type: "resource_updated", server: this.name, uri }),
          serverLog: (params) => this.#serverLog(params),
          lost: (reason) =>
            holder.session ? this.#lost(holder.session, reason) : holder.lostEarly = reason,
          renewed: () => holder.session && this.#relistAll(holder.session),
        },
      });
    } catch (error) {
      this.#error = error instanceof PatchbayError ? error : new ServerConnectError(this.name, {
        reason: `the connection attempt failed unexpectedly: ${cleanText(error)}`,
        remedy: "run /debug and /refresh; if it persists, report the log as an issue",
        cause: error,
      });
      return false;
    }
    if (this.#state === "closed") {
      await session.close();
      return false;
    }
    holder.session = session;
    this.#session = session;
    this.#lists = session.lists;
    this.#info = {
      serverInfo: session.serverInfo && {
        name: session.serverInfo.name,
        version: session.serverInfo.version,
      },
      protocolVersion: session.protocolVersion,
      instructions: session.instructions,
    };
    this.#connectedAt = Date.now();
    this.#enter("connected");
    this.#options.changed();
    this.#applyLogLevel(session);
    if (holder.lostEarly !== undefined) this.#lost(session, holder.lostEarly);
    // Lists that changed while the first listing ran may have been read before the change.
    for (const list of holder.changedEarly) this.#listChanged(session, list);
    return true;
  }

  #applyLogLevel(session: Session): void {
    const level = this.#options.logLevel();
    if (!level || !session.capabilities.logging) return;
    session.client.setLoggingLevel(level, {
      timeout: timerDelay(this.config.timeoutSeconds * 1000),
    })
      .catch((error) => this.#log.debug(`logging/setLevel failed: ${cleanText(error)}`));
  }

  /** Asks the connected server for `level` logs (from now on, and after reconnects). */
  applyLogLevel(): void {
    if (this.session) this.#applyLogLevel(this.session);
  }

  #lost(session: Session, reason: string): void {
    if (session !== this.#session || this.#state !== "connected") return;
    this.#session = undefined;
    this.#cleanup(session.close());
    if (Date.now() - this.#connectedAt >= this.#options.backoff.stableAfterMs) this.#retries = 0;
    this.#log.warn(`connection lost: ${reason}`);
    this.#enter(
      "reconnecting",
      new ConnectionClosedError(this.name, "the session", { reason, remedy: RECONNECT_REMEDY }),
    );
    this.#options.changed();
    this.#scheduleRetry();
  }

  #scheduleRetry(): void {
    const policy = this.#options.backoff;
    if (this.#retries >= policy.maxAttempts) {
      this.#log.warn(`gave up after ${policy.maxAttempts} attempts; /refresh tries again`);
      this.#enter("failed", this.#error);
      return;
    }
    const delay = Math.min(
      policy.initialDelayMs * policy.factor ** this.#retries,
      policy.maxDelayMs,
    );
    this.#retries++;
    this.#log.info(
      `reconnecting in ${delay} ms (attempt ${this.#retries} of ${policy.maxAttempts})`,
    );
    this.#retryTimer = setTimeout(async () => {
      this.#retryTimer = undefined;
      if (this.#state !== "reconnecting") return;
      const ok = await this.#runAttempt();
      if (!ok && this.#state === "reconnecting") this.#scheduleRetry();
    }, delay);
  }

  #cancelRetry(): void {
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
  }

  /** Re-lists after `list_changed`; notifications arriving meanwhile cause one more pass. */
  #listChanged(session: Session, list: ListName): void {
    const running = this.#relisting.get(list);
    if (running) {
      running.again = true;
      return;
    }
    const entry = { again: true };
    this.#relisting.set(list, entry);
    this.#trackRelist(this.#relistOne(session, list, entry));
  }

  async #relistOne(session: Session, list: ListName, entry: { again: boolean }): Promise<void> {
    try {
      while (entry.again && this.#isCurrent(session)) {
        entry.again = false;
        await session.relist(list);
        if (!this.#isCurrent(session)) return;
        this.#lists = session.lists;
        this.#options.changed();
        this.#options.emit({ type: "list_changed", server: this.name, list });
      }
    } catch (error) {
      this.#relistFailed(session, `re-listing ${list}`, error);
    } finally {
      this.#relisting.delete(list);
    }
  }

  #relistAll(session: Session): Promise<void> {
    return this.#trackRelist(this.#relistEverything(session));
  }

  async #relistEverything(session: Session): Promise<void> {
    const before = this.#lists;
    try {
      await session.relist();
    } catch (error) {
      if (isConnectionLoss(error) && this.#isCurrent(session)) {
        this.#lost(session, `re-listing failed: ${cleanText(error)}`);
      } else {
        this.#relistFailed(session, "re-listing", error);
      }
      return;
    }
    if (!this.#isCurrent(session)) return;
    this.#lists = session.lists;
    this.#options.changed();
    const differs = (a: unknown[], b: unknown[]) => JSON.stringify(a) !== JSON.stringify(b);
    if (differs(before.tools, this.#lists.tools)) {
      this.#options.emit({ type: "list_changed", server: this.name, list: "tools" });
    }
    if (differs(before.prompts, this.#lists.prompts)) {
      this.#options.emit({ type: "list_changed", server: this.name, list: "prompts" });
    }
    if (
      differs(before.resources, this.#lists.resources) ||
      differs(before.templates, this.#lists.templates)
    ) {
      this.#options.emit({ type: "list_changed", server: this.name, list: "resources" });
    }
  }

  /** Whether `session` is still the one this connection serves (not closing, lost or replaced). */
  #isCurrent(session: Session): boolean {
    return session === this.#session && !session.closing && this.#state === "connected";
  }

  /**
   * A re-listing that failed because its session ended (patchbay closing, the server lost
   * or replaced) is no news: the end itself is reported where it happens.
   */
  #relistFailed(session: Session, what: string, error: unknown): void {
    if (this.#isCurrent(session)) this.#log.warn(`${what} failed: ${cleanText(error)}`);
    else this.#log.debug(`${what} stopped: the session ended (${cleanText(error)})`);
  }

  #trackRelist(relist: Promise<void>): Promise<void> {
    const tracked = relist.finally(() => this.#relists.delete(tracked));
    this.#relists.add(tracked);
    return tracked;
  }

  #serverLog(params: LoggingMessageNotification["params"]): void {
    const level = LOG_LEVELS[params.level] ?? "info";
    const text = typeof params.data === "string" ? params.data : JSON.stringify(params.data);
    this.#log.child("log")[level](
      params.logger ? `${params.logger}: ${text}` : text,
      { level: params.level },
    );
    this.#options.emit({
      type: "log",
      server: this.name,
      level: params.level,
      logger: params.logger,
      data: params.data,
    });
  }
}
