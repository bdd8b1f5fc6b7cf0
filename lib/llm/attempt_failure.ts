/**
 * One failed attempt at a model request: {@linkcode classifyFailure} reduces whatever the
 * model client or fetch threw to a small set of kinds ({@linkcode AttemptFailure}), which
 * decide retrying ({@linkcode isRetryable}), the retry notice ({@linkcode describeFailure},
 * {@linkcode mayHaveBeenBilled}) and, with the {@linkcode FailureContext} of where the
 * request was going, the wording of the error a person reads (`request_failures.ts`).
 *
 * @module
 */

import { abridge } from "../text/text.ts";
import { causeMessages, type NetProblem, netProblem } from "../errors/failure.ts";
import type { ProxySettings } from "../proxy.ts";
import type { RemedyText } from "../errors/failure_table.ts";
import { MalformedAnswerError, ModelApiError } from "./chat_wire.ts";
import { isRetryableStatus } from "./retry.ts";

/** One failed attempt, reduced to what decides retrying and wording. */
export type AttemptFailure =
  | {
    kind: "status";
    status: number;
    /** The provider's own error message. */
    message: string;
    /** The provider's error code (`insufficient_quota`, `context_length_exceeded`). */
    code?: string;
    headers?: Headers;
  }
  /** Nothing arrived in time: before the response (`response`) or between chunks (`stream`). */
  | { kind: "timeout"; phase: "connect" | "response" | "stream" }
  /** The connection could not be made. */
  | {
    kind: "network";
    /** A network problem of the one list (timeouts and broken answers are kinds of their own). */
    problem: Exclude<NetProblem, "timeout" | "not_http" | "dropped"> | "other";
    message: string;
  }
  /** The connection broke after the answer had started. */
  | { kind: "dropped"; message: string }
  /** An answer arrived that is not the API's (not JSON, an HTML page, past the size cap). */
  | { kind: "malformed"; message: string }
  | { kind: "cancelled" };

/** What the caller knew when the error arrived. */
export interface ClassifyContext {
  /** patchbay's own timer fired (the abort was a timeout, not the user). */
  timedOut: boolean;
  /** The response headers had arrived. */
  responded: boolean;
  /** The user's signal aborted. */
  cancelled: boolean;
}

/** Reduces a model client or fetch error to an {@linkcode AttemptFailure}. */
export function classifyFailure(error: unknown, context: ClassifyContext): AttemptFailure {
  if (context.cancelled) return { kind: "cancelled" };
  if (context.timedOut) {
    return { kind: "timeout", phase: context.responded ? "stream" : "response" };
  }
  if (error instanceof ModelApiError && error.status !== undefined) {
    return {
      kind: "status",
      status: error.status,
      message: error.providerMessage || "status code (no body)",
      code: error.code,
      headers: error.headers,
    };
  }
  if (error instanceof MalformedAnswerError) return { kind: "malformed", message: error.message };
  const text = errorChain(error);
  if (context.responded) return { kind: "dropped", message: text };
  // The one classifier (lib/failure.ts) names the problem; retrying and wording are ours.
  const problem = netProblem(error);
  switch (problem) {
    case "timeout":
      return { kind: "timeout", phase: "connect" };
    case "not_http":
    case "dropped":
      return { kind: "dropped", message: text };
    case undefined:
      return { kind: "network", problem: "other", message: text };
    default:
      return { kind: "network", problem, message: text };
  }
}

/** Whether another attempt could succeed. */
export function isRetryable(failure: AttemptFailure): boolean {
  switch (failure.kind) {
    case "status":
      // An exhausted quota is a billing state, not a burst: waiting will not fix it.
      return isRetryableStatus(failure.status) && failure.code !== "insufficient_quota";
    case "timeout":
    case "dropped":
      return true;
    case "network":
      return failure.problem === "refused" || failure.problem === "other";
    // Another attempt at the same address gets the same page (or the same flood).
    case "malformed":
    case "cancelled":
      return false;
  }
}

/**
 * Whether the failed attempt may have cost tokens: it reached the model and was not refused
 * (a timeout after the request was sent, or an answer cut off mid-stream). Refusals (HTTP
 * errors) and connections never made cost nothing.
 */
export function mayHaveBeenBilled(failure: AttemptFailure): boolean {
  return failure.kind === "dropped" || (failure.kind === "timeout" && failure.phase !== "connect");
}

/** One line for a retry notice and the log ("HTTP 429 Too Many Requests"). */
export function describeFailure(failure: AttemptFailure): string {
  switch (failure.kind) {
    case "status":
      return `HTTP ${failure.status}${statusText(failure.status)}: ${
        abridge(failure.message, 200)
      }`;
    case "timeout":
      return failure.phase === "stream"
        ? "the answer stalled"
        : failure.phase === "connect"
        ? "the connection timed out"
        : "no response in time";
    case "network":
      return abridge(failure.message, 200);
    case "dropped":
      return "the connection dropped mid-answer";
    case "malformed":
      return abridge(failure.message, 200);
    case "cancelled":
      return "cancelled";
  }
}

/** Where the failed request was going, for the wording. */
export interface FailureContext {
  /** Provider's human name. */
  label: string;
  /** Preset name (`openai`), as written in LLM.provider. */
  provider: string;
  /** The API spoken, as a remedy names it. @default "OpenAI-compatible API" */
  api?: string;
  model: string;
  baseUrl: string;
  timeoutSeconds: number;
  /** Retries made before giving up. */
  retries: number;
  /** Milliseconds spent waiting between attempts. */
  waitedMs: number;
  /**
   * Milliseconds from the first attempt to the last failure, what the retry summary
   * reports. @default waitedMs
   */
  elapsedMs?: number;
  proxy?: ProxySettings;
  /** The key as a refusal names it. @default "LLM_API_KEY" */
  keyName?: string;
  /** What to do about a refused key. @default the api_key row's */
  keyRemedy?: RemedyText;
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  301: "Moved Permanently",
  302: "Found",
  303: "See Other",
  307: "Temporary Redirect",
  308: "Permanent Redirect",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  408: "Request Timeout",
  409: "Conflict",
  413: "Payload Too Large",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
  529: "Overloaded",
};
/** The status's reason phrase after a space ("` Too Many Requests`"), or nothing. */
export function statusText(status: number): string {
  return STATUS_TEXT[status] ? ` ${STATUS_TEXT[status]}` : "";
}

/** An error and its causes, joined, so that the useful part (`.cause`) is not lost. */
function errorChain(error: unknown): string {
  const text = causeMessages(error).slice(0, 5).join(
    ": ",
  ) || "unknown error";
  // fetch repeats the URL and layers of wrapping; the words after them are the news.
  return text
    .replace(/^fetch failed: /i, "")
    .replace(/error sending request for url \([^)]*\): /i, "")
    .replace(/client error \((?:Connect|SendRequest)\): /i, "");
}
