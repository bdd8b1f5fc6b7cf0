/**
 * The errors of the model provider and the agent loop: the key, rate limits, a refused or
 * broken model request, sampling, tool calls and session limits.
 *
 * @module
 */

import { fill, type RemedyText, ROWS } from "./failure_table.ts";
import { type ErrorDetails, PatchbayError } from "./base.ts";

/** The key is missing or cannot be a key for this provider; raised before any request. */
export class InvalidApiKeyError extends PatchbayError {
  constructor(reason: string, cause?: unknown, remedy: RemedyText = ROWS.api_key.remedy) {
    super("invalid_api_key", ROWS.api_key.messages[0], { reason, remedy, cause });
  }
}

/** The provider refused the key (HTTP 401/403). */
export class AuthenticationFailedError extends PatchbayError {
  constructor(reason: string, cause?: unknown, remedy: RemedyText = ROWS.api_key.remedy) {
    super("authentication_failed", ROWS.api_key.messages[1], { reason, remedy, cause });
  }
}

/** The provider's rate limit: `Rate limit exceeded` / `Too many requests`. */
export class RateLimitError extends PatchbayError {
  constructor(reason: string, cause?: unknown) {
    super("rate_limited", ROWS.rate_limit.messages[0], {
      reason,
      remedy: ROWS.rate_limit.remedy,
      cause,
    });
  }
}

/**
 * The provider answered a model request with an error that is neither about the key nor
 * about rate limits: an unknown model, a request it would not take, a server fault.
 */
export class ProviderRequestError extends PatchbayError {
  /** HTTP status, when the provider answered at all. */
  readonly status: number | undefined;
  constructor(message: string, status: number | undefined, info: ErrorDetails) {
    super("provider_error", message, info);
    this.status = status;
  }
}

/** The model's answer stopped mid-stream and every retry was spent. */
export class ConnectionLostError extends PatchbayError {
  constructor(reason: string, remedy: RemedyText, cause?: unknown) {
    super("network", "Connection lost: the model's answer stopped before it was complete", {
      reason,
      remedy,
      cause,
    });
  }
}

/**
 * How every refusal patchbay sends a server begins (`patchbay refused the sampling request:
 * …`): a server that passes it on in its own error can be read as passing on patchbay's.
 */
export const REFUSED = "patchbay refused";

/**
 * A server's `sampling/createMessage` request was refused (by the user, or by the server's
 * `sampling` setting). Connection code answers it with JSON-RPC error {@linkcode jsonRpcCode},
 * the code the MCP specification gives a user's rejection.
 */
export class SamplingRejectedError extends PatchbayError {
  readonly server: string;
  readonly jsonRpcCode = -1;
  constructor(server: string, reason: string, remedy: string) {
    super("sampling_rejected", `Sampling request from server '${server}' rejected`, {
      reason,
      remedy,
    });
    this.server = server;
  }
}

/**
 * A tool call failed or the server reported an error result. `remedy` fits the kind of
 * failure when the caller knows it (the agent does); the contract's general one otherwise.
 */
export class ToolExecutionError extends PatchbayError {
  constructor(
    tool: string,
    reason: string,
    cause?: unknown,
    remedy: RemedyText = ROWS.tool.remedy,
  ) {
    super("tool_failed", fill(ROWS.tool.messages[0], { tool }), { reason, remedy, cause });
  }
}

/**
 * A tool call whose answer breaks the protocol in a way patchbay refuses (a task id it
 * cannot use): patchbay's judgement of the server, with its own remedy, shown as it is
 * rather than as the server's words about the call.
 */
export class ToolAnswerRefusedError extends ToolExecutionError {}

/** A tool call ran past `AgentConfig.tool_call_timeout`. */
export class ToolTimeoutError extends PatchbayError {
  constructor(tool: string, seconds: number, remedy: RemedyText = ROWS.tool.remedy) {
    super("tool_timeout", fill(ROWS.tool.messages[1], { tool, seconds }), {
      reason: `the call exceeded AgentConfig.tool_call_timeout (${seconds} s) and was cancelled`,
      remedy,
    });
  }
}

/** A tool call that was not approved, so it never ran. */
export class ToolDeclinedError extends PatchbayError {
  constructor(tool: string, reason: string, remedy: string) {
    super("tool_declined", `Tool call declined: ${tool}`, { reason, remedy });
  }
}

/** A session limit from AgentConfig was reached. */
export class LimitReachedError extends PatchbayError {
  constructor(limit: string, reason: string, remedy: RemedyText) {
    super("limit_reached", `Limit reached: ${limit}`, { reason, remedy });
  }
}
