/**
 * One server's connection over its whole life: the state machine of `state.ts`, the
 * current session, the last lists the server gave, restarts with bounded exponential
 * backoff after a loss, requests mapped to typed errors, and the watch that notices a
 * server that went away:
 *
 * - stdio: the process's exit is seen at once (the transport closes);
 * - streamable HTTP and SSE: a request that cannot reach the server, or the standing
 *   event stream dropping, is checked at once with an MCP `ping`; and a server that has
 *   sent nothing for half its `ping_interval` is pinged, the ping answered within the
 *   other half (or its `timeout`, if shorter). So a server that died is marked
 *   `reconnecting` within one `ping_interval`, however it died. A loss is diagnosed
 *   (`diagnose.ts`) before it is reported: "Connection refused: nothing is listening at
 *   …", never the runtime's "fetch failed".
 *
 * @module
 */

import {
  type LoggingLevel,
  type LoggingMessageNotification,
  ProtocolError,
  type RequestOptions,
  type Root,
  SdkError,
  SdkErrorCode,
} from "@modelcontextprotocol/client";
import type { ServerConfig } from "../config/types.ts";
import { DEFAULTS } from "../defaults.ts";
import {
  CancelledError,
  ConnectionClosedError,
  ConnectSkippedError,
  PatchbayError,
  ServerConnectError,
  ServerUnavailableError,
  TimeoutError,
  ToolTimeoutError,
} from "../errors.ts";
import type { Log, LogLevel } from "../log.ts";
import type { PatchbayOAuthProvider } from "../oauth/mod.ts";
import { HttpTransport } from "../transports/http.ts";
import { combineClocks, type LoginClock, startDeadline, WaitClock } from "../async/wait_clock.ts";
import { timerDelay } from "../async/timers.ts";
import { diagnose } from "./diagnose.ts";
import { cleanText, isConnectionLoss, RECONNECT_REMEDY, requestError } from "./request_errors.ts";
import { rootsOf } from "./requests.ts";
import {
  type ListName,
  type Lists,
  openSession,
  ServerSession,
  type ServerSessionOptions,
} from "./server_session.ts";
import { assertTransition } from "./state.ts";
import type {
  ConnectionEvent,
  ConnectionState,
  ProgressUpdate,
  RetryStatus,
  ServerRequestHandlers,
  ServerStatus,
} from "./types.ts";

/**
 * Room the SDK's own request timers get beyond a request's timeout for the time the
 * server waits on patchbay (a person filling in its form). The SDK insists on a timer of its
 * own (60 s when none is given); parked this far out it is not a deadline but a backstop that
 * never fires first. The one deadline of a request, a tool call included, is the one
 * {@linkcode Connection.request} starts: it leaves that time out, cancels the request on the
 * server and names the timeout (`ToolTimeoutError` for a tool).
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

/**
 * stdio servers: 0.5, 1, 2, 4, 8, 16 s: about half a minute of attempts, then `failed`
 * (a process that keeps dying is not started forever).
 */
export const RECONNECT_BACKOFF: BackoffPolicy = {
  initialDelayMs: 500,
  factor: 2,
  maxDelayMs: 30_000,
  maxAttempts: 6,
  stableAfterMs: 60_000,
};

/**
 * streamable HTTP and SSE servers: the same series, then every 30 s for as long as the
 * session lasts. A remote server may come back at any time (a deploy, a restart), and
 * trying costs one refused connection.
 */
export const NETWORK_RECONNECT_BACKOFF: BackoffPolicy = {
  ...RECONNECT_BACKOFF,
  maxAttempts: Number.POSITIVE_INFINITY,
};

/**
 * Least time between two liveness checks set off by transport errors: a server that
 * sends broken messages in a burst gets one ping, not one per message.
 */
