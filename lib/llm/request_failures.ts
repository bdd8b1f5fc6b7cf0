/**
 * What went wrong with a model request, in two steps: {@linkcode classifyFailure} reduces
 * whatever the model client or fetch threw to a small set of kinds (which decide retrying), and
 * {@linkcode failureError} turns the last one into the typed error a person reads, with the
 * contract's message (docs/troubleshooting.md), the cause as far as it is known, and the remedy.
 *
 * @module
 */

import {
  AuthenticationFailedError,
  CancelledError,
  ConnectionLostError,
  NetworkError,
  type PatchbayError,
  ProviderRequestError,
  RateLimitError,
  REMEDY,
  TimeoutError,
} from "../errors.ts";
import { abridge } from "../text.ts";
import { causeMessages, netProblem, netReason } from "../failure.ts";
import { hostOf, proxyName, type ProxySettings } from "../proxy.ts";
import { MalformedAnswerError, ModelApiError } from "./chat_wire.ts";
import { redirectTarget } from "./redirects.ts";
import { isRetryableStatus, RETRY_AFTER_CAP_MS, retryAfterMs } from "./retry.ts";

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
    problem: "refused" | "unreachable" | "dns" | "tls" | "tunnel" | "other";
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
}

/** The typed error for the last failure of a request. */
export function failureError(failure: AttemptFailure, context: FailureContext): PatchbayError {
  const { label } = context;
  const host = hostWithPort(context.baseUrl);
  const tries = context.retries === 0
    ? "no retry was made"
    : `${context.retries} ${context.retries === 1 ? "retry was" : "retries were"} made over ` +
      `${((context.elapsedMs ?? context.waitedMs) / 1000).toFixed(1)} s`;
  switch (failure.kind) {
    case "cancelled":
      return new CancelledError("the model request");
    case "status":
      return statusError(failure, context, host, tries);
    case "timeout": {
      if (failure.phase === "connect" && context.proxy) {
        return new TimeoutError(
          "Connection timeout",
          `no connection to the proxy ${proxyName(context.proxy)} could be made (${tries}); ` +
            `requests to ${label} at ${host} go through it`,
          proxyRemedy(context.proxy, host),
        );
      }
      const remedy = `raise LLM.timeout (now ${context.timeoutSeconds} s) if the model is slow, ` +
        `and test that ${host} is reachable` + proxyHint(context);
      if (failure.phase === "connect") {
        return new TimeoutError(
          "Connection timeout",
          `no connection to ${label} at ${host} could be made (${tries})`,
          remedy,
        );
      }
      return new TimeoutError(
        "Request timeout",
        failure.phase === "stream"
          ? `${label} stopped sending the answer for ${context.timeoutSeconds} s (${tries})`
          : `${label} did not answer within ${context.timeoutSeconds} s (${tries})`,
        remedy,
      );
    }
    case "dropped":
      return new ConnectionLostError(
        `the connection to ${label} at ${host} closed mid-answer (${tries}): ` +
          abridge(failure.message, 200),
        "send the message again; if it keeps happening, check the network and any proxy " +
          "between you and the provider" + proxyHint(context),
      );
    case "network":
      return networkError(failure, context, host, tries);
    case "malformed":
      return new ProviderRequestError(
        `Model request failed: ${label} sent an answer patchbay cannot read`,
        undefined,
        {
          reason: `${host} answered, but ${abridge(failure.message, 300)}`,
          remedy: "check that LLM.base_url is the provider's OpenAI-compatible API address " +
            "(it usually ends in /v1), not a web page or another service",
        },
      );
  }
}

