/**
 * One attempt to connect to one server: transport, MCP client, handshake within the
 * server's `timeout`, and the first listing of its tools, prompts, resources and
 * resource templates. A failed attempt is diagnosed while the evidence is still there
 * (the process still running, its ports still open), then cleaned up, and thrown as a
 * typed error.
 *
 * An entry with `auth.method: oauth` logs in first (stored tokens, a refresh, or a
 * browser login) and sends every request through its OAuth provider, which logs in again
 * and retries when the server refuses a token mid-session. The time a person spends in
 * the browser never counts against the server's `timeout`. Other HTTP entries send their
 * `headers` through `bearerFetch`, which logs each exchange and types a refused token.
 *
 * @module
 */

import {
  Client,
  type Implementation,
  type LoggingMessageNotification,
  type Prompt,
  type RequestOptions,
  type Resource,
  type ResourceTemplateType as ResourceTemplate,
  SdkError,
  SdkErrorCode,
  type ServerCapabilities,
  type Tool,
} from "@modelcontextprotocol/client";
import type { ServerConfig } from "../config/types.ts";
import { CancelledError, PatchbayError } from "../errors.ts";
import type { Log } from "../log.ts";
import { bearerFetch, CALLBACK_TIMEOUT_MS, type PatchbayOAuthProvider } from "../oauth/mod.ts";
import { negotiationOptions } from "../protocol.ts";
import { type Network, PROCESS_NETWORK } from "../proxy.ts";
import { HttpTransport } from "../transports/http.ts";
import { STDERR_LINE_MAX_CHARS, StdioTransport } from "../transports/stdio.ts";
import { startDeadline } from "../async/wait_clock.ts";
import { timerDelay } from "../async/timers.ts";
import { abortable } from "../async/abortable.ts";
import { settlesWithin } from "../async/deadline.ts";
import { NAME, VERSION } from "../version.ts";
import { diagnose } from "./diagnose.ts";
import { RawToolSchemas } from "./raw_schemas.ts";
import { tracingObserver } from "../trace/active.ts";
import { clientCapabilities, installRequestHandlers, type RequestContext } from "./requests.ts";

/** How patchbay introduces itself to servers. */
export const CLIENT_INFO: Implementation = { name: NAME, version: VERSION };

/**
 * Extra time the SDK's own handshake timer gets over patchbay's deadline: patchbay's
 * fires first and diagnoses while the evidence is there.
 */
const SDK_TIMER_SLACK_MS = 10_000;

/** How long a failed attempt waits for the process's exit status and last output. */
const EXIT_EVIDENCE_WAIT_MS = 1500;

/**
 * Extra time the SDK's own request timers get on an OAuth server, whose requests may
 * wait for a browser login (one queued behind another's, each up to the callback
 * timeout). patchbay's own deadlines, which stop while a login runs, are the real bound.
 */
export const OAUTH_LOGIN_ALLOWANCE_MS = 2 * CALLBACK_TIMEOUT_MS;

/** What a server offers. */
export interface Lists {
  tools: Tool[];
  prompts: Prompt[];
  resources: Resource[];
  templates: ResourceTemplate[];
}

/** Which list a `list_changed` notification is about. */
export type ListName = "tools" | "prompts" | "resources";

/** What the connection hears from a live session. */
export interface ServerSessionHooks {
  listChanged(list: ListName): void;
  resourceUpdated(uri: string): void;
  serverLog(params: LoggingMessageNotification["params"]): void;
  /** The connection closed without being asked to; `reason` says why. */
  lost(reason: string): void;
  /**
   * Something suggests an HTTP server may be gone (its event stream dropped, a reconnect
   * of it failed): worth a ping to find out.
   */
  suspect(reason: string): void;
  /** An HTTP session was replaced by a new one (server-side state is gone). */
  renewed(): void;
}

