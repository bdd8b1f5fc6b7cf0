/**
 * One attempt to connect to one server: transport, MCP client, handshake within the
 * server's `timeout`, and the first listing of its tools, prompts, resources and
 * resource templates. A failed attempt is diagnosed while the evidence is still there
 * (the process still running, its ports still open), then cleaned up, and thrown as a
 * typed error.
 *
 * @module
 */

import {
  Client,
  type Implementation,
  type LoggingMessageNotification,
  type OAuthClientProvider,
  type Prompt,
  type Resource,
  type ResourceTemplateType as ResourceTemplate,
  type ServerCapabilities,
  type Tool,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import type { HttpServerConfig, ServerConfig } from "../config/types.ts";
import { CancelledError, type PatchbayError } from "../errors.ts";
import type { Log } from "../log.ts";
import { HttpTransport } from "../transports/http.ts";
import { STDERR_LINE_MAX_CHARS, StdioTransport } from "../transports/stdio.ts";
import { settlesWithin } from "../transports/timing.ts";
import { NAME, VERSION } from "../version.ts";
import { checkOAuthSupport, diagnose, DIAGNOSIS_PROBE_MS } from "./diagnose.ts";
import { CLIENT_CAPABILITIES, installRequestHandlers, type RequestContext } from "./requests.ts";

/** How patchbay introduces itself to servers. */
export const CLIENT_INFO: Implementation = { name: NAME, version: VERSION };

/**
 * Extra time the SDK's own handshake timer gets over patchbay's deadline: patchbay's
 * fires first and diagnoses while the evidence is there.
 */
const SDK_TIMER_SLACK_MS = 10_000;

/** How long a failed attempt waits for the process's exit status and last output. */
const EXIT_EVIDENCE_WAIT_MS = 1500;

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
export interface SessionHooks {
  listChanged(list: ListName): void;
  resourceUpdated(uri: string): void;
  serverLog(params: LoggingMessageNotification["params"]): void;
  /** The connection closed without being asked to; `reason` says why. */
  lost(reason: string): void;
  /** An HTTP session was replaced by a new one (server-side state is gone). */
  renewed(): void;
}

/** Options of {@linkcode openSession}. */
export interface SessionOptions {
  log: Log;
  /** @default CLIENT_INFO */
  clientInfo?: Implementation;
  requests: Omit<RequestContext, "server" | "log">;
  hooks: SessionHooks;
  authProvider?: OAuthClientProvider;
  /**
   * Completes an interactive OAuth authorization: resolves with the callback's query
   * parameters once the person has logged in.
   */
  awaitAuthorization?: (signal: AbortSignal) => Promise<URLSearchParams>;
  /** Aborts the attempt (the manager is closing). */
  signal?: AbortSignal;
  /** Where stdio servers' inherited variables come from. @default Deno.env.get */
  parentEnv?: (name: string) => string | undefined;
  /**
   * Receives the shutdown of a failed attempt's transport, to finish in the background
   * (the caller must await it before it is done itself). Without it, the shutdown is
   * awaited before the failure is thrown.
   */
  cleanup?: (closing: Promise<void>) => void;
  /** Deadline of each diagnosis probe. @default DIAGNOSIS_PROBE_MS */
  probeTimeoutMs?: number;
}

type AnyTransport = StdioTransport | HttpTransport;

/** A live connection to one server. */
export class Session {
  readonly config: ServerConfig;
  readonly client: Client;
  readonly transport: AnyTransport;
  lists: Lists = { tools: [], prompts: [], resources: [], templates: [] };
  /** The handshake and first listing succeeded. */
  established = false;
  #closing = false;

  constructor(config: ServerConfig, client: Client, transport: AnyTransport) {
    this.config = config;
    this.client = client;
    this.transport = transport;
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

  /** Fetches the lists again (all, or the one named), each bounded by `timeout`. */
  async relist(which?: ListName): Promise<Lists> {
    const caps = this.capabilities;
    const timeout = this.config.timeoutSeconds * 1000;
    const options = { timeout, cacheMode: "refresh" as const };
    const want = (name: ListName) => which === undefined || which === name;
    const [tools, prompts, resources, templates] = await Promise.all([
      want("tools") && caps.tools
        ? this.client.listTools(undefined, options).then((r) => r.tools)
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
      return reason?.kind === "session_lost"
        ? reason.detail
        : "the connection to the server closed";
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
  options: SessionOptions,
): AnyTransport {
  if (config.transport === "stdio") {
    return new StdioTransport({
      command: config.command,
      args: config.args,
      env: config.env,
      cwd: config.cwd,
      parentEnv: options.parentEnv,
      log: options.log.child("stderr"),
    });
  }
  return new HttpTransport({
    kind: config.transport,
    url: config.url,
    headers: config.headers,
    timeoutSeconds: config.timeoutSeconds,
    sseReadTimeoutSeconds: config.sseReadTimeoutSeconds,
    authProvider: options.authProvider,
    log: options.log.child("http"),
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
 * (an interactive OAuth login, when one is needed, is not counted). Throws the
 * diagnosed {@linkcode PatchbayError} on failure.
 */
export async function openSession(
  config: ServerConfig,
  options: SessionOptions,
  authorized = false,
): Promise<Session> {
  const log = options.log;
  if (config.transport !== "stdio" && config.auth?.method === "oauth" && !authorized) {
    const unsupported = await checkOAuthSupport(
      config,
      options.probeTimeoutMs ?? DIAGNOSIS_PROBE_MS,
    );
    if (unsupported) throw unsupported;
  }
  const transport = createTransport(config, options);
  const client = new Client(options.clientInfo ?? CLIENT_INFO, {
    capabilities: CLIENT_CAPABILITIES,
  });
  const session = new Session(config, client, transport);
  installRequestHandlers(client, { ...options.requests, server: config, log });
  watch(session, options.hooks, log);

  const timeoutMs = config.timeoutSeconds * 1000;
  const started = Date.now();
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new DeadlineError(config.timeoutSeconds)),
    timeoutMs,
  );
  const onAbort = () => deadline.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    await race(
      client.connect(transport, { timeout: timeoutMs + SDK_TIMER_SLACK_MS }),
      deadline.signal,
    );
    await race(session.relist(), deadline.signal);
    session.established = true;
  } catch (error) {
    const timedOut = deadline.signal.reason instanceof DeadlineError;
    if (
      error instanceof UnauthorizedError && options.awaitAuthorization && !authorized &&
      transport instanceof HttpTransport && config.transport !== "stdio"
    ) {
      clearTimeout(timer);
      return await authorizeThenRetry(config, options, session, transport);
    }
    if (options.signal?.aborted) {
      // Closing, not failing: nothing to diagnose, and nobody waiting for a diagnosis.
      await session.close();
      throw new CancelledError(`connecting to server '${config.name}'`);
    }
    const failure = await diagnoseAttempt(config, session, error, timedOut, options);
    // The failure is known now; ending the process (which may sit out its grace periods)
    // need not delay reporting it.
    const closing = session.close();
    if (options.cleanup) options.cleanup(closing);
    else await closing;
    throw failure;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
  log.info(`connected in ${Date.now() - started} ms`, {
    server: session.serverInfo?.name,
    version: session.serverInfo?.version,
    protocol: session.protocolVersion,
    tools: session.lists.tools.length,
  });
  return session;
}

async function authorizeThenRetry(
  config: HttpServerConfig,
  options: SessionOptions,
  session: Session,
  transport: HttpTransport,
): Promise<Session> {
  options.log.info("the server asks for OAuth authorization; waiting for the login to finish");
  try {
    const signal = options.signal ?? new AbortController().signal;
    const params = await options.awaitAuthorization!(signal);
    await transport.finishAuth(params);
  } finally {
    await session.close();
  }
  return await openSession(config, options, true);
}

async function diagnoseAttempt(
  config: ServerConfig,
  session: Session,
  error: unknown,
  timedOut: boolean,
  options: SessionOptions,
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
    probeTimeoutMs: options.probeTimeoutMs,
  });
  options.log.warn(`connection failed: ${failure.reason}`, { remedy: failure.remedy });
  return failure;
}

/** Routes the session's notifications and its end to the hooks. */
function watch(session: Session, hooks: SessionHooks, log: Log): void {
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
      session.transport instanceof HttpTransport && session.established && !session.closing &&
      /Maximum reconnection attempts/.test(error.message)
    ) {
      hooks.lost(`the server's event stream could not be reopened (${error.message})`);
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
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