function statusError(
  failure: Extract<AttemptFailure, { kind: "status" }>,
  context: FailureContext,
  host: string,
  tries: string,
): PatchbayError {
  const { label, model, provider } = context;
  const said = `HTTP ${failure.status}${statusText(failure.status)}: ${
    abridge(failure.message, 300)
  }`;
  if (failure.status >= 300 && failure.status < 400) {
    const target = redirectTarget(failure.headers?.get("location") ?? null, context.baseUrl);
    return new ProviderRequestError(
      `Model request failed: ${label} redirected the request to another address`,
      failure.status,
      {
        reason: `${host} answered HTTP ${failure.status}${statusText(failure.status)} with ` +
          `Location ${target ?? "(none)"}; patchbay does not follow a model request to ` +
          "another origin, since it would send the conversation and the key there",
        remedy: target
          ? `if ${new URL(target).origin} is really your provider's address, set LLM.base_url ` +
            "to it; otherwise check LLM.base_url and any gateway or proxy in between"
          : "check LLM.base_url and any gateway or proxy in between",
      },
    );
  }
  if (failure.status === 401 || failure.status === 403) {
    return new AuthenticationFailedError(
      `${label} (provider ${provider}) refused LLM_API_KEY for model "${model}" (${said})`,
    );
  }
  if (failure.status === 429) {
    if (failure.code === "insufficient_quota") {
      return new RateLimitError(
        `${label} reports the account's quota is used up for model "${model}" (${said}); ` +
          "retrying cannot help",
      );
    }
    const asked = retryAfterMs(failure.headers);
    const tooLong = asked !== undefined && asked > RETRY_AFTER_CAP_MS
      ? `; it asked to wait ${Math.ceil(asked / 1000)} s, longer than patchbay waits ` +
        `(${RETRY_AFTER_CAP_MS / 1000} s)`
      : asked !== undefined
      ? `; it asked to wait ${Math.ceil(asked / 1000)} s`
      : "";
    return new RateLimitError(
      `${label} limited requests for model "${model}" (${said}); ${tries}${tooLong}`,
    );
  }
  if (failure.status === 404) {
    return new ProviderRequestError(
      `Model request failed: ${label} has no such model or path`,
      404,
      {
        reason: `${host} answered ${said} for model "${model}"`,
        remedy: "check LLM.model (the provider's model list names the valid ones) and, if set, " +
          "LLM.base_url (it usually ends in /v1)",
      },
    );
  }
  if (
    failure.code === "context_length_exceeded" ||
    /context.{0,20}(length|window)|too many tokens|maximum context/i.test(failure.message)
  ) {
    return new ProviderRequestError(
      `Model request failed: the conversation is too long for "${model}"`,
      failure.status,
      {
        reason: said,
        remedy: "lower LLM.max_context_length so that patchbay trims more of the history " +
          "(or start a new conversation)",
      },
    );
  }
  if (failure.status >= 500) {
    return new ProviderRequestError(
      `Model request failed: ${label}'s server failed`,
      failure.status,
      {
        reason: `${said} (${tries})`,
        remedy:
          "try again in a while; if it persists, check the provider's status page or switch " +
          "provider",
      },
    );
  }
  return new ProviderRequestError(
    `Model request failed: ${label} rejected the request`,
    failure.status,
    {
      reason: `${said}${parameterHint(failure.message)}`,
      remedy: "correct the LLM settings named in the provider's message (servers_config.json); " +
        "run /debug and try again to see the full request in the log",
    },
  );
}