/** Options of {@linkcode openSession}. */
export interface ServerSessionOptions {
  log: Log;
  /** @default CLIENT_INFO */
  clientInfo?: Implementation;
  requests: Omit<RequestContext, "server" | "log">;
  hooks: ServerSessionHooks;
  /** The OAuth provider of an HTTP entry with `auth.method: oauth`. */
  oauth?: PatchbayOAuthProvider;
  /**
   * Aborts the attempt (the manager is closing, or Ctrl+C skipped the server): a pending
   * login is cancelled too. A {@linkcode PatchbayError} as the reason is what the attempt
   * throws; otherwise it throws `CancelledError`.
   */
  signal?: AbortSignal;
  /** Where stdio servers' inherited variables come from. @default Deno.env.get */
  parentEnv?: (name: string) => string | undefined;
  /**
   * How HTTP servers are reached: the session's proxy settings (.env included), for every
   * request to the server (through OAuth's wrapper too) and the diagnosis of a failure.
   * @default PROCESS_NETWORK
   */
  network?: Network;
  /**
   * Receives the shutdown of a failed attempt's transport, to finish in the background
   * (the caller must await it before it is done itself). Without it, the shutdown is
   * awaited before the failure is thrown.
   */
  cleanup?: (closing: Promise<void>) => void;
  /** Deadline of each diagnosis probe. @default DIAGNOSIS_PROBE_MS */
  probeTimeoutMs?: number;
  /**
   * Time a stdio server gets to exit by itself once its stdin is closed, before its
   * process group is signalled. @default STDIN_CLOSE_GRACE_MS
   */
  stdinCloseGraceMs?: number;
}

type AnyTransport = StdioTransport | HttpTransport;

/** A live connection to one server. */
export class ServerSession {
  readonly config: ServerConfig;
  readonly client: Client;
  readonly transport: AnyTransport;
  /** The OAuth provider, also the clock of logins that deadlines leave out. */
  readonly oauth?: PatchbayOAuthProvider;
  lists: Lists = { tools: [], prompts: [], resources: [], templates: [] };
  /** The roots capability was declared in this session's handshake. */
  readonly offersRoots: boolean;
  /** The handshake and first listing succeeded. */
  established = false;
  /** Tool schemas as the server wrote them (the SDK's parsing reorders them). */
  readonly rawSchemas: RawToolSchemas;
  #closing = false;

  constructor(
    config: ServerConfig,
    client: Client,
    transport: AnyTransport,
    options: { oauth?: PatchbayOAuthProvider; offersRoots: boolean; rawSchemas: RawToolSchemas },
  ) {
    this.rawSchemas = options.rawSchemas;
    this.config = config;
    this.client = client;
    this.transport = transport;
    this.oauth = options.oauth;
    this.offersRoots = options.offersRoots;
  }

  /**
   * The SDK's own timer for a request patchbay bounds by `ms`: on an OAuth server it
   * leaves room for a browser login, which patchbay's deadline does not count.
   */
  sdkTimeoutMs(ms: number): number {
    return timerDelay(this.oauth ? ms + OAUTH_LOGIN_ALLOWANCE_MS : ms);
  }

  get capabilities(): ServerCapabilities {
    return this.client.getServerCapabilities() ?? {};
  }

  get serverInfo(): Implementation | undefined {
    return this.client.getServerVersion();
  }

  get protocolVersion(): string | undefined {
    return this.client.getNegotiatedProtocolVersion();
  }

  get instructions(): string | undefined {
    return this.client.getInstructions();
  }

  /** True once {@linkcode close} was called. */
  get closing(): boolean {
    return this.#closing;
  }

  /**
   * Asks the server whether it is there: `ping` on a 2025-era session; `server/discover`
   * on a 2026-07-28 one, which has no `ping` (the SDK refuses to send it there).
   */
  async alive(options: RequestOptions): Promise<void> {
    if (this.client.getProtocolEra() === "modern") await this.client.discover(options);
    else await this.client.ping(options);
  }

  /** Fetches the lists again (all, or the one named), bounded by `timeout`. */
  async relist(which?: ListName): Promise<Lists> {
    const caps = this.capabilities;
    const timeout = this.config.timeoutSeconds * 1000;
    const deadline = new AbortController();
    const cancelDeadline = startDeadline(
      timeout,
      () => deadline.abort(new DeadlineError(this.config.timeoutSeconds)),
      this.oauth,
    );
    const options = {
      timeout: this.sdkTimeoutMs(timeout),
      signal: deadline.signal,
      cacheMode: "refresh" as const,
    };
    try {
      return await this.#list(which, caps, options);
    } finally {
      cancelDeadline();
    }
  }

