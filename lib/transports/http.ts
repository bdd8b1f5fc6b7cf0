/**
 * MCP over HTTP: `streamable_http` (one endpoint, POST + optional event streams) and the
 * legacy `sse` transport (an event stream plus a POST endpoint it announces), both
 * through the official SDK's transports, wrapped with what a long session needs:
 *
 * - `headers` on every request; `timeout` bounds the wait for response headers and
 *   `sse_read_timeout` the silence of an event stream (which is then reopened, the SDK
 *   sending `Last-Event-ID` and honouring the server's `retry`);
 * - on streamable HTTP, a request answered `404` for a known session (the server forgot
 *   it, e.g. after a restart) re-initializes once, transparently, and is sent again;
 * - on the legacy SSE transport, `Last-Event-ID` is restored on reconnects (the SDK
 *   drops it) and a server that answers a reconnect with a new session closes the
 *   transport, so the connection manager starts over instead of talking to a stranger;
 * - closing terminates the session with `DELETE` (a `405` is accepted) before the
 *   streams are closed: under Deno a session left open kept delivering notifications and
 *   the process did not exit.
 *
 * @module
 */

import {
  type FetchLike,
  isInitializeRequest,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type OAuthClientProvider,
  SdkHttpError,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type Transport,
  type TransportSendOptions,
} from "@modelcontextprotocol/client";
import { type Log, silentLog } from "../log/log.ts";
import { DepthGuard } from "./depth.ts";
import { NotificationBudget } from "./notices.ts";
import { createTimedFetch, type StreamEvent } from "./fetch.ts";
import { observeExchanges } from "./exchange.ts";
import type { MessageObserver } from "./observer.ts";
import { assumeCompleteResult } from "./result_type.ts";
import { deadline } from "../async/deadline.ts";

/** Longest wait for the `DELETE` that ends a session on close. */
export const SESSION_DELETE_TIMEOUT_MS = 2000;

/**
 * Reopening a dropped event stream: the server's `retry` wins over the first delay;
 * attempts are bounded so a server that is gone for good stops being called.
 */
export const STREAM_RECONNECTION = {
  initialReconnectionDelay: 1000,
  maxReconnectionDelay: 30_000,
  reconnectionDelayGrowFactor: 1.5,
  maxRetries: 10,
} as const;

/** Ids of the requests this wrapper sends itself never collide with the client's numbers. */
const RENEWAL_ID_PREFIX = "patchbay-renew-session-";

export type HttpTransportKind = "streamable_http" | "sse";

/** Why the transport closed. */
export type HttpCloseReason =
  | { kind: "closed" }
  /** The session ended on the server's side and could not be renewed. */
  | { kind: "session_lost"; detail: string }
  /** The server sent a message larger than `MAX_MESSAGE_BYTES`. */
  | { kind: "oversize"; limit: number; seen: number; detail: string };

/** Options of {@linkcode HttpTransport}. */
export interface HttpTransportOptions {
  kind: HttpTransportKind;
  url: string;
  /** Sent on every request. @default {} */
  headers?: Readonly<Record<string, string>>;
  /** Longest wait for response headers, in seconds. */
  timeoutSeconds: number;
  /** Longest silence of an event stream before it is reopened, in seconds. */
  sseReadTimeoutSeconds: number;
  /** OAuth, when the entry has `auth.method: oauth` (with {@linkcode authorize}). */
  authProvider?: OAuthClientProvider;
  /**
   * Wraps every request for OAuth (the provider's `wrapFetch`: a fresh token on each
   * request, a login and a retry on 401/403). Applied outside the `timeout` on response
   * headers, which bounds each exchange with the server, not a person logging in.
   */
  authorize?: (fetch: FetchLike) => FetchLike;
  /** @default silentLog */
  log?: Log;
  /** The network (e.g. `bearerFetch` for a header-authenticated entry). @default globalThis.fetch */
  fetch?: FetchLike;
  /** Sees every message sent and received, as written. */
  observer?: MessageObserver;
  /**
   * Joins a streamable HTTP session started earlier (its `Mcp-Session-Id`) instead of
   * starting one: to follow the tasks a session of an earlier process left (docs/tasks.md).
   * Such a session is not renewed when the server forgets it.
   */
  sessionId?: string;
  /** Gives each message its final form before it is sent (the trace context). */
  outgoing?: (message: JSONRPCMessage) => JSONRPCMessage;
}

type Inner = StreamableHTTPClientTransport | SSEClientTransport;

