/**
 * What a failed tool call becomes, wherever it ran: a model turn (the REPL or
 * `patchbay run`), `/call`, or `patchbay call`. The person reads the same message, cause and
 * remedy on every surface, the tool named as server and tool (`fs/read_text_file`), and the
 * remedy names only commands of the surface that ran the call (no `/tools` suggested to a
 * script).
 *
 * @module
 */

import type { CatalogueTool } from "../connections/types.ts";
import {
  ConnectionClosedError,
  OAuthFailedError,
  PatchbayError,
  PermissionDeniedError,
  ServerConnectError,
  ServerUnavailableError,
  type Surface,
  TaskUnknownError,
  ToolAnswerRefusedError,
  ToolExecutionError,
  ToolTimeoutError,
} from "../errors.ts";
import { looksLikePermissionError } from "../errors/failure.ts";
import { refusalIn, refusalReason, refusalRemedy } from "./refused_request.ts";
import { abridge } from "../text/text.ts";

export { looksLikePermissionError, type Surface };

/** What the person can do about each kind of tool-call failure. */
export interface ToolRemedies {
  unknownTool: string;
  invalidArguments: string;
  serverError: string;
  timeout: (toolCallTimeoutSeconds: number) => string;
  connectionLost: string;
  declined: string;
}

/** The remedies of each kind of tool-call failure, worded for `surface`. */
export function toolRemedies(surface: Surface): ToolRemedies {
  const repl = surface === "repl";
  return {
    unknownTool: "the model named a tool no connected server offers: the tool list changed " +
      "since it was sent, or the model invented the name; " +
      (repl ? "/tools lists" : "`patchbay tools` lists") + " the tools connected now",
    invalidArguments: "nothing to do unless it repeats: the model is asked to call again " +
      "with valid arguments; if it keeps failing, this model does not handle the tool's " +
      "schema well",
    serverError: "the cause is the server's own message: it says what went wrong (often the " +
      "arguments); " +
      (repl ? "/debug logs" : "run again with --debug to log") +
      " the whole exchange with the server",
    timeout: (toolCallTimeoutSeconds: number) =>
      `raise AgentConfig.tool_call_timeout (now ${toolCallTimeoutSeconds} s) if the tool is slow; ` +
      (repl ? "/debug shows" : "run again with --debug to see") + " how far it got",
    connectionLost: repl
      ? "the server stopped or its connection broke: /connections shows its state " +
        "(patchbay reconnects it by itself), /refresh reconnects it now"
      : "the server stopped or its connection broke: `patchbay doctor` checks it; run the " +
        "command again once it answers",
    declined: repl
      ? 'approve it when asked, pass --yes, or mark the server "trusted" in ' +
        "servers_config.json"
      : 'pass --yes, or mark the server "trusted" in servers_config.json',
  };
}

/** The interactive client's remedies. */
export const TOOL_REMEDY: ToolRemedies = toolRemedies("repl");

/** `server/tool`: how a call is named to the person and to the model alike. */
export function qualifiedName(tool: Pick<CatalogueTool, "server" | "originalName">): string {
  return `${tool.server}/${tool.originalName}`;
}

/** A failed call: what the model reads, and the typed error the person is shown. */
export interface ToolFailure {
  status: "error" | "timeout";
  /** What the model reads as the tool's result. */
  text: string;
  error: PatchbayError;
}

/** A result the server flagged `isError`; `text` is the result converted to text. */
export function errorResultFailure(
  tool: Pick<CatalogueTool, "server" | "originalName">,
  text: string,
  surface: Surface,
): ToolFailure {
  const qualified = qualifiedName(tool);
  return {
    status: "error",
    text: `Tool execution failed: ${qualified}: ${text}`,
    error: refusedError(tool, text) ??
      serverError(tool, `server '${tool.server}' reported: ${oneLine(text)}`, surface),
  };
}