  async #list(
    which: ListName | undefined,
    caps: ServerCapabilities,
    options: { timeout: number; signal: AbortSignal; cacheMode: "refresh" },
  ): Promise<Lists> {
    const want = (name: ListName) => which === undefined || which === name;
    const [tools, prompts, resources, templates] = await Promise.all([
      want("tools") && caps.tools
        ? this.client.listTools(undefined, options).then((r) => this.rawSchemas.apply(r.tools))
        : this.lists.tools,
      want("prompts") && caps.prompts
        ? this.client.listPrompts(undefined, options).then((r) => r.prompts)
        : this.lists.prompts,
      want("resources") && caps.resources
        ? this.client.listResources(undefined, options).then((r) => r.resources)
        : this.lists.resources,
      want("resources") && caps.resources
        ? this.client.listResourceTemplates(undefined, options).then((r) => r.resourceTemplates)
          .catch(() => [])
        : this.lists.templates,
    ]);
    this.lists = { tools, prompts, resources, templates };
    return this.lists;
  }

  /** Why the transport closed, in words (for a lost connection). */
  closeReason(): string {
    const transport = this.transport;
    if (transport instanceof HttpTransport) {
      const reason = transport.closeReason;
      return reason && "detail" in reason ? reason.detail : "the connection to the server closed";
    }
    const reason = transport.closeReason;
    const evidence = transport.evidence();
    const lastLine = evidence.stderrTail.at(-1);
    const stderr = lastLine ? `; its last stderr line: "${lastLine}"` : "";
    switch (reason?.kind) {
      case "exited":
        return (reason.signal
          ? `the server process was killed by ${reason.signal}`
          : `the server process exited with code ${reason.code}`) + stderr;
      case "oversize":
        return `the server sent a message of more than ${
          Math.round(reason.limit / 1024 / 1024)
        } MB, so patchbay closed it`;
      case "stdout_closed":
        return `the server closed its stdout${stderr}`;
      default:
        return "the connection to the server closed";
    }
  }

  /** Ends the session: the transport's orderly shutdown (stdio) or `DELETE` (HTTP). */
  async close(): Promise<void> {
    this.#closing = true;
    await this.client.close().catch(() => {});
    await this.transport.close().catch(() => {});
  }
}

/** The transport for an entry. */
function createTransport(
  config: ServerConfig,
  options: ServerSessionOptions,
  oauth: PatchbayOAuthProvider | undefined,
  rawSchemas: RawToolSchemas,
): AnyTransport {
  const observer = tracingObserver(config.name, config.transport, rawSchemas);
  if (config.transport === "stdio") {
    return new StdioTransport({
      observer,
      command: config.command,
      args: config.args,
      env: config.env,
      cwd: config.cwd,
      parentEnv: options.parentEnv,
      stdinCloseGraceMs: options.stdinCloseGraceMs,
      log: options.log.child("stderr"),
    });
  }
  const log = options.log.child("http");
  const network = options.network ?? PROCESS_NETWORK;
  return new HttpTransport({
    observer,
    kind: config.transport,
    url: config.url,
    headers: config.headers,
    timeoutSeconds: config.timeoutSeconds,
    sseReadTimeoutSeconds: config.sseReadTimeoutSeconds,
    // The SDK reads tokens from the provider; the wrapper logs in and retries on a
    // refusal, which the SDK alone would only report.
    authProvider: oauth,
    authorize: oauth && ((fetch) => oauth.wrapFetch(fetch)),
    fetch: oauth ? network.fetch : bearerFetch(config, { log, base: network.fetch }),
    log,
  });
}

/** A deadline that passed. */
class DeadlineError extends Error {
  constructor(seconds: number) {
    super(`no answer within ${seconds} s`);
    this.name = "DeadlineError";
  }
}

