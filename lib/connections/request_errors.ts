/**
 * What a failed request to a connected server becomes: a typed error naming the server,
 * with the probable cause and remedy, instead of the SDK's or the runtime's raw error.
 *
 * @module
 */

import { ProtocolError, SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import {
  CancelledError,
  ConnectionClosedError,
  messageOf,
  PatchbayError,
  ServerRequestError,
  TimeoutError,
  ToolExecutionError,
  ToolTimeoutError,
} from "../errors.ts";
import { abridge } from "../text/text.ts";
import { STEPS } from "../errors/failure_table.ts";
import { errorChain } from "../errors/failure.ts";
import { classifyNetError } from "./diagnosis/network_probe.ts";
import { CONNECTION_STEPS } from "../errors/connection_steps.ts";

/** Remedy of a request lost with its connection. */
export const RECONNECT_REMEDY = STEPS.reconnect;

/** The circumstances of a failed request. */
export interface RequestFailure {
  server: string;
  /** What was asked, for messages: `tools/call echo`, `prompts/get greet`. */
  what: string;
  /** For tool calls: the tool's catalogue name. */
  tool?: string;
  /** The bound the request had. */
  timeoutSeconds: number;
  /** Patchbay's own deadline fired. */
  timedOut: boolean;
  /** The caller's signal aborted. */
  cancelled: boolean;
  /** Why the connection closed, if it did. */
  closedBecause?: string;
}

/** True for errors that mean the way to the server is gone (not an answer from it). */
export function isConnectionLoss(error: unknown): boolean {
  if (error instanceof SdkError) {
    return error.code === SdkErrorCode.ConnectionClosed || error.code === SdkErrorCode.NotConnected;
  }
  if (error instanceof ProtocolError || error instanceof PatchbayError) return false;
  if (!(error instanceof Error)) return false;
  if (/fetch failed|error sending request|Maximum reconnection attempts/i.test(errorChain(error))) {
    return true;
  }
  const kind = classifyNetError(error).kind;
  return kind === "refused" || kind === "dns" || kind === "unreachable";
}

/** The typed error for a failed request. */
export function requestError(error: unknown, failure: RequestFailure): PatchbayError {
  const { server, what, tool } = failure;
  if (failure.cancelled) return new CancelledError(`${what} on server '${server}'`);
  if (
    failure.timedOut ||
    (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout)
  ) {
    return tool ? new ToolTimeoutError(tool, failure.timeoutSeconds) : new TimeoutError(
      "Request timeout",
      `server '${server}' did not answer ${what} within ${failure.timeoutSeconds} s`,
    );
  }
  if (failure.closedBecause !== undefined || isConnectionLoss(error)) {
    return new ConnectionClosedError(server, what, {
      reason: failure.closedBecause ?? `the connection failed: ${cleanText(error)}`,
      remedy: RECONNECT_REMEDY,
      cause: error,
    });
  }
  if (error instanceof PatchbayError) return error;
  if (error instanceof ProtocolError) {
    const said = `server '${server}' answered with error ${error.code}: ${cleanText(error)}`;
    return tool ? new ToolExecutionError(tool, said, error) : new ServerRequestError(server, what, {
      reason: said,
      remedy: CONNECTION_STEPS.requestRefused,
      cause: error,
    }, error.code);
  }
  const said = `${what} failed on server '${server}': ${cleanText(error)}`;
  return tool ? new ToolExecutionError(tool, said, error) : new ServerRequestError(server, what, {
    reason: said,
    remedy: STEPS.requestFailed,
    cause: error,
  });
}

/** An error's text without SDK prefixes, markup or runtime noise. */
export function cleanText(error: unknown): string {
  const text = messageOf(error)
    .replace(/^MCP error -?\d+:\s*/, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return abridge(text || "unknown error", 300);
}
