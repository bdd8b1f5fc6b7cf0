/**
 * One request on a server's live session under its one deadline: the bound the caller
 * asked for (the server's `timeout`, or the tool call's), cancelling the request on the
 * server when it runs out and naming the timeout (`ToolTimeoutError` for a tool). The
 * SDK's own timers are parked far beyond it, and it leaves out the time the person spends
 * logging in again or answering the server (a form, a sampling request).
 *
 * Failures become typed errors that name the server; on a network session, one that
 * cannot reach the server is diagnosed as the session's loss, and one that timed out
 * sets off a liveness check (`liveness.ts`).
 *
 * @module
 */

import { ProtocolError, type RequestOptions } from "@modelcontextprotocol/client";
import {
  CancelledError,
  ConnectionClosedError,
  type PatchbayError,
  ServerConnectError,
  TimeoutError,
  ToolTimeoutError,
} from "../errors.ts";
import { type LoginClock, startDeadline } from "../async/wait_clock.ts";
import { timerDelay } from "../async/timers.ts";
import { isNetwork, type LivenessWatch } from "./liveness.ts";
import { isConnectionLoss, requestError } from "./request_errors.ts";
import type { ServerSession } from "./session/server_session.ts";
import type { ProgressUpdate } from "./types.ts";

/**
 * Room the SDK's own request timers get beyond a request's timeout for the time the
 * server waits on patchbay (a person filling in its form). The SDK insists on a timer of its
 * own (60 s when none is given); parked this far out it is not a deadline but a backstop that
 * never fires first. The one deadline of a request, a tool call included, is the one
 * {@linkcode requestWithDeadline} starts: it leaves that time out, cancels the request on the
 * server and names the timeout (`ToolTimeoutError` for a tool).
 */
const SERVER_WAITS_ON_US_ALLOWANCE_MS = 60 * 60 * 1000;

/** Options of {@linkcode ServerConnection.request}. */
export interface ConnectionRequestOptions {
  /**
   * The request's own bound: a tool call's `AgentConfig.tool_call_timeout` (the manager
   * passes `toolCallTimeoutSeconds` here). @default the server's `timeout`
   */
  timeoutSeconds?: number;
  signal?: AbortSignal;
  /** For tool calls: the catalogue name (for error messages). */
  tool?: string;
  onProgress?: (update: ProgressUpdate) => void;
  /**
   * The answer is not the server's data but a handle over it (a task's execution), masked
   * where its data is read: it is returned as it is. @default false
   */
  unmasked?: boolean;
}

/** The connection a request runs on, as {@linkcode requestWithDeadline} sees it. */
export interface RequestHost {
  /** The server's name, for messages. */
  server: string;
  /** The server's `timeout`: the deadline unless the request names its own. */
  timeoutSeconds: number;
  /** The time the deadline leaves out (logins, the server waiting on us). */
  clock: LoginClock;
  liveness: LivenessWatch;
  /** The session the connection holds now: another one means the request's was lost. */
  current: () => ServerSession | undefined;
  /** `error`, saying that patchbay keeps trying if the server is being restarted. */
  restarting: (error: PatchbayError) => PatchbayError;
}

/**
 * Runs one request on `session` with a hard deadline, the caller's signal and progress,
 * mapping failures to typed errors that name the server.
 */
export async function requestWithDeadline<T>(
  host: RequestHost,
  session: ServerSession,
  what: string,
  run: (session: ServerSession, options: RequestOptions) => Promise<T>,
  options: ConnectionRequestOptions = {},
): Promise<T> {
  const { liveness } = host;
  if (options.signal?.aborted) throw new CancelledError(`${what} on server '${host.server}'`);
  // The tool call's tool_call_timeout, else the server's timeout: the one deadline.
  const timeoutSeconds = options.timeoutSeconds ?? host.timeoutSeconds;
  const ms = timeoutSeconds * 1000;
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
    host.clock,
  );
  const onAbort = () => controller.abort(cancelled);
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const onProgress = options.onProgress;
  try {
    const result = await run(session, {
      signal: controller.signal,
      timeout: timerDelay(sdkBackstopMs(session, ms)),
      resetTimeoutOnProgress: true,
      maxTotalTimeout: timerDelay(sdkBackstopMs(session, ms)),
      onprogress: onProgress && ((p) => {
        liveness.heard(session);
        onProgress({ progress: p.progress, total: p.total, message: p.message });
      }),
    });
    liveness.heard(session);
    return result;
  } catch (error) {
    // The server's own error answer shows it is alive.
    if (error instanceof ProtocolError) liveness.heard(session);
    const gone = session.closing || host.current() !== session;
    const loss = gone ? liveness.lossOf(session) : undefined;
    const failure = requestError(error, {
      server: host.server,
      what,
      tool: options.tool,
      timeoutSeconds,
      timedOut: controller.signal.reason === timedOut,
      cancelled: controller.signal.reason === cancelled,
      closedBecause: gone ? loss?.reason ?? session.closeReason() : undefined,
    });
    if (!isNetwork(session) || failure instanceof CancelledError) throw failure;
    if (gone) {
      // A loss diagnosed as a failure to reach the server is reported as such.
      throw failure instanceof ConnectionClosedError && loss instanceof ServerConnectError
        ? host.restarting(loss)
        : failure;
    }
    if (failure instanceof ConnectionClosedError && isConnectionLoss(error)) {
      // HTTP has no process to watch: a request that cannot reach the server is the
      // loss, reported with what a look at the address found.
      throw host.restarting(await liveness.confirmLoss(session, error));
    }
    if (failure instanceof TimeoutError || failure instanceof ToolTimeoutError) {
      // Slow, or gone without a word: a ping tells which.
      liveness.suspect(session, `${what} got no answer within ${timeoutSeconds} s`);
    }
    throw failure;
  } finally {
    cancelDeadline();
    options.signal?.removeEventListener("abort", onAbort);
  }
}

/** The SDK's own timer for a request of `ms` on `session`: a backstop that never fires first. */
export function sdkBackstopMs(session: ServerSession, ms: number): number {
  return session.sdkTimeoutMs(ms) + SERVER_WAITS_ON_US_ALLOWANCE_MS;
}