/**
 * Connects to `config`'s server and loads its lists, within `config.timeoutSeconds`
 * (a browser login, when one is needed, is not counted). Throws the diagnosed
 * {@linkcode PatchbayError} on failure.
 */
export async function openSession(
  config: ServerConfig,
  options: ServerSessionOptions,
): Promise<ServerSession> {
  try {
    return await attemptSession(config, options);
  } catch (error) {
    if (!(error instanceof ProbeEndedProcess)) throw error;
    // Some 2025-era stdio servers exit on any request before initialize; the probe spent
    // this process's life, so a fresh one gets the 2025 handshake straight away.
    options.log.info(
      `the server process ended on the version probe (server/discover: ${error.detail}); ` +
        "starting it again for the 2025 handshake (initialize)",
    );
    return await attemptSession({ ...config, protocol: "legacy" }, options);
  }
}

/** A stdio server ended when probed with `server/discover`: it wants `initialize` first. */
class ProbeEndedProcess extends Error {
  constructor(readonly detail: string) {
    super(`the server process ended on the version probe: ${detail}`);
    this.name = "ProbeEndedProcess";
  }
}

/** Whether `error` is the probe of an `auto` stdio entry ending its process. */
function probeEndedProcess(config: ServerConfig, session: ServerSession, error: unknown): boolean {
  const transport = session.transport;
  return config.transport === "stdio" && (config.protocol ?? "auto") === "auto" &&
    transport instanceof StdioTransport && session.protocolVersion === undefined &&
    error instanceof SdkError && error.code === SdkErrorCode.EraNegotiationFailed &&
    (transport.closeReason?.kind === "exited" || transport.closeReason?.kind === "stdout_closed");
}

async function attemptSession(
  config: ServerConfig,
  options: ServerSessionOptions,
): Promise<ServerSession> {
  const log = options.log;
  const oauth = config.transport === "stdio" ? undefined : options.oauth;
  const rawSchemas = new RawToolSchemas();
  const transport = createTransport(config, options, oauth, rawSchemas);
  // Capabilities are fixed by the handshake: a server whose roots appear or vanish later
  // needs a new session (ServerConnection.setRoots).
  const offersRoots = options.requests.roots() !== undefined;
  const offersElicitation = !options.requests.handlers().withoutElicitation;
  const client = new Client(options.clientInfo ?? CLIENT_INFO, {
    capabilities: clientCapabilities(offersRoots, offersElicitation),
    ...negotiationOptions(config),
  });
  const session = new ServerSession(config, client, transport, { oauth, offersRoots, rawSchemas });
  installRequestHandlers(
    client,
    { ...options.requests, server: config, log },
    offersRoots,
    offersElicitation,
  );
  watch(session, options.hooks, log);

  const timeoutMs = config.timeoutSeconds * 1000;
  const started = Date.now();
  const deadline = new AbortController();
  const cancelDeadline = startDeadline(
    timeoutMs,
    () => deadline.abort(new DeadlineError(config.timeoutSeconds)),
    oauth,
  );
  const onAbort = () => deadline.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    if (oauth) {
      // Tokens before the handshake: stored ones as they are, expired ones refreshed,
      // else a browser login. Aborting (closing, Ctrl+C, or the deadline while the
      // servers are being asked) cancels a login and frees the callback port.
      const outcome = await race(oauth.ensureLogin({ signal: deadline.signal }), deadline.signal);
      log.debug(`OAuth: ${outcome}`);
    }
    await race(
      client.connect(transport, { timeout: session.sdkTimeoutMs(timeoutMs + SDK_TIMER_SLACK_MS) }),
      deadline.signal,
    );
    await race(session.relist(), deadline.signal);
    session.established = true;
  } catch (error) {
    const timedOut = deadline.signal.reason instanceof DeadlineError;
    if (options.signal?.aborted) {
      // Closing or skipped, not failing: nothing to diagnose, and nobody waiting for a
      // diagnosis (nor for the process to end its grace periods).
      const closing = session.close();
      if (options.cleanup) options.cleanup(closing);
      else await closing;
      const reason = options.signal.reason;
      throw reason instanceof PatchbayError
        ? reason
        : new CancelledError(`connecting to server '${config.name}'`);
    }
    if (probeEndedProcess(config, session, error)) {
      await session.close();
      throw new ProbeEndedProcess(session.closeReason());
    }
    const failure = await diagnoseAttempt(config, session, error, timedOut, options);
    // The failure is known now; ending the process (which may sit out its grace periods)
    // need not delay reporting it.
    const closing = session.close();
    if (options.cleanup) options.cleanup(closing);
    else await closing;
    throw failure;
  } finally {
    cancelDeadline();
    options.signal?.removeEventListener("abort", onAbort);
  }
  log.info(`connected in ${Date.now() - started} ms`, {
    server: session.serverInfo?.name,
    version: session.serverInfo?.version,
    protocol: session.protocolVersion,
    negotiation: config.protocol ?? "auto",
    tools: session.lists.tools.length,
  });
  return session;
}

