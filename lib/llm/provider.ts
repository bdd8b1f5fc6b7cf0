/**
 * The one seam between patchbay and a language model. The chat loop and MCP sampling both
 * call {@linkcode ModelProvider.generate}; nothing else talks to a provider.
 *
 * Messages here are patchbay's own shapes, not any SDK's, so that the agent, the memory
 * store and the tests never depend on how a provider spells them.
 *
 * @module
 */

import type { TraceContext } from "../telemetry/ids.ts";
import type { ProviderName } from "../providers.ts";

/** A tool call the model asked for. */
export interface ToolCall {
  /** The provider's id, echoed in the tool result. */
  id: string;
  /** Model-facing tool name. */
  name: string;
  /** Arguments as the JSON text the model produced (possibly invalid JSON). */
  arguments: string;
}

/** Part of a user message that is not plain text. */
export type ContentPart =
  | { type: "text"; text: string }
  | { type: "image"; mimeType: string; /** base64 */ data: string };

/** One message of a model request. */
export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | ContentPart[] }
  | { role: "assistant"; content: string | null; toolCalls?: ToolCall[] }
  | { role: "tool"; toolCallId: string; content: string };

/** A tool the model may call. */
export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments (an object schema). */
  parameters: Record<string, unknown>;
}

/**
 * Tokens one request used. `promptTokens` is the whole prompt; the parts the provider's
 * prompt cache served or stored are counted again in `cacheReadTokens` and
 * `cacheWriteTokens` (absent: none reported), since providers bill them at other prices.
 */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** `true` when the provider did not report usage and patchbay estimated it. */
  estimated: boolean;
  /** Prompt tokens read from the provider's prompt cache (billed at its lower rate). */
  cacheReadTokens?: number;
  /** Prompt tokens written to the provider's prompt cache (Anthropic bills a premium). */
  cacheWriteTokens?: number;
}

/** Why the model stopped. */
export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "other";

/** A failed attempt that is about to be retried. */
export interface RetryNotice {
  /** 1 for the first retry. */
  attempt: number;
  maxRetries: number;
  /** Wait before the retry. */
  delayMs: number;
  /** What went wrong, in words for a person ("HTTP 429 Too Many Requests"). */
  reason: string;
  /** Text already passed to `onDelta` belongs to the failed attempt and is void. */
  discardedPartial: boolean;
  /**
   * The failed attempt reached the model and was not refused (it timed out or broke off
   * mid-answer), so its prompt and any streamed text may have been billed.
   */
  billable: boolean;
}

/** Everything one model request needs. */
export interface GenerateRequest {
  messages: ChatMessage[];
  /** Tools offered to the model; empty or absent: none. */
  tools?: ToolDefinition[];
  /** Cap on the answer's tokens. @default LLM.max_tokens */
  maxTokens?: number;
  /** @default LLM.temperature (not sent when unset) */
  temperature?: number;
  stop?: string[];
  /**
   * Streams the answer: called with each piece of text as it arrives. Absent: one response.
   * What it throws ends the request at once and is rethrown as it is, never retried.
   */
  onDelta?: (text: string) => void;
  /**
   * Asked before each retry for the answer cap of the next attempt (`undefined`: keep it),
   * so that a session budget can account for what the failed attempt may have cost. What
   * it throws (a session limit) ends the request and is rethrown as it is.
   */
  admitRetry?: (notice: RetryNotice) => number | undefined;
  /**
   * Told before each retry, so the UI can say why it is waiting. What it throws ends the
   * request and is rethrown as it is.
   */
  onRetry?: (notice: RetryNotice) => void;
  /** Aborting stops the request (and the stream) at once. */
  signal?: AbortSignal;
  /**
   * The request's span (its trace and span ids), for the `--trace-model` line: set by the
   * session's telemetry (lib/telemetry/model_span.ts).
   */
  trace?: TraceContext;
}

/** The model's complete answer. */
export interface GenerateResult {
  /** Assembled text; `null` when the model only called tools. */
  content: string | null;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage: TokenUsage;
  /** The model that answered, as the provider reported it (else the configured one). */
  model: string;
  /** Retries it took. */
  retries: number;
}

/** Options of {@linkcode ModelProvider.listModels}. */
export interface ListModelsOptions {
  signal?: AbortSignal;
  /** Seconds the request may take. @default LLM.timeout */
  timeoutSeconds?: number;
}

/** A configured model behind one provider. */
export interface ModelProvider {
  readonly provider: ProviderName;
  /** Human name of the provider ("OpenAI"). */
  readonly label: string;
  /** The configured model (for Azure: the deployment's model name as configured). */
  readonly model: string;
  /** The API address requests go to. */
  readonly baseUrl: string;
  /**
   * Sends one request. Rejects with a `PatchbayError`: `CancelledError` when `signal`
   * aborts, `AuthenticationFailedError`, `RateLimitError`, `TimeoutError`, `NetworkError`,
   * `ConnectionLostError` or `ProviderRequestError` after the bounded retries; or with
   * exactly what a callback of the request threw.
   */
  generate(request: GenerateRequest): Promise<GenerateResult>;
  /**
   * Lists the model ids the provider offers: one cheap authenticated request (no retries),
   * which is how `patchbay doctor` learns whether the provider accepts the key. Rejects
   * like {@linkcode generate}; a server without a model list rejects with a
   * `ProviderRequestError` of status 404.
   */
  listModels(options?: ListModelsOptions): Promise<string[]>;
  /** Releases the HTTP client (proxy connections). */
  close(): void;
}
