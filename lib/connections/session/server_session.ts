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
 * The session an attempt opens is {@linkcode ServerSession} (`live_session.ts`, re-exported
 * here); its transport is made by `session_transport.ts`, and what it hears is routed by
 * `session_notifications.ts`.
 *
 * @module
 */

import { Client, type Implementation, SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import type { HttpServerConfig, ServerConfig } from "../../config/types.ts";
import { CancelledError, PatchbayError } from "../../errors.ts";
import type { Log } from "../../log/log.ts";
import type { PatchbayOAuthProvider } from "../../oauth/mod.ts";
import { negotiationOptions } from "../../protocol.ts";
import type { Network } from "../../proxy.ts";
import { HttpTransport } from "../../transports/http.ts";
import { StdioTransport } from "../../transports/stdio.ts";
import { startDeadline } from "../../async/wait_clock.ts";
import { abortable } from "../../async/abortable.ts";
import { settlesWithin } from "../../async/deadline.ts";
import { NAME, VERSION } from "../../version.ts";
import { diagnose } from "../diagnosis/diagnose.ts";
import { RawToolSchemas } from "../raw_schemas.ts";
import { legacySseEntry } from "../sse_fallback.ts";
import { traceTransportFallback } from "../../trace/active.ts";
import {
  clientCapabilities,
  inputAnswerer,
  installRequestHandlers,
  type RequestContext,
} from "../requests.ts";
import { receiverCapabilities } from "../tasks/task_generation.ts";
import { DeadlineError, ServerSession } from "./live_session.ts";
import { createTransport } from "./session_transport.ts";
import { HelperHeaders } from "../../secrets/headers_helper.ts";
import { type Redactor, sessionRedactor } from "../../redact/redact.ts";
import { type ServerSessionHooks, watchSession } from "./session_notifications.ts";
import type { InstallStatus } from "../types.ts";
import { ConnectAttempt } from "../../telemetry/connect_span.ts";

export {
  type ListName,
  type Lists,
  OAUTH_LOGIN_ALLOWANCE_MS,
  ServerSession,
} from "./live_session.ts";
export type { ServerSessionHooks } from "./session_notifications.ts";

/** How patchbay introduces itself to servers. */
export const CLIENT_INFO: Implementation = { name: NAME, version: VERSION };

/**
 * Extra time the SDK's own handshake timer gets over patchbay's deadline: patchbay's
 * fires first and diagnoses while the evidence is there.
 */
const SDK_TIMER_SLACK_MS = 10_000;

/** How long a failed attempt waits for the process's exit status and last output. */
const EXIT_EVIDENCE_WAIT_MS = 1500;

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
  /** Where stdio servers' and helpers' inherited variables come from. @default Deno.env.get */
  parentEnv?: (name: string) => string | undefined;
  /** Where a `headers_helper`'s values are registered as secrets. @default sessionRedactor */
  redactor?: Redactor;
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
  /**
   * The package runner's install this attempt may wait for: the handshake's deadline is its
   * `boundSeconds` instead of the server's `timeout`, and a timeout says so.
   */
  installing?: InstallStatus;
  /** Deadline of each diagnosis probe. @default DIAGNOSIS_PROBE_MS */
  probeTimeoutMs?: number;
  /**
   * Time a stdio server gets to exit by itself once its stdin is closed, before its
   * process group is signalled. @default STDIN_CLOSE_GRACE_MS
   */
  stdinCloseGraceMs?: number;
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
    if (error instanceof LegacySseServer) {
      const reason = error.entry.transportReason ?? "";
      options.log.info(`falling back to the legacy SSE transport: ${reason}`);
      traceTransportFallback(config.name, reason);
      return await attemptSession(error.entry, options);
    }
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

/** A server reached at an inferred streamable HTTP url answered the legacy SSE way. */
class LegacySseServer extends Error {
  constructor(readonly entry: HttpServerConfig) {
    super(`the server speaks the legacy SSE transport: ${entry.transportReason}`);
    this.name = "LegacySseServer";
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
  // A headers helper runs first, each attempt: its failure is the attempt's, as it is.
  const helper = await helperHeaders(config, options);
  const rawSchemas = new RawToolSchemas();
  // The attempt's span; its requests (probe, initialize, lists) are its children.
  const attempt = new ConnectAttempt(config);
  const transport = createTransport(config, options, {
    oauth,
    rawSchemas,
    requests: attempt.requests,
    helper,
  });
  // Capabilities are fixed by the handshake: a server whose roots appear or vanish later
  // needs a new session (ServerConnection.setRoots).
  const offersRoots = options.requests.roots() !== undefined;
  const offersElicitation = !options.requests.handlers().withoutElicitation;
  const offersSampling = !options.requests.handlers().withoutSampling;
  const receives = offersSampling || offersElicitation;
  const capabilities = {
    ...clientCapabilities(offersRoots, offersElicitation, offersSampling),
    // Servers may send their sampling requests and forms as tasks (2025-11-25).
    ...(receives ? { tasks: receiverCapabilities(offersSampling, offersElicitation) } : {}),
  };
  const clientInfo = options.clientInfo ?? CLIENT_INFO;
  const client = new Client(clientInfo, { capabilities, ...negotiationOptions(config) });
  const session = new ServerSession(config, client, transport, {
    oauth,
    offersRoots,
    rawSchemas,
    framing: { clientInfo, capabilities },
  });
  const requests = { ...options.requests, server: config, log };
  installRequestHandlers(client, requests, offersRoots, offersElicitation, offersSampling);
  if (receives) {
    // ext-tasks loads with the first server, not with the program (start-up cost).
    const { receiveTasks } = await import("../tasks/task_receiver.ts");
    const receiver = receiveTasks(client, requests, offersSampling, offersElicitation);
    session.beforeClose(() => Promise.resolve(receiver.close()));
  }
  session.answer = inputAnswerer(requests, offersElicitation);
  watchSession(session, options.hooks, log);
  attempt.requests.details = () => ({
    sessionId: transport instanceof HttpTransport ? transport.sessionId : undefined,
    protocolVersion: session.protocolVersion,
  });

  const timeoutSeconds = options.installing?.boundSeconds ?? config.timeoutSeconds;
  const timeoutMs = timeoutSeconds * 1000;
  const started = Date.now();
  const deadline = new AbortController();
  const cancelDeadline = startDeadline(
    timeoutMs,
    () => deadline.abort(new DeadlineError(timeoutSeconds)),
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
      const called = reason instanceof PatchbayError
        ? reason
        : new CancelledError(`connecting to server '${config.name}'`);
      attempt.failed(called, false);
      throw called;
    }
    if (probeEndedProcess(config, session, error)) {
      await session.close();
      const ended = new ProbeEndedProcess(session.closeReason());
      attempt.failed(ended, false);
      throw ended;
    }
    const legacy = timedOut ? undefined : await legacySseEntry(config, error, options);
    if (legacy) {
      const closing = session.close();
      if (options.cleanup) options.cleanup(closing);
      else await closing;
      throw new LegacySseServer(legacy);
    }
    const failure = await diagnoseAttempt(config, session, error, timedOut, options);
    attempt.failed(failure);
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
  attempt.connected({ ...attempt.requests.details(), tools: session.lists.tools.length });
  log.info(`connected in ${Date.now() - started} ms`, {
    server: session.serverInfo?.name,
    version: session.serverInfo?.version,
    protocol: session.protocolVersion,
    negotiation: config.protocol ?? "auto",
    tools: session.lists.tools.length,
  });
  return session;
}

/** The entry's `headers_helper`, run once for this attempt; none without one. */
async function helperHeaders(
  config: ServerConfig,
  options: ServerSessionOptions,
): Promise<HelperHeaders | undefined> {
  if (config.transport === "stdio" || !config.headersHelper) return undefined;
  const helper = new HelperHeaders({ ...config, headersHelper: config.headersHelper }, {
    parentEnv: options.parentEnv ?? ((name) => Deno.env.get(name)),
    redactor: options.redactor ?? sessionRedactor,
    log: options.log.child("headers_helper"),
  });
  await helper.current(options.signal);
  return helper;
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
    installing: options.installing,
  });
  options.log.warn(`connection failed: ${failure.reason}`, { remedy: failure.remedy });
  return failure;
}

/** Settles like `promise`, or rejects with the signal's reason when it aborts first. */
function race<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  // The losing promise must not surface later as an unhandled rejection.
  promise.catch(() => {});
  return abortable(promise, signal);
}