/** The failure as patchbay's when the server's words pass on a refusal of patchbay's. */
function refusedError(
  tool: Pick<CatalogueTool, "server" | "originalName">,
  said: string,
  cause?: unknown,
): PatchbayError | undefined {
  const refused = refusalIn(said);
  if (!refused) return undefined;
  return new ToolExecutionError(
    qualifiedName(tool),
    oneLine(refusalReason(tool.server, refused)),
    cause,
    refusalRemedy(tool.server, refused),
  );
}

/** The call timed out after `AgentConfig.tool_call_timeout` (`toolCallTimeoutSeconds`). */
export function timeoutFailure(
  tool: Pick<CatalogueTool, "server" | "originalName">,
  toolCallTimeoutSeconds: number,
  surface: Surface,
): ToolFailure {
  const qualified = qualifiedName(tool);
  const remedy = toolRemedies(surface).timeout(toolCallTimeoutSeconds);
  return {
    status: "timeout",
    text: `Tool timeout: ${qualified} did not finish within ${toolCallTimeoutSeconds} s ` +
      "(AgentConfig.tool_call_timeout) and was cancelled.",
    error: new ToolTimeoutError(qualified, toolCallTimeoutSeconds, remedy),
  };
}

/**
 * A call the host could not complete: a timeout, the connection, a vanished tool (when
 * `stillOffered` says the host no longer knows it), or the server's error answer.
 */
export function thrownFailure(
  tool: Pick<CatalogueTool, "server" | "originalName">,
  error: unknown,
  options: { toolCallTimeoutSeconds: number; surface: Surface; stillOffered?: boolean },
): ToolFailure {
  const { surface } = options;
  const remedies = toolRemedies(surface);
  if (error instanceof ToolTimeoutError) {
    return timeoutFailure(tool, options.toolCallTimeoutSeconds, surface);
  }
  const qualified = qualifiedName(tool);
  const said = error instanceof PatchbayError
    ? error.reason
    : error instanceof Error
    ? error.message
    : String(error);
  if (
    error instanceof ConnectionClosedError || error instanceof ServerUnavailableError ||
    error instanceof ServerConnectError
  ) {
    const reason = `${error.message}: ${error.reason}`;
    return {
      status: "error",
      text: `Tool execution failed: ${qualified}: ${reason}. Whether the call took effect ` +
        "is unknown.",
      error: new ToolExecutionError(qualified, reason, error, remedies.connectionLost),
    };
  }
  if (
    error instanceof OAuthFailedError || error instanceof TaskUnknownError ||
    error instanceof ToolAnswerRefusedError
  ) {
    // The login failed, or the task is gone, not the tool: the server's own words would hide
    // its cause and remedy (a grant the plan lacks reads "Permission denied", which is not a
    // file's).
    return {
      status: "error",
      text: `Tool execution failed: ${qualified}: ${
        error instanceof ToolAnswerRefusedError ? "" : `${error.message}: `
      }${error.reason}`,
      error,
    };
  }
  if (options.stillOffered === false) {
    // The catalogue changed under the call (tools/list_changed, a server gone): the host no
    // longer knows the name.
    const reason = `server '${tool.server}' no longer offers ${tool.originalName}: ${said}`;
    return {
      status: "error",
      text: `Tool execution failed: ${qualified}: the tool is no longer available. ` +
        "Use the tools offered in the next request.",
      error: new ToolExecutionError(qualified, reason, error, remedies.unknownTool),
    };
  }
  return {
    status: "error",
    text: `Tool execution failed: ${qualified}: ${said}`,
    error: refusedError(tool, said, error) ?? serverError(tool, said, surface, error),
  };
}

/** `Permission denied` when the server's words say the OS refused a file; else a tool failure. */
function serverError(
  tool: Pick<CatalogueTool, "server" | "originalName">,
  reason: string,
  surface: Surface,
  cause?: unknown,
): PatchbayError {
  const qualified = qualifiedName(tool);
  if (looksLikePermissionError(reason)) {
    return new PermissionDeniedError(`${qualified} could not access a file`, oneLine(reason));
  }
  return new ToolExecutionError(
    qualified,
    oneLine(reason),
    cause,
    toolRemedies(surface).serverError,
  );
}

function oneLine(text: string): string {
  return abridge(text.replace(/\s+/g, " ").trim(), 300);
}
