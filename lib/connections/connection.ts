/**
 * One server's connection over its whole life: the state machine of `state.ts`, the
 * current session, the last lists the server gave, restarts after a loss, and requests
 * with their one deadline, mapped to typed errors that name the server.
 *
 * A stdio server that went away is seen at once (its process exits and the transport
 * closes); a network one is noticed by `liveness.ts`. The restarts follow `reconnect.ts`;
 * the lists are kept up to date by `relisting.ts`. What it reports of itself is worded by
 * `connection_report.ts`; requests go through `connection_requests.ts`; an attempt's
 * session hooks are `attempt_hooks.ts`; the log level and roots it tells a server of,
 * `session_settings.ts`.
 *
 * @module
 */

import type { RequestOptions, Root } from "@modelcontextprotocol/client";
import type { ServerConfig } from "../config/types.ts";
import {
  ConnectionClosedError,
  ConnectSkippedError,
  PatchbayError,
  type PolicyRefusedError,
  type ServerUnavailableError,
} from "../errors.ts";
import type { Log } from "../log/log.ts";
import { type Redactor, sessionRedactor } from "../redact/redact.ts";
import type { PatchbayOAuthProvider } from "../oauth/mod.ts";
import { combineClocks, type LoginClock, WaitClock } from "../async/wait_clock.ts";
import { isNetwork, LivenessWatch } from "./liveness.ts";
import { type RestartPlan, RestartSeries, whileRestarting } from "./reconnect.ts";
import { Relisting } from "./relisting.ts";
import { type ConnectionRequestOptions, sdkBackstopMs } from "./request_deadline.ts";
import { connectionRequest } from "./connection_requests.ts";
import { cleanText, RECONNECT_REMEDY } from "./request_errors.ts";
import { rootsOf } from "./requests.ts";
import { CLIENT_INFO, type Lists, openSession, ServerSession } from "./session/server_session.ts";
import type { PriorSessionOptions } from "./tasks/prior_session.ts";
import { AttemptHooks } from "./attempt_hooks.ts";
import { adoptWarnings } from "./optional_lists.ts";
import { firstInstall } from "./package_runner.ts";
import { KeptLists } from "./kept_lists.ts";
import { askLogLevel, offerRoots } from "./session/session_settings.ts";
import { maskedHandlers, warnLookalikes } from "./untrusted.ts";
import { assertTransition } from "./state.ts";
import type { ConnectionOptions } from "./connection_options.ts";
import {
  attemptError,
  type ConnectionFacts,
  connectionStatus,
  type SessionInfo,
  sessionInfo,
  unavailableError,
} from "./connection_report.ts";
import type { ConnectionState, InstallStatus, ServerStatus } from "./types.ts";

export type { ConnectionOptions } from "./connection_options.ts";

const EMPTY_LISTS: Lists = { tools: [], prompts: [], resources: [], templates: [] };

/** The connection to one configured server. */
export class ServerConnection {
  readonly config: ServerConfig;
  readonly #options: ConnectionOptions;
  readonly #log: Log;
  readonly #redactor: Redactor;
  #state: ConnectionState = "disconnected";
  #since = new Date();
  #error?: PatchbayError;
  #session?: ServerSession;
  #lists: Lists = EMPTY_LISTS;
  #info: SessionInfo = {};
  /** What the live session declares but does not serve (`ServerStatus.warnings`). */
  #warnings: readonly string[] = [];
  /** The install the attempt in flight may wait for (`package_runner.ts`). */
  #install?: InstallStatus;
  #attempt?: Promise<boolean>;
  /** Stops the attempt in flight (closing, or skipped with Ctrl+C). */
  #attemptAbort?: AbortController;
  /** Restarts after a loss. */
  readonly #restarts: RestartSeries;
  /** Keep-alive pings, and why each lost session was lost. */
  readonly #liveness: LivenessWatch;
  readonly #relisting: Relisting;
  /**
   * When this server waits on patchbay (its sampling or elicitation request is being
   * answered): its deadlines leave that time out.
   */
  readonly waiting = new WaitClock();

  /** The time this server's deadlines leave out: logins, and the server waiting on us. */
  get clock(): LoginClock {
    return combineClocks(this.session?.oauth, this.waiting);
  }
  #connectedAt = 0;
  /** Shutdowns of dead or failed sessions still running; `close()` waits for them. */
  #cleanups = new Set<Promise<void>>();
  readonly #closed = new AbortController();
  /** The roots offered to the server; `undefined`: none, and no roots capability. */
  #roots?: Root[];
  /**
   * The entry as it connected, when that differs from the file's: an inferred streamable
   * HTTP url that answered the legacy way is SSE (`sse_fallback.ts`), for every attempt after.
   */
  #learned?: ServerConfig;
  /** The lists kept across runs: served while the first attempt runs, saved when adopted. */
  readonly #kept: KeptLists;