/** An MCP {@linkcode Transport} over streamable HTTP or SSE (see the module doc). */
export class HttpTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  /**
   * Called after a lost session was replaced by a new one: state the server kept for
   * the old session (subscriptions, log level) is gone and lists may have changed.
   */
  onsessionrenewed?: () => void;

  readonly kind: HttpTransportKind;
  readonly url: URL;
  readonly #inner: Inner;
  readonly #log: Log;
  readonly #timeoutMs: number;
  #initialize?: JSONRPCRequest;
  #renewal?: { dead: string; done: Promise<void> };
  #renewals = 0;
  #awaiting = new Map<string, (message: JSONRPCMessage) => void>();
  #lastEventId?: string;
  #endpoint?: string;
  #closing?: Promise<void>;
  #closeReason?: HttpCloseReason;
  #closeNotified = false;
  #keepSession = false;
  #lastError?: Error;
  #protocolVersion?: string;
  readonly #observer?: MessageObserver;
  readonly #outgoing?: (message: JSONRPCMessage) => JSONRPCMessage;
  readonly #depth: DepthGuard;
  readonly #notices: NotificationBudget;

  constructor(options: HttpTransportOptions) {
    this.kind = options.kind;
    this.url = new URL(options.url);
    this.#log = options.log ?? silentLog;
    this.#depth = new DepthGuard({ log: this.#log, reply: (message) => this.send(message) });
    this.#notices = new NotificationBudget((message) => this.#receive(message), this.#log);
    this.#timeoutMs = options.timeoutSeconds * 1000;
    this.#observer = options.observer;
    this.#outgoing = options.outgoing;
    const timed = createTimedFetch({
      headersTimeoutMs: this.#timeoutMs,
      readTimeoutMs: options.sseReadTimeoutSeconds * 1000,
      fetch: options.observer?.exchange
        ? observeExchanges(options.fetch ?? ((url, init) => fetch(url, init)), options.observer)
        : options.fetch,
      onEvent: (event) => this.#observe(event),
      onReadTimeout: (url) =>
        this.#log.info(
          `event stream from ${url} silent for ${options.sseReadTimeoutSeconds} s; reopening it`,
        ),
      decorate: options.kind === "sse" ? (_url, init) => this.#resumeHeaders(init) : undefined,
      onOversize: (error) => {
        // Like an oversized stdio line: this server's connection ends, with the cause.
        this.#log.error(`${error.message}; closing the connection`);
        this.#close({
          kind: "oversize",
          limit: error.limit,
          seen: error.seen,
          detail: error.message,
        });
      },
    });
    const requestInit: RequestInit = { headers: { ...options.headers } };
    const fetch = options.authorize ? options.authorize(timed) : timed;
    this.#inner = options.kind === "sse"
      ? new SSEClientTransport(this.url, {
        requestInit,
        fetch,
        authProvider: options.authProvider,
      })
      : new StreamableHTTPClientTransport(this.url, {
        requestInit,
        fetch,
        authProvider: options.authProvider,
        reconnectionOptions: { ...STREAM_RECONNECTION },
        ...(options.sessionId ? { sessionId: options.sessionId } : {}),
      });
    this.#inner.onmessage = (message) => {
      if (!this.#notices.admit(message)) return;
      for (const delivered of this.#depth.received(message)) this.#receive(delivered);
    };
    this.#inner.onerror = (error) => {
      this.#lastError = error;
      this.onerror?.(error);
    };
    this.#inner.onclose = () => this.#notifyClosed();
  }

  /** The session id the server assigned (streamable HTTP), once initialized. */
  get sessionId(): string | undefined {
    return this.#inner instanceof StreamableHTTPClientTransport ? this.#inner.sessionId : undefined;
  }

  /** Streamable HTTP opens one POST per request (the SDK's cancellation model needs this). */
  get hasPerRequestStream(): boolean | undefined {
    return this.#inner instanceof StreamableHTTPClientTransport ? true : undefined;
  }

  /** Why the transport closed, once it has. */
  get closeReason(): HttpCloseReason | undefined {
    return this.#closeReason;
  }

  /** The last error the SDK transport reported (for diagnosis). */
  get lastError(): Error | undefined {
    return this.#lastError;
  }

  /** How many times a lost session was renewed. */
  get renewals(): number {
    return this.#renewals;
  }

  setProtocolVersion(version: string): void {
    this.#protocolVersion = version;
    this.#inner.setProtocolVersion(version);
  }

  start(): Promise<void> {
    return this.#inner.start();
  }

  async send(sending: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const message = this.#outgoing?.(sending) ?? sending;
    this.#observer?.sent?.(message);
    if (isInitializeRequest(message)) this.#initialize = structuredClone(message) as JSONRPCRequest;
    this.#depth.sent(message);
    const session = this.sessionId;
    try {
      await this.#sendInner(message, options);
    } catch (error) {
      if (!this.#sessionGone(error, session, message)) throw error;
      await this.#renewSession(session!);
      // Notifications and answers belonged to the old session; only requests are redone.
      if (isJSONRPCRequest(message)) await this.#sendInner(message, options);
    }
  }

  #sendInner(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.#inner instanceof StreamableHTTPClientTransport
      ? this.#inner.send(message, options)
      : this.#inner.send(message);
  }

  /**
   * Leaves the session to the server at close (no `DELETE`): it holds tasks still running,
   * which a later process follows in it (docs/tasks.md).
   */
  keepSessionOnClose(): void {
    this.#keepSession = true;
  }

  /** Ends the session (`DELETE`, 405 accepted), then closes the streams; once. */
  close(): Promise<void> {
    return this.#close({ kind: "closed" });
  }

  #close(reason: HttpCloseReason): Promise<void> {
    if (this.#closing) return this.#closing;
    this.#closeReason = reason;
    this.#closing = (async () => {
      const inner = this.#inner;
      if (inner instanceof StreamableHTTPClientTransport && inner.sessionId && !this.#keepSession) {
        try {
          await deadline(inner.terminateSession(), SESSION_DELETE_TIMEOUT_MS);
        } catch (error) {
          this.#log.debug(`session not terminated: ${(error as Error).message}`);
        }
      }
      await inner.close().catch(() => {});
      this.#notices.end();
      this.#notifyClosed();
    })();
    return this.#closing;
  }

  #notifyClosed(): void {
    if (this.#closeNotified) return;
    this.#closeNotified = true;
    for (const resolve of this.#awaiting.values()) {
      resolve({ jsonrpc: "2.0", id: 0, error: { code: -32000, message: "Connection closed" } });
    }
    this.#awaiting.clear();
    this.onclose?.();
  }

  #receive(message: JSONRPCMessage): void {
    if (
      (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) &&
      typeof message.id === "string" && this.#awaiting.has(message.id)
    ) {
      this.#awaiting.get(message.id)!(message);
      this.#awaiting.delete(message.id);
      return;
    }
    this.#observer?.received?.(message);
    this.onmessage?.(assumeCompleteResult(message, this.#protocolVersion));
  }

  /** A 404 for a request made within a session: the server no longer knows it. */
  #sessionGone(error: unknown, session: string | undefined, message: JSONRPCMessage): boolean {
    return this.kind === "streamable_http" && session !== undefined &&
      this.#initialize !== undefined && !isInitializeRequest(message) &&
      error instanceof SdkHttpError && error.status === 404 && !this.#closing;
  }

  /** One renewal per lost session, shared by every request that met the 404. */
  #renewSession(dead: string): Promise<void> {
    if (this.#renewal?.dead === dead) return this.#renewal.done;
    const done = this.#initializeAgain(dead).catch(async (error) => {
      const detail = `the server forgot session ${dead} (HTTP 404) and a new session could ` +
        `not be started: ${(error as Error).message}`;
      this.#log.warn(detail);
      await this.#close({ kind: "session_lost", detail });
      throw new Error(detail, { cause: error });
    });
    this.#renewal = { dead, done };
    return done;
  }

  async #initializeAgain(dead: string): Promise<void> {
    this.#log.warn(`session ${dead} expired (HTTP 404); starting a new session`);
    const id = `${RENEWAL_ID_PREFIX}${++this.#renewals}`;
    const answer = new Promise<JSONRPCMessage>((resolve) => this.#awaiting.set(id, resolve));
    await this.#sendInner({ ...this.#initialize!, id });
    const response = await deadline(answer, this.#timeoutMs);
    if (isJSONRPCErrorResponse(response)) throw new Error(response.error.message);
    if (!isJSONRPCResultResponse(response)) throw new Error("no answer to initialize");
    const version = (response.result as { protocolVersion?: unknown }).protocolVersion;
    if (typeof version === "string") this.#inner.setProtocolVersion(version);
    await this.#sendInner({ jsonrpc: "2.0", method: "notifications/initialized" });
    this.#log.info(`new session ${this.sessionId ?? "(none)"} replaces ${dead}`);
    this.onsessionrenewed?.();
  }

  #observe(event: StreamEvent): void {
    if (this.kind !== "sse") return;
    if (event.id !== undefined) this.#lastEventId = event.id;
    if (event.event !== "endpoint") return;
    const endpoint = new URL(event.data, this.url).href;
    if (this.#endpoint !== undefined && this.#endpoint !== endpoint) {
      const detail = "the event stream reconnected to a new session " +
        `(endpoint ${endpoint} instead of ${this.#endpoint}); the old session is gone`;
      this.#log.warn(detail);
      this.#close({ kind: "session_lost", detail });
    }
    this.#endpoint = endpoint;
  }

  /** The SDK's SSE transport replaces the headers EventSource sets; put the id back. */
  #resumeHeaders(init: RequestInit): RequestInit {
    if ((init.method ?? "GET") !== "GET" || this.#lastEventId === undefined) return init;
    const headers = new Headers(init.headers);
    if (!headers.has("last-event-id")) headers.set("last-event-id", this.#lastEventId);
    return { ...init, headers };
  }
}