function networkError(
  failure: Extract<AttemptFailure, { kind: "network" }>,
  context: FailureContext,
  host: string,
  tries: string,
): PatchbayError {
  const { label } = context;
  if (context.proxy && failure.problem !== "tunnel" && failure.problem !== "tls") {
    return proxyUnreachable(failure, context.proxy, label, host, tries);
  }
  const via = context.proxy
    ? ` through the proxy ${context.proxy.url} (${context.proxy.variable})`
    : "";
  const target = { address: host, host: new URL(context.baseUrl).hostname };
  const local = isLoopback(context.baseUrl);
  const remedy = local
    ? `start ${label} so that it listens at ${context.baseUrl}, or fix LLM.base_url`
    : REMEDY.network +
      (context.proxy ? ` (now ${context.proxy.variable}=${context.proxy.url}; check it)` : "");
  switch (failure.problem) {
    case "refused":
      return new NetworkError(
        "Connection refused",
        `${netReason("refused", target)}: ${label} is not running there${via} (${tries})`,
        remedy,
        failure.message,
      );
    case "dns":
      return new NetworkError(
        "Network unreachable",
        `${netReason("dns", target)}${via}`,
        remedy,
        failure.message,
      );
    case "tunnel":
      return new NetworkError(
        "Connection refused",
        `the proxy${via ? via.replace(" through the proxy", "") : ""} refused to open a ` +
          `connection to ${host}`,
        `check that the proxy allows connections to ${host} and that its credentials ` +
          `(user:password@ in ${context.proxy?.variable ?? "HTTPS_PROXY"}) are right; ` +
          "NO_PROXY lists hosts to reach directly",
        failure.message,
      );
    case "tls":
      return new NetworkError(
        "Network unreachable",
        `the TLS certificate of ${host} is not trusted${via}; a corporate proxy that ` +
          `re-signs traffic does this (${abridge(failure.message, 160)})`,
        "trust the proxy's CA certificate (DENO_CERT=/path/to/ca.pem, or " +
          "DENO_TLS_CA_STORE=system to use the system store), then restart patchbay",
        failure.message,
      );
    default:
      return new NetworkError(
        "Network unreachable",
        `${label} at ${host} could not be reached${via}: ${abridge(failure.message, 200)}`,
        remedy,
        failure.message,
      );
  }
}

/**
 * With a proxy, the only connection patchbay makes itself is the one to the proxy (the
 * proxy connects onwards and reports its own failures as HTTP answers), so a connection
 * that cannot be made is the proxy's, whatever the model server is doing.
 */
function proxyUnreachable(
  failure: Extract<AttemptFailure, { kind: "network" }>,
  proxy: ProxySettings,
  label: string,
  host: string,
  tries: string,
): PatchbayError {
  const name = proxyName(proxy);
  const carries = `; requests to ${label} at ${host} go through it`;
  const remedy = proxyRemedy(proxy, host);
  switch (failure.problem) {
    case "refused":
      return new NetworkError(
        "Connection refused",
        `nothing accepted the connection to the proxy ${name} (${tries})${carries}`,
        remedy,
        failure.message,
      );
    case "dns":
      return new NetworkError(
        "Network unreachable",
        `the proxy's host name ${hostnameOf(proxy.url)} (from ${proxy.variable}) could not be ` +
          `resolved${carries}`,
        remedy,
        failure.message,
      );
    default:
      return new NetworkError(
        "Network unreachable",
        `the proxy ${name} could not be reached (${tries}): ${abridge(failure.message, 200)}` +
          carries,
        remedy,
        failure.message,
      );
  }
}

function proxyRemedy(proxy: ProxySettings, host: string): string {
  return `start the proxy at ${proxy.url}, or correct ${proxy.variable} (in .env or the ` +
    `environment); if ${hostnameOf(`http://${host}`)} should be reached directly, add it to ` +
    `NO_PROXY (or unset ${proxy.variable}); then restart patchbay`;
}

function hostnameOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

function proxyHint(context: FailureContext): string {
  return context.proxy
    ? ` (requests go through the proxy ${context.proxy.url} from ${context.proxy.variable})`
    : "";
}

/** A pointer to the setting behind the provider's complaint about a parameter. */
function parameterHint(message: string): string {
  if (/temperature/i.test(message)) return "; remove LLM.temperature if this model rejects it";
  if (/max_(completion_)?tokens/i.test(message)) return "; lower LLM.max_tokens";
  if (/tools?\b|function/i.test(message)) {
    return "; the model may not support tool calling (pick one that does)";
  }
  return "";
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
};

function statusText(status: number): string {
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

function hostWithPort(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** Whether the URL points at this machine (a local model server). */
export function isLoopback(url: string): boolean {
  try {
    const host = hostOf(new URL(url));
    return host === "localhost" || host === "::1" || /^127\./.test(host);
  } catch {
    return false;
  }
}
