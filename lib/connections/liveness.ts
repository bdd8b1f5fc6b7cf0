/**
 * Whether a connection's network session (streamable HTTP, SSE) is still alive, where no
 * process exit tells that the server went away: a session silent for half its
 * `ping_interval` is pinged, the ping answered within the other half (or its `timeout`,
 * if shorter); a transport error or a timed-out request sets off one ping at once. So a
 * server that died is marked `reconnecting` within one `ping_interval`, however it died.
 *
 * A ping that times out loses the session; one that cannot reach the server is diagnosed
 * first (`diagnose.ts`: "Connection refused: nothing is listening at …", never the
 * runtime's "fetch failed"), and every request that met the loss gets that diagnosis.
 *
 * @module
 */

import { ProtocolError, SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import type { ServerConfig } from "../config/types.ts";
import { DEFAULTS } from "../defaults.ts";
import { ConnectionClosedError, PatchbayError, ServerConnectError } from "../errors.ts";
import type { Log } from "../log/log.ts";
import type { Network } from "../proxy.ts";
import { HttpTransport } from "../transports/http.ts";
import { type LoginClock, startDeadline } from "../async/wait_clock.ts";
import { timerDelay } from "../async/timers.ts";
import { diagnose } from "./diagnosis/diagnose.ts";
import { cleanText, RECONNECT_REMEDY } from "./request_errors.ts";
import type { ServerSession } from "./session/server_session.ts";

/**
 * Least time between two liveness checks set off by transport errors: a server that
 * sends broken messages in a burst gets one ping, not one per message.
 */
const SUSPICION_CHECK_SPACING_MS = 1000;

/** What a {@linkcode LivenessWatch} needs of its connection. */
export interface LivenessOptions {
  config: ServerConfig;
  /** This server's log. */
  log: Log;
  /** The time this server's deadlines leave out (logins, the server waiting on us). */
  clock: () => LoginClock;
  /** The session the connection holds now, if any. */
  current: () => ServerSession | undefined;
  /** Whether `session` is still the one the connection serves (not closing, lost or replaced). */
  isCurrent: (session: ServerSession) => boolean;
  /** `session` was lost, for `error`: the connection restarts. */
  lost: (session: ServerSession, error: PatchbayError) => void;
  /** The SDK's own timer for a request of `ms`: a backstop that never fires first. */
  backstopMs: (session: ServerSession, ms: number) => number;
  /** How the server is reached, for the diagnosis. */
  network?: Network;
  /** Deadline of each diagnosis probe. */
  probeTimeoutMs?: number;
}

/** The keep-alive pings of one connection, and why each of its network sessions was lost. */
export class LivenessWatch {
  readonly #options: LivenessOptions;
  /** The keep-alive timer of the live network session. */
  #timer?: ReturnType<typeof setTimeout>;
  /** When the live session last showed it is alive (an answer, a notification). */
  #lastHeard = 0;
  /** The liveness check (ping) in flight, and when the last one started. */
  #checking?: Promise<void>;
  #lastCheck = 0;
  /** Why each lost session was lost, for requests that were on it. */
  #losses = new WeakMap<ServerSession, PatchbayError>();
  /** Diagnoses of losses in progress, shared by every request that met the loss. */
  #confirming = new WeakMap<ServerSession, Promise<PatchbayError>>();

  constructor(options: LivenessOptions) {
    this.#options = options;
  }

  /** The live session showed it is alive (an answer, a notification, progress). */
  heard(session: ServerSession): void {
    if (session === this.#options.current()) this.#lastHeard = Date.now();
  }

  /** Why `session` was lost, once it was. */
  lossOf(session: ServerSession): PatchbayError | undefined {
    return this.#losses.get(session);
  }

  /** Records why `session` was lost, for the requests that were on it. */
  recordLoss(session: ServerSession, error: PatchbayError): void {
    this.#losses.set(session, error);
  }

  /** The keep-alive interval of this server in ms; 0 when off (or stdio). */
  get #pingIntervalMs(): number {
    const config = this.#options.config;
    if (config.transport === "stdio") return 0;
    return (config.pingIntervalSeconds ?? DEFAULTS.server.pingIntervalSeconds) * 1000;
  }

  /**
   * Pings the session once it has been silent for half the keep-alive interval, each
   * ping answered within the other half: a server that died is noticed within one interval.
   */
  start(session: ServerSession): void {
    this.stop();
    this.#lastHeard = Date.now();
    if (this.#pingIntervalMs > 0) this.#watchAt(session, this.#pingIntervalMs / 2);
  }

  /** Stops the keep-alive timer. */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #watchAt(session: ServerSession, delay: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#watch(session), timerDelay(delay));
    // An idle watch must not keep the process alive on its own.
    Deno.unrefTimer(this.#timer as unknown as number);
  }

  #watch(session: ServerSession): void {
    this.#timer = undefined;
    if (!this.#options.isCurrent(session)) return;
    const half = this.#pingIntervalMs / 2;
    const silentFor = Date.now() - this.#lastHeard;
    if (silentFor < half) return this.#watchAt(session, half - silentFor);
    this.#check(session, "keep-alive").finally(() => {
      if (this.#options.isCurrent(session)) this.#watchAt(session, half);
    });
  }

  /** Something looked wrong with the session (a dropped stream, a request timed out). */
  suspect(session: ServerSession, reason: string): void {
    if (!this.#options.isCurrent(session) || !isNetwork(session)) return;
    if (this.#checking || Date.now() - this.#lastCheck < SUSPICION_CHECK_SPACING_MS) return;
    this.#options.log.debug(`checking the connection: ${reason}`);
    this.#check(session, reason);
  }

  /**
   * One MCP `ping` (single-flight): answered, the server is alive; unanswered in time or
   * unreachable, the session is lost (diagnosed when the server could not be reached).
   */
  #check(session: ServerSession, why: string): Promise<void> {
    if (this.#checking) return this.#checking;
    this.#lastCheck = Date.now();
    const timeoutMs = this.#options.config.timeoutSeconds * 1000;
    const ms = this.#pingIntervalMs > 0 ? Math.min(timeoutMs, this.#pingIntervalMs / 2) : timeoutMs;
    const checking = this.#ping(session, ms, why).finally(() => this.#checking = undefined);
    this.#checking = checking;
    return checking;
  }

  async #ping(session: ServerSession, ms: number, why: string): Promise<void> {
    const deadline = new AbortController();
    const stop = startDeadline(ms, () => deadline.abort(), this.#options.clock());
    try {
      await session.alive({
        signal: deadline.signal,
        timeout: this.#options.backstopMs(session, ms),
      });
      this.heard(session);
    } catch (error) {
      if (!this.#options.isCurrent(session)) return;
      if (error instanceof ProtocolError) {
        // An error answer (a server without ping) is an answer: it is alive.
        this.heard(session);
        return;
      }
      const timedOut = deadline.signal.aborted ||
        (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout);
      if (timedOut) {
        const seconds = Math.round(ms / 100) / 10;
        this.#options.lost(
          session,
          new ConnectionClosedError(this.#options.config.name, "the session", {
            reason: `Connection timeout: the server did not answer a ping within ${seconds} s ` +
              `(${why === "keep-alive" ? "it had been silent for a while" : why})`,
            remedy: RECONNECT_REMEDY,
            cause: error,
          }),
        );
      } else {
        await this.confirmLoss(session, error);
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
  confirmLoss(session: ServerSession, error: unknown): Promise<PatchbayError> {
    let pending = this.#confirming.get(session);
    if (!pending) {
      const { network, probeTimeoutMs } = this.#options;
      // The session's own entry: its transport may be the one a fallback found.
      const config = session.config;
      pending = diagnose({ server: config, error, timedOut: false, network, probeTimeoutMs })
        .catch((failure) =>
          new ServerConnectError(config.name, {
            reason: `the server could not be reached (${cleanText(error)}); the diagnosis ` +
              `failed too: ${cleanText(failure)}`,
            remedy: RECONNECT_REMEDY,
            cause: error,
          })
        ).then((diagnosed) => {
          this.#options.lost(session, diagnosed);
          return this.#losses.get(session) ?? diagnosed;
        });
      this.#confirming.set(session, pending);
    }
    return pending;
  }
}

/** Whether the session runs over HTTP (streamable HTTP or SSE), where nothing exits. */
export function isNetwork(session: ServerSession): boolean {
  return session.transport instanceof HttpTransport;
}