  constructor(options: ConnectionOptions) {
    this.config = options.config;
    this.#options = options;
    this.#log = options.log;
    this.#redactor = options.redactor ?? sessionRedactor;
    this.#roots = options.config.roots && rootsOf(options.config.roots);
    this.#restarts = new RestartSeries(options.backoff);
    // Known before the first attempt: the banner, drawn before the servers start, says it.
    if (!options.config.disabled) this.#checkInstall();
    this.#kept = new KeptLists(options.listCache, options.config, options.log);
    if (this.#kept.served) this.#lists = this.#kept.served;
    const isCurrent = (session: ServerSession) => this.#isCurrent(session);
    this.#liveness = new LivenessWatch({
      config: options.config,
      log: options.log,
      clock: () => this.clock,
      current: () => this.#session,
      isCurrent,
      lost: (session, error) => this.#lost(session, error),
      backstopMs: sdkBackstopMs,
      network: options.session.network,
      probeTimeoutMs: options.session.probeTimeoutMs,
    });
    this.#relisting = new Relisting({
      server: this.name,
      log: options.log,
      emit: options.emit,
      lists: () => this.#lists,
      adopt: (session) => {
        this.#lists = this.#redactor.redactValue(session.lists);
        this.#warnings = adoptWarnings(session, this.#warnings, this.#redactor, this.#log);
        warnLookalikes(this.#lists, this.#log);
        this.#kept.save(session, this.#lists);
        options.changed();
      },
      invalidated: () => this.#kept.invalidate(),
      isCurrent,
      heard: (session) => this.#liveness.heard(session),
      lostWhileRelisting: (session, error) =>
        isNetwork(session)
          ? this.#liveness.confirmLoss(session, error)
          : this.#lost(session, `re-listing failed: ${cleanText(error)}`),
    });
  }

  get name(): string {
    return this.config.name;
  }

  /** This server's log. */
  get log(): Log {
    return this.#log;
  }

  /** The session's secrets, masked in what this server sends. */
  get redactor(): Redactor {
    return this.#redactor;
  }

  /** What joining an earlier session of this server needs (`prior_session.ts`). */
  priorSessionOptions(): PriorSessionOptions {
    return {
      ...this.#options.session,
      config: this.config,
      clientInfo: this.#options.session.clientInfo ?? CLIENT_INFO,
      requests: {
        handlers: () => maskedHandlers(this.#options.handlers(), this.#redactor),
        roots: () => undefined,
        waiting: this.waiting,
      },
      oauth: this.#options.oauth,
      redactor: this.#redactor,
      log: this.#log,
      closeWith: (close) =>
        this.#cleanup(this.#closed.signal.aborted ? close() : this.#onClose(close)),
    };
  }

  /** Runs `close` when this connection closes. */
  #onClose(close: () => Promise<void>): Promise<void> {
    return new Promise((resolve) =>
      this.#closed.signal.addEventListener("abort", () => void close().finally(resolve), {
        once: true,
      })
    );
  }

  get state(): ConnectionState {
    return this.#state;
  }

  /**
   * The last lists the server gave (kept while it is away, so names stay stable); while
   * the first attempt runs, the lists kept from an earlier run, when fresh.
   */
  get lists(): Lists {
    return this.#lists;
  }

  /** Its lists are the kept ones, served while the first attempt runs. */
  get listsFromCache(): boolean {
    return this.#kept.served !== undefined;
  }

  /**
   * Waits for the attempt in flight, if any (a call to a tool offered from the kept lists
   * waits for its server as a call to any connecting server would).
   */
  async attempted(): Promise<void> {
    if (this.#attempt) await this.#attempt;
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
    return connectionStatus(this.#facts(), target);
  }

  /** Where this connection stands now, for its status and its unavailable error. */
  #facts(): ConnectionFacts {
    return {
      config: this.#learned ?? this.config,
      state: this.#state,
      since: this.#since,
      error: this.#error,
      lists: this.#lists,
      listsFromCache: this.listsFromCache,
      info: this.#info,
      next: this.#restarts.next,
      warnings: this.#warnings,
      installing: this.#install,
    };
  }

  #checkInstall(): void {
    this.#install = firstInstall(this.config, this.#options.session.parentEnv ?? Deno.env.get);
  }

  /** The bound of the attempt in flight: `timeout`, or more while its package installs. */
  get connectTimeoutSeconds(): number {
    return this.#install?.boundSeconds ?? this.config.timeoutSeconds;
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
    this.#restarts.cancel();
    this.#restarts.restart();
    this.#enter("connecting");
    const ok = await this.#runAttempt();
    if (this.#kept.served) {
      // It failed (a success ended the serving when it adopted the live lists).
      this.#kept.end(undefined);
      this.#lists = EMPTY_LISTS;
      this.#options.changed();
    }
    if (!ok && this.#state === "connecting") {
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
      await this.#relisting.all(this.#session);
      return;
    }
    if (this.#state === "reconnecting") {
      // A retry now, in the same series: if it fails, the restarts go on.
      this.#restarts.cancel();
      this.#restarts.running();
      const ok = await this.#runAttempt();
      if (!ok && this.#state === "reconnecting") this.#scheduleRetry();
      return;
    }
    if (this.#state === "connected" && this.#session) {
      const old = this.#session;
      this.#session = undefined;
      this.#liveness.stop();
      this.#enter("connecting");
      await old.close();
    } else if (this.#state !== "connecting") {
      return this.connect();
    }
    this.#restarts.restart();
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
    if (session && await offerRoots(session, this.#roots, folders, this.#log)) {
      await this.refresh(true);
    }
  }

  /** Ends the session and every pending attempt; the state becomes `closed`. */
  async close(): Promise<void> {
    if (this.#state === "closed") return;
    this.#closed.abort();
    this.#restarts.cancel();
    this.#liveness.stop();
    const session = this.#session;
    this.#session = undefined;
    this.#enter("closed");
    await Promise.all([session?.close(), this.#attempt]);
    await Promise.all([...this.#cleanups, this.#relisting.settled()]);
  }

  #cleanup(closing: Promise<void>): void {
    const tracked = closing.catch(() => {}).finally(() => this.#cleanups.delete(tracked));
    this.#cleanups.add(tracked);
  }

  /**
   * Runs one request on the live session under its one deadline (`connection_requests.ts`):
   * failures become typed errors naming this server; unable to take requests now, it rejects.
   */
  request<T>(
    what: string,
    run: (session: ServerSession, options: RequestOptions) => Promise<T>,
    options: ConnectionRequestOptions = {},
  ): Promise<T> {
    return connectionRequest(
      {
        session: this.session,
        unavailable: () => this.unavailable(),
        host: () => ({
          server: this.name,
          timeoutSeconds: this.config.timeoutSeconds,
          clock: this.clock,
          liveness: this.#liveness,
          current: () => this.#session,
          restarting: (error) => this.#restarting(error),
        }),
        redactor: this.#redactor,
      },
      what,
      run,
      options,
    );
  }

  /** Why requests cannot be made now, as an error naming the server. */
  unavailable(): ServerUnavailableError | PolicyRefusedError {
    return unavailableError(this.#facts());
  }

  #enter(state: ConnectionState, error?: PatchbayError): void {
    assertTransition(this.name, this.#state, state);
    this.#state = state;
    this.#since = new Date();
    // A failure's cause quotes the server (its stderr, its answer): masked once, here.
    this.#error = state === "connected" ? undefined : error && this.#redactor.redactError(error);
    if (state !== "reconnecting") this.#restarts.next = undefined;
    const level = state === "failed" ? "warn" : "info";
    this.#log[level](`state ${state}`, error ? { reason: error.reason } : undefined);
    const warnings = state === "connected" && this.#warnings.length > 0
      ? { warnings: [...this.#warnings] }
      : {};
    this.#options.emit({
      type: "state",
      server: this.name,
      state,
      error: this.#error,
      ...warnings,
    });
  }

  #runAttempt(): Promise<boolean> {
    // Before anything awaits: `connectWithin` reads the bound as soon as connect() returns.
    this.#checkInstall();
    const attempt = this.#attempt = this.#open().finally(() => this.#attempt = undefined);
    return attempt;
  }

  async #open(): Promise<boolean> {
    // Losses reported before this attempt adopts its session are replayed after.
    const early = new AttemptHooks({
      server: this.name,
      log: this.#log,
      emit: this.#options.emit,
      redactor: this.#redactor,
      relisting: this.#relisting,
      liveness: this.#liveness,
      lost: (session, reason) => this.#lost(session, reason),
    });
    // Closing the connection stops the attempt; so does skip() (Ctrl+C) on its own.
    const abort = new AbortController();
    const onClosed = () => abort.abort();
    this.#closed.signal.addEventListener("abort", onClosed, { once: true });
    if (this.#closed.signal.aborted) abort.abort();
    this.#attemptAbort = abort;
    let session: ServerSession;
    try {
      session = await openSession(this.#learned ?? this.config, {
        ...this.#options.session,
        requests: {
          handlers: () => maskedHandlers(this.#options.handlers(), this.#redactor),
          roots: () => this.#roots,
          waiting: this.waiting,
        },
        log: this.#log,
        redactor: this.#redactor,
        signal: abort.signal,
        oauth: this.#options.oauth,
        cleanup: (closing) => this.#cleanup(closing),
        hooks: early.hooks,
        installing: this.#install,
      });
    } catch (error) {
      this.#error = attemptError(this.name, error);
      return false;
    } finally {
      this.#closed.signal.removeEventListener("abort", onClosed);
      if (this.#attemptAbort === abort) this.#attemptAbort = undefined;
      this.#install = undefined;
    }
    if (this.#state === "closed") {
      await session.close();
      return false;
    }
    if (session.config.transport !== (this.#learned ?? this.config).transport) {
      this.#learned = session.config;
    }
    early.adopt(session);
    this.#session = session;
    this.#lists = this.#redactor.redactValue(session.lists);
    this.#warnings = adoptWarnings(session, this.#warnings, this.#redactor, this.#log);
    warnLookalikes(this.#lists, this.#log);
    const changedFromKept = this.#kept.end(this.#lists);
    this.#kept.save(session, this.#lists);
    this.#info = this.#redactor.redactValue(sessionInfo(session));
    this.#connectedAt = Date.now();
    // The catalogue first: whoever hears "connected" finds the server's tools there.
    this.#options.changed();
    this.#enter("connected");
    this.#options.changed();
    for (const list of changedFromKept) {
      this.#options.emit({ type: "list_changed", server: this.name, list });
    }
    this.#liveness.start(session);
    this.#applyLogLevel(session);
    if (early.lostEarly !== undefined) this.#lost(session, early.lostEarly);
    // Lists that changed while the first listing ran may have been read before the change.
    for (const list of early.changedEarly) this.#relisting.listChanged(session, list);
    return true;
  }

  #applyLogLevel(session: ServerSession): void {
    askLogLevel(session, this.#options.logLevel(), this.config.timeoutSeconds, this.#log);
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
    this.#liveness.recordLoss(session, error);
    this.#session = undefined;
    this.#liveness.stop();
    this.#cleanup(session.close());
    this.#restarts.lostAfter(Date.now() - this.#connectedAt);
    this.#log.warn(`connection lost: ${error.reason}`);
    // The first restart is planned before the state changes, so whoever hears
    // "reconnecting" can say when it comes.
    const plan = this.#restarts.plan();
    this.#restarts.next = plan?.status;
    this.#enter("reconnecting", error);
    this.#options.changed();
    this.#scheduleRetry(plan);
  }

  /** Waits for the next restart of the series; the server fails when the series is used up. */
  #scheduleRetry(plan: RestartPlan | undefined = this.#restarts.plan()): void {
    if (!plan) {
      const attempts = this.#options.backoff.maxAttempts;
      this.#log.warn(`gave up after ${attempts} attempts; /refresh tries again`);
      this.#enter("failed", this.#error);
      return;
    }
    const of = plan.status.maxAttempts ? ` of ${plan.status.maxAttempts}` : "";
    this.#log.info(
      `reconnecting in ${plan.delay} ms (attempt ${this.#restarts.attempts + 1}${of})`,
    );
    this.#restarts.wait(plan, async () => {
      if (this.#state !== "reconnecting") return;
      this.#restarts.running(plan.status);
      const ok = await this.#runAttempt();
      if (!ok && this.#state === "reconnecting") {
        this.#log.info(`attempt ${plan.status.attempt} failed: ${this.#error?.reason}`);
        this.#scheduleRetry();
      }
    });
  }

  /** Whether `session` is still the one this connection serves (not closing, lost or replaced). */
  #isCurrent(session: ServerSession): boolean {
    return session === this.#session && !session.closing && this.#state === "connected";
  }

  /** `error`, saying that patchbay keeps trying while the server is being restarted. */
  #restarting(error: PatchbayError): PatchbayError {
    return this.#state === "reconnecting" ? whileRestarting(error) : error;
  }
}
