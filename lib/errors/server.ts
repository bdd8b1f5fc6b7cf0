/**
 * The errors of MCP servers: failing to connect, not connected now, closed mid-request,
 * skipped while connecting, a request answered with an error, and a mention that could
 * not be read.
 *
 * @module
 */

import { fill, type RemedyText, ROWS } from "./failure_table.ts";
import { type ErrorDetails, PatchbayError } from "./base.ts";
import { CONNECTION_STEPS } from "./connection_steps.ts";

/**
 * How a detail line that quotes a server's stderr starts: the JSON of an error gives those
 * lines a `stderr` field of their own.
 */
export const STDERR_DETAIL = "stderr: ";

/** `Failed to connect to server '<name>': Session terminated`, with a diagnosed cause. */
export class ServerConnectError extends PatchbayError {
  readonly server: string;
  constructor(server: string, info: ErrorDetails) {
    super("server_connect_failed", fill(ROWS.not_running.messages[0], { server }), info);
    this.server = server;
  }
}

/** A server is configured but not connected now (failed, reconnecting, disabled, closed). */
export class ServerUnavailableError extends PatchbayError {
  readonly server: string;
  constructor(server: string, state: string, info: Omit<ErrorDetails, "exitCode">) {
    super("server_unavailable", `Server '${server}' is not connected (${state})`, info);
    this.server = server;
  }
}

/** The connection to a server closed while a request was waiting for its answer. */
export class ConnectionClosedError extends PatchbayError {
  readonly server: string;
  constructor(server: string, what: string, info: Omit<ErrorDetails, "exitCode">) {
    super(
      "connection_closed",
      `Connection closed: server '${server}' went away during ${what}`,
      info,
    );
    this.server = server;
  }
}

/**
 * A server still connecting when the person pressed Ctrl+C to go on without it: its
 * attempt was stopped, and the command goes on with the servers that did connect.
 */
export class ConnectSkippedError extends PatchbayError {
  readonly server: string;
  constructor(server: string, seconds: number) {
    super("cancelled", `Skipped server '${server}': still connecting after ${seconds} s`, {
      reason: "Ctrl+C was pressed while patchbay waited for it; its connection attempt was " +
        "stopped and the command went on without it",
      remedy: CONNECTION_STEPS.connectSkipped,
    });
    this.server = server;
  }
}

/** A server answered a request (other than a tool call) with an error. */
export class ServerRequestError extends PatchbayError {
  readonly server: string;
  /** The JSON-RPC error code, when the server sent one. */
  readonly rpcCode?: number;
  constructor(
    server: string,
    what: string,
    info: Omit<ErrorDetails, "exitCode">,
    rpcCode?: number,
  ) {
    super("server_request_failed", `Server '${server}' could not ${what}`, info);
    this.server = server;
    this.rpcCode = rpcCode;
  }
}

/**
 * An HTTP server found unusable by the request OAuth sends before a login (unreachable,
 * no endpoint at the URL, a server error). Reported as it is by `patchbay auth login`; in
 * a session the connection diagnosis looks further (which port, which path), so the
 * failure reads the same as for an entry without OAuth.
 */
export class ServerProbeFailedError extends ServerConnectError {}

/** JSON-RPC's code for a method the server does not have. */
const METHOD_NOT_FOUND = -32601;

/** Why a mention could not be read, and what to do, from what its read threw. */
function mentionFailure(server: string, cause: unknown): { reason: string; remedy: RemedyText } {
  const unsent = "the message was not sent";
  // "Method not found": the server has no resources at all, whatever the URI.
  if (cause instanceof ServerRequestError && cause.rpcCode === METHOD_NOT_FOUND) {
    return {
      reason: `${server} offers no resources (it answered resources/read with ` +
        `${METHOD_NOT_FOUND}: method not found); ${unsent}`,
      remedy: CONNECTION_STEPS.mentionNoResources,
    };
  }
  if (!(cause instanceof PatchbayError)) {
    const why = cause instanceof Error ? cause.message : String(cause);
    return {
      reason: `${server} answered: ${why}; ${unsent}`,
      remedy: CONNECTION_STEPS.checkTheUri(server),
    };
  }
  return {
    reason: `${cause.message}${cause.reason ? `: ${cause.reason}` : ""}; ${unsent}`,
    remedy: cause.code !== "server_request_failed"
      ? cause.remedies
      : CONNECTION_STEPS.checkTheUri(server),
  };
}

/**
 * A resource a message mentioned (`@server:uri`) could not be read; the message was not
 * sent, so nothing reached the model or the conversation.
 */
export class MentionReadError extends PatchbayError {
  readonly server: string;
  readonly uri: string;
  constructor(server: string, uri: string, cause: unknown) {
    super("server_request_failed", `Could not read @${server}:${uri}`, {
      ...mentionFailure(server, cause),
      cause,
    });
    this.server = server;
    this.uri = uri;
  }
}

/**
 * A task patchbay recorded that its server no longer knows (`tasks/get` answered "invalid
 * params": it expired, or the server lost it).
 */
export class TaskUnknownError extends PatchbayError {
  readonly server: string;
  readonly taskId: string;
  /** `said`: the server's answer, or (`byServer` false) why patchbay could not ask it. */
  constructor(server: string, taskId: string, said: string, byServer = true) {
    super("task_unknown", fill(ROWS.task_unknown.messages[0], { task: taskId, server }), {
      reason: byServer
        ? `the server answered: ${said} (a server forgets a task once its ttl has passed, ` +
          "and may forget it when it restarts or ends the session it was started in)"
        : said,
      remedy: ROWS.task_unknown.remedy,
    });
    this.server = server;
    this.taskId = taskId;
  }
}

/** A task id (or prefix) that names none of the tasks patchbay recorded, or several. */
export class TaskNotFoundError extends PatchbayError {
  constructor(id: string, reason: string = ROWS.task_not_found.causes[0]) {
    super("task_not_found", fill(ROWS.task_not_found.messages[0], { task: id }), {
      reason,
      remedy: ROWS.task_not_found.remedy,
    });
  }
}