async function diagnoseAttempt(
  config: ServerConfig,
  session: ServerSession,
  error: unknown,
  timedOut: boolean,
  options: ServerSessionOptions,
): Promise<PatchbayError> {
  const transport = session.transport;
  if (transport instanceof StdioTransport && !timedOut) {
    // The process may be exiting right now: its status and last words are the evidence.
    if (await settlesWithin(transport.exited, EXIT_EVIDENCE_WAIT_MS)) {
      await settlesWithin(transport.whenClosed(), EXIT_EVIDENCE_WAIT_MS);
    }
  }
  const failure = await diagnose({
    server: config,
    error,
    timedOut,
    stdio: transport instanceof StdioTransport ? transport.evidence() : undefined,
    httpClose: transport instanceof HttpTransport ? transport.closeReason : undefined,
    probeTimeoutMs: options.probeTimeoutMs,
    network: options.network,
  });
  options.log.warn(`connection failed: ${failure.reason}`, { remedy: failure.remedy });
  return failure;
}

/** Routes the session's notifications and its end to the hooks. */
function watch(session: ServerSession, hooks: ServerSessionHooks, log: Log): void {
  const client = session.client;
  client.setNotificationHandler(
    "notifications/tools/list_changed",
    () => hooks.listChanged("tools"),
  );
  client.setNotificationHandler(
    "notifications/prompts/list_changed",
    () => hooks.listChanged("prompts"),
  );
  client.setNotificationHandler(
    "notifications/resources/list_changed",
    () => hooks.listChanged("resources"),
  );
  client.setNotificationHandler(
    "notifications/resources/updated",
    (notification) => hooks.resourceUpdated(notification.params.uri),
  );
  client.setNotificationHandler("notifications/message", (notification) => {
    hooks.serverLog(notification.params);
  });
  client.onerror = (error) => {
    log.debug(`protocol: ${error.message.slice(0, STDERR_LINE_MAX_CHARS)}`);
    // An idle HTTP session has no request to fail: the event stream that cannot be
    // reopened is how a server that went away shows.
    if (
      !(session.transport instanceof HttpTransport) || !session.established || session.closing
    ) return;
    if (/Maximum reconnection attempts/.test(error.message)) {
      hooks.lost(`the server's event stream could not be reopened (${error.message})`);
    } else {
      // A dropped stream, a failed reopening, a failed POST: a ping tells whether the
      // server is still there (a stream cut by a proxy is not a lost server).
      // (The error's own text is in the debug log above; it is no message for a person.)
      hooks.suspect("its event stream dropped, or a request to it failed");
    }
  };
  client.onclose = () => {
    // Before the handshake completes, a close is the attempt's failure, reported there.
    if (session.established && !session.closing) hooks.lost(session.closeReason());
  };
  if (session.transport instanceof HttpTransport) {
    session.transport.onsessionrenewed = () => hooks.renewed();
  }
}

/** Settles like `promise`, or rejects with the signal's reason when it aborts first. */
function race<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  // The losing promise must not surface later as an unhandled rejection.
  promise.catch(() => {});
  return abortable(promise, signal);
}