const SUSPICION_CHECK_SPACING_MS = 1000;

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
  session: Omit<
    ServerSessionOptions,
    "log" | "hooks" | "signal" | "oauth" | "cleanup" | "requests"
  >;
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
  #session?: ServerSession;
  #lists: Lists = EMPTY_LISTS;
  #info: Pick<ServerStatus, "serverInfo" | "protocolVersion" | "instructions"> = {};
  #attempt?: Promise<boolean>;
  /** Stops the attempt in flight (closing, or skipped with Ctrl+C). */
  #attemptAbort?: AbortController;
  #retryTimer?: ReturnType<typeof setTimeout>;
  /** The restart that comes next while `reconnecting`. */
  #retry?: RetryStatus;
  /** The keep-alive timer of the live network session. */
  #watchTimer?: ReturnType<typeof setTimeout>;
  /** When the live session last showed it is alive (an answer, a notification). */
  #lastHeard = 0;
  /** The liveness check (ping) in flight, and when the last one started. */
  #checking?: Promise<void>;
  #lastCheck = 0;
  /** Why each lost network session was lost (diagnosed), for requests that were on it. */
  #losses = new WeakMap<ServerSession, PatchbayError>();
  /** Diagnoses of losses in progress, shared by every request that met the loss. */
  #confirming = new WeakMap<ServerSession, Promise<PatchbayError>>();
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
  get session(): ServerSession | undefined {
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
      error: this.#state === "reconnecting" && this.#error
        ? whileRestarting(this.#error)
        : this.#error,
      ...this.#info,
      ...(this.config.disabled ? { disabled: true } : {}),
      ...(this.#state === "reconnecting" && this.#retry ? { retry: { ...this.#retry } } : {}),
    };
  }

  /**
   * Stops the attempt in flight of a server still `connecting` (Ctrl+C while a command
   * waits for it): it ends `failed`, saying it was skipped. False when it is not connecting.
   */
  skip(): boolean {
    if (this.#state !== "connecting" || !this.#attemptAbort) return false;
    const seconds = Math.round((Date.now() - this.#since.getTime()) / 100) / 10;
    this.#attemptAbort.abort(new ConnectSkippedError(this.name, seconds));
    return true;
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
    if (this.#state === "reconnecting") {
      // A retry now, in the same series: if it fails, the restarts go on.
      this.#cancelRetry();
      this.#retry = { attempt: this.#retry?.attempt ?? 1, ...this.#retry, nextAt: undefined };
      const ok = await this.#runAttempt();
      if (!ok && this.#state === "reconnecting") this.#scheduleRetry();
      return;
    }
    if (this.#state === "connected" && this.#session) {
      const old = this.#session;
      this.#session = undefined;
      this.#stopWatch();
      this.#enter("connecting");
      await old.close();
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
    this.#stopWatch();
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
    run: (session: ServerSession, options: RequestOptions) => Promise<T>,
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
      const result = await run(session, {
        signal: controller.signal,
        timeout: timerDelay(session.sdkTimeoutMs(ms) + SERVER_WAITS_ON_US_ALLOWANCE_MS),
        resetTimeoutOnProgress: true,
        maxTotalTimeout: timerDelay(session.sdkTimeoutMs(ms) + SERVER_WAITS_ON_US_ALLOWANCE_MS),
        onprogress: onProgress && ((p) => {
          this.#heard(session);
          onProgress({ progress: p.progress, total: p.total, message: p.message });
        }),
      });
      this.#heard(session);
      return result;
    } catch (error) {
      // The server's own error answer shows it is alive.
      if (error instanceof ProtocolError) this.#heard(session);
      const gone = session.closing || this.#session !== session;
      const loss = gone ? this.#losses.get(session) : undefined;
      const failure = requestError(error, {
        server: this.name,
        what,
        tool: options.tool,
        timeoutSeconds: seconds,
        timedOut: controller.signal.reason === timedOut,
        cancelled: controller.signal.reason === cancelled,
        closedBecause: gone ? loss?.reason ?? session.closeReason() : undefined,
      });
      if (!isNetwork(session) || failure instanceof CancelledError) throw failure;
      if (gone) {
        // A loss diagnosed as a failure to reach the server is reported as such.
        throw failure instanceof ConnectionClosedError && loss instanceof ServerConnectError
          ? this.#restarting(loss)
          : failure;
      }
      if (failure instanceof ConnectionClosedError && isConnectionLoss(error)) {
        // HTTP has no process to watch: a request that cannot reach the server is the
        // loss, reported with what a look at the address found.
        throw this.#restarting(await this.#confirmLoss(session, error));
      }
      if (failure instanceof TimeoutError || failure instanceof ToolTimeoutError) {
        // Slow, or gone without a word: a ping tells which.
        this.#suspect(session, `${what} got no answer within ${seconds} s`);
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
    if (state !== "reconnecting") this.#retry = undefined;
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
    const holder: { session?: ServerSession; lostEarly?: string; changedEarly: Set<ListName> } = {
      changedEarly: new Set(),
    };
    // Closing the connection stops the attempt; so does skip() (Ctrl+C) on its own.
    const abort = new AbortController();
    const onClosed = () => abort.abort();
    this.#closed.signal.addEventListener("abort", onClosed, { once: true });
    if (this.#closed.signal.aborted) abort.abort();
    this.#attemptAbort = abort;
    let session: ServerSession;
    try {
      session = await openSession(this.config, {
        ...this.#options.session,
        requests: {
          handlers: this.#options.handlers,
          roots: () => this.#roots,
          waiting: this.waiting,
        },
        log: this.#log,
        signal: abort.signal,
        oauth: this.#options.oauth,
        cleanup: (closing) => this.#cleanup(closing),
        hooks: {
          listChanged: (list) =>
            holder.session
              ? this.#listChanged(holder.session, list)
              : holder.changedEarly.add(list),
          resourceUpdated: (uri) => {
            if (holder.session) this.#heard(holder.session);
            this.#options.emit({ type: "resource_updated", server: this.name, uri });
          },
          serverLog: (params) => {
            if (holder.session) this.#heard(holder.session);
            this.#serverLog(params);
          },
          lost: (reason) =>
            holder.session ? this.#lost(holder.session, reason) : holder.lostEarly = reason,
          suspect: (reason) => holder.session && this.#suspect(holder.session, reason),
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
    } finally {
      this.#closed.signal.removeEventListener("abort", onClosed);
      if (this.#attemptAbort === abort) this.#attemptAbort = undefined;
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
    // The catalogue first: whoever hears "connected" finds the server's tools there.
    this.#options.changed();
    this.#enter("connected");
    this.#options.changed();
    this.#startWatch(session);
    this.#applyLogLevel(session);
    if (holder.lostEarly !== undefined) this.#lost(session, holder.lostEarly);
    // Lists that changed while the first listing ran may have been read before the change.
    for (const list of holder.changedEarly) this.#listChanged(session, list);
    return true;
  }

  #applyLogLevel(session: ServerSession): void {
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

  /**
   * The session ended without being asked to: `reconnecting`, then restarts. `cause` is
   * the reason in words, or the diagnosed error (network servers).
   */
  #lost(session: ServerSession, cause: string | PatchbayError): void {
    if (session !== this.#session || this.#state !== "connected") return;
    const error = typeof cause === "string"
      ? new ConnectionClosedError(this.name, "the session", {
        reason: cause,
        remedy: RECONNECT_REMEDY,
      })
      : cause;
    this.#losses.set(session, error);
    this.#session = undefined;
    this.#stopWatch();
    this.#cleanup(session.close());
    if (Date.now() - this.#connectedAt >= this.#options.backoff.stableAfterMs) this.#retries = 0;
    this.#log.warn(`connection lost: ${error.reason}`);
    // The first restart is planned before the state changes, so whoever hears
    // "reconnecting" can say when it comes.
    const plan = this.#planRetry();
    this.#retry = plan?.status;
    this.#enter("reconnecting", error);
    this.#options.changed();
    this.#scheduleRetry(plan);
  }

  /** The next restart of the series, or `undefined` when the series is used up. */
  #planRetry(): { delay: number; status: RetryStatus } | undefined {
    const policy = this.#options.backoff;
    if (this.#retries >= policy.maxAttempts) return undefined;
    const delay = Math.min(
      policy.initialDelayMs * policy.factor ** this.#retries,
      policy.maxDelayMs,
    );
    return {
      delay,
      status: {
        attempt: this.#retries + 1,
        ...(Number.isFinite(policy.maxAttempts) ? { maxAttempts: policy.maxAttempts } : {}),
        nextAt: new Date(Date.now() + delay),
      },
    };
  }

  #scheduleRetry(plan = this.#planRetry()): void {
    if (!plan) {
      const attempts = this.#options.backoff.maxAttempts;
      this.#log.warn(`gave up after ${attempts} attempts; /refresh tries again`);
      this.#enter("failed", this.#error);
      return;
    }
    this.#retries++;
    this.#retry = plan.status;
    const of = plan.status.maxAttempts ? ` of ${plan.status.maxAttempts}` : "";
    this.#log.info(`reconnecting in ${plan.delay} ms (attempt ${this.#retries}${of})`);
    this.#retryTimer = setTimeout(async () => {
      this.#retryTimer = undefined;
      if (this.#state !== "reconnecting") return;
      this.#retry = { ...plan.status, nextAt: undefined };
      const ok = await this.#runAttempt();
      if (!ok && this.#state === "reconnecting") {
        this.#log.info(`attempt ${plan.status.attempt} failed: ${this.#error?.reason}`);
        this.#scheduleRetry();
      }
    }, timerDelay(plan.delay));
  }

  /** `error`, saying that patchbay keeps trying while the server is being restarted. */
  #restarting(error: PatchbayError): PatchbayError {
    return this.#state === "reconnecting" ? whileRestarting(error) : error;
  }

  // ------------------------------------------------------------------------ liveness

  /** The live session showed it is alive (an answer, a notification, progress). */
  #heard(session: ServerSession): void {
    if (session === this.#session) this.#lastHeard = Date.now();
  }

  /** The keep-alive interval of this server in ms; 0 when off (or stdio). */
  get #pingMs(): number {
    if (this.config.transport === "stdio") return 0;
    return (this.config.pingIntervalSeconds ?? DEFAULTS.server.pingIntervalSeconds) * 1000;
  }

  /**
   * Pings the session once it has been silent for half the keep-alive interval, each
   * ping answered within the other half: a server that died is noticed within one interval.
   */
  #startWatch(session: ServerSession): void {
    this.#stopWatch();
    this.#lastHeard = Date.now();
    if (this.#pingMs > 0) this.#watchAt(session, this.#pingMs / 2);
  }

  #watchAt(session: ServerSession, delay: number): void {
    clearTimeout(this.#watchTimer);
    this.#watchTimer = setTimeout(() => this.#watch(session), timerDelay(delay));
    // An idle watch must not keep the process alive on its own.
    Deno.unrefTimer(this.#watchTimer as unknown as number);
  }

  #watch(session: ServerSession): void {
    this.#watchTimer = undefined;
    if (!this.#isCurrent(session)) return;
    const half = this.#pingMs / 2;
    const silentFor = Date.now() - this.#lastHeard;
    if (silentFor < half) return this.#watchAt(session, half - silentFor);
    this.#check(session, "keep-alive").finally(() => {
      if (this.#isCurrent(session)) this.#watchAt(session, half);
    });
  }

  #stopWatch(): void {
    clearTimeout(this.#watchTimer);
    this.#watchTimer = undefined;
  }

  /** Something looked wrong with the session (a dropped stream, a request timed out). */
  #suspect(session: ServerSession, reason: string): void {
    if (!this.#isCurrent(session) || !isNetwork(session)) return;
    if (this.#checking || Date.now() - this.#lastCheck < SUSPICION_CHECK_SPACING_MS) return;
    this.#log.debug(`checking the connection: ${reason}`);
    this.#check(session, reason);
  }

  /**
   * One MCP `ping` (single-flight): answered, the server is alive; unanswered in time or
   * unreachable, the session is lost (diagnosed when the server could not be reached).
   */
  #check(session: ServerSession, why: string): Promise<void> {
    if (this.#checking) return this.#checking;
    this.#lastCheck = Date.now();
    const timeoutMs = this.config.timeoutSeconds * 1000;
    const ms = this.#pingMs > 0 ? Math.min(timeoutMs, this.#pingMs / 2) : timeoutMs;
    const checking = this.#ping(session, ms, why).finally(() => this.#checking = undefined);
    this.#checking = checking;
    return checking;
  }

  async #ping(session: ServerSession, ms: number, why: string): Promise<void> {
    const deadline = new AbortController();
    const stop = startDeadline(ms, () => deadline.abort(), this.clock);
    try {
      await session.alive({
        signal: deadline.signal,
        timeout: session.sdkTimeoutMs(ms) + SERVER_WAITS_ON_US_ALLOWANCE_MS,
      });
      this.#heard(session);
    } catch (error) {
      if (!this.#isCurrent(session)) return;
      if (error instanceof ProtocolError) {
        // An error answer (a server without ping) is an answer: it is alive.
        this.#heard(session);
        return;
      }
      const timedOut = deadline.signal.aborted ||
        (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout);
      if (timedOut) {
        const seconds = Math.round(ms / 100) / 10;
        this.#lost(
          session,
          new ConnectionClosedError(this.name, "the session", {
            reason: `Connection timeout: the server did not answer a ping within ${seconds} s ` +
              `(${why === "keep-alive" ? "it had been silent for a while" : why})`,
            remedy: RECONNECT_REMEDY,
            cause: error,
          }),
        );
      } else {
        await this.#confirmLoss(session, error);
      }
    } finally {
      stop();
    }
  }

  /**
   * A network session that could not reach its server: the failure is diagnosed like a
   * failed connection (a look at the address: refused, no answer, another server…), the
   * session is marked lost with it, and every request that met the loss gets it.
   */
  #confirmLoss(session: ServerSession, error: unknown): Promise<PatchbayError> {
    let pending = this.#confirming.get(session);
    if (!pending) {
      pending = diagnose({
        server: this.config,
        error,
        timedOut: false,
        network: this.#options.session.network,
        probeTimeoutMs: this.#options.session.probeTimeoutMs,
      }).catch((failure) =>
        new ServerConnectError(this.name, {
          reason: `the server could not be reached (${cleanText(error)}); the diagnosis ` +
            `failed too: ${cleanText(failure)}`,
          remedy: RECONNECT_REMEDY,
          cause: error,
        })
      ).then((diagnosed) => {
        this.#lost(session, diagnosed);
        return this.#losses.get(session) ?? diagnosed;
      });
      this.#confirming.set(session, pending);
    }
    return pending;
  }

  #cancelRetry(): void {
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
  }

  /** Re-lists after `list_changed`; notifications arriving meanwhile cause one more pass. */
  #listChanged(session: ServerSession, list: ListName): void {
    this.#heard(session);
    const running = this.#relisting.get(list);
    if (running) {
      running.again = true;
      return;
    }
    const entry = { again: true };
    this.#relisting.set(list, entry);
    this.#trackRelist(this.#relistOne(session, list, entry));
  }

  async #relistOne(
    session: ServerSession,
    list: ListName,
    entry: { again: boolean },
  ): Promise<void> {
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

  #relistAll(session: ServerSession): Promise<void> {
    return this.#trackRelist(this.#relistEverything(session));
  }

  async #relistEverything(session: ServerSession): Promise<void> {
    const before = this.#lists;
    try {
      await session.relist();
    } catch (error) {
      if (isConnectionLoss(error) && this.#isCurrent(session)) {
        if (isNetwork(session)) await this.#confirmLoss(session, error);
        else this.#lost(session, `re-listing failed: ${cleanText(error)}`);
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
  #isCurrent(session: ServerSession): boolean {
    return session === this.#session && !session.closing && this.#state === "connected";
  }

  /**
   * A re-listing that failed because its session ended (patchbay closing, the server lost
   * or replaced) is no news: the end itself is reported where it happens.
   */
  #relistFailed(session: ServerSession, what: string, error: unknown): void {
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

/**
 * A diagnosed failure of a server being restarted: its remedy (written for a server that
 * did not start) also says that patchbay keeps trying.
 */
function whileRestarting(error: PatchbayError): PatchbayError {
  if (!(error instanceof ServerConnectError) || error.constructor !== ServerConnectError) {
    return error;
  }
  return new ServerConnectError(error.server, {
    reason: error.reason,
    remedy: `${error.remedy}; meanwhile ${RESTARTING_NOTE}`,
    details: [...error.details],
    cause: error.cause,
  });
}

/** What patchbay does about a lost server, for remedies. */
const RESTARTING_NOTE = "patchbay keeps trying to reconnect (/connections shows the next " +
  "attempt; /refresh tries at once)";

/** Whether the session runs over HTTP (streamable HTTP or SSE), where nothing exits. */
function isNetwork(session: ServerSession): boolean {
  return session.transport instanceof HttpTransport;
}
