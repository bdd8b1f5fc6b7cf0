/**
 * The OpenAI-compatible chat API's shapes as patchbay sends them and as servers send them
 * back (every field of an answer may be missing or of another type: the model's server is
 * not trusted), and the two errors an answer can be.
 *
 * @module
 */
/** A message of the conversation, as the API takes it. */
export type ChatMessageParam =
  | { role: "system"; content: string }
  | { role: "user"; content: string | UserContentPart[] }
  | {
    role: "assistant";
    content: string | null;
    tool_calls?: {
      id: string;
      type: "function";
      function: { name: string; arguments: string };
    }[];
  }
  | { role: "tool"; tool_call_id: string; content: string };

/** A part of a user message with images. */
export type UserContentPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string } };

/** A tool the model may call. */
export interface ChatToolParam {
  type: "function";
  function: { name: string; description?: string; parameters: Record<string, unknown> };
}

/** The body of `POST /chat/completions`, without `stream`. */
export interface ChatCompletionRequest {
  model: string;
  messages: ChatMessageParam[];
  tools?: ChatToolParam[];
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  stop?: string[];
}

/** Token counts as the API reports them (any field may be missing). */
export interface WireUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  /** OpenAI's prompt tokens served from its prompt cache (`cached_tokens`). */
  prompt_tokens_details?: { cached_tokens?: number } | null;
  /** DeepSeek's prompt tokens served from its context cache. */
  prompt_cache_hit_tokens?: number;
}

/** A tool call as it arrives: every field may be missing or partial in a stream. */
export interface WireToolCall {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

/** One chunk of a streamed completion, as loosely as servers send it. */
export interface ChatCompletionChunk {
  id?: string;
  model?: string;
  choices?: {
    index?: number;
    delta?: { content?: string | null; tool_calls?: WireToolCall[] };
    finish_reason?: string | null;
  }[];
  usage?: WireUsage | null;
}

/** A whole (non-streamed) completion, as loosely as servers send it. */
export interface ChatCompletion {
  model?: string;
  choices?: {
    index?: number;
    message?: { content?: string | null; tool_calls?: WireToolCall[] };
    finish_reason?: string | null;
  }[];
  usage?: WireUsage | null;
}

/**
 * What the API answered when it was not the answer: an HTTP error status with its body, or
 * an error event inside a stream (`status` is then `undefined`: the answer had started).
 */
export class ModelApiError extends Error {
  /** The HTTP status, for an error answer. */
  readonly status: number | undefined;
  readonly headers: Headers | undefined;
  /** The body's `error` member (an object, or a string), else the whole parsed body. */
  readonly error: unknown;
  /** The provider's error code (`insufficient_quota`), when it gave one. */
  readonly code: string | undefined;
  /** The provider's own message ("" when the body said nothing). */
  readonly providerMessage: string;

  constructor(status: number | undefined, error: unknown, text: string, headers?: Headers) {
    const said = bodyMessage(error, text);
    super(
      status === undefined
        ? said || "(no status code or body)"
        : `${status} ${said || "status code (no body)"}`,
    );
    this.name = "ModelApiError";
    this.status = status;
    this.headers = headers;
    this.error = error;
    this.providerMessage = said;
    const code = isRecord(error) ? error.code : undefined;
    this.code = typeof code === "string" ? code : undefined;
  }
}

/** An answer that could not be read as the API's (not JSON, or past a bound). */
export class MalformedAnswerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MalformedAnswerError";
  }
}

/** The provider's message in an error body: `error.message`, a string, else the text. */
function bodyMessage(error: unknown, text: string): string {
  if (isRecord(error) && typeof error.message === "string") return error.message;
  if (typeof error === "string") return error;
  if (error !== undefined && error !== null) return JSON.stringify(error);
  return text.trim();
}

/** A plain object (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
