/**
 * Anthropic's Messages API (`POST /v1/messages`, version `2023-06-01`) as patchbay sends it
 * and as servers send it back: the request's blocks, the events of a streamed answer and a
 * whole message (every field of an answer may be missing or of another type: the model's
 * server is not trusted), and what an error body's `error.type` means as an HTTP status.
 *
 * @module
 */

/** The API version patchbay speaks, sent as `anthropic-version` on every request. */
export const ANTHROPIC_VERSION = "2023-06-01";

/** A prompt-cache breakpoint: the prefix up to and including its block is cached. */
export interface CacheControl {
  type: "ephemeral";
}

/** Image media types the API takes; another type goes as a line of text instead. */
export const MESSAGES_IMAGE_TYPES: readonly string[] = [
  "image/jpeg",
  "image/png",
  "image/gif",
  "image/webp",
];

/** A text block (the system prompt, a message's text). */
export interface TextBlock {
  type: "text";
  text: string;
  cache_control?: CacheControl;
}

/** An image, inline. */
export interface ImageBlock {
  type: "image";
  source: { type: "base64"; media_type: string; data: string };
  cache_control?: CacheControl;
}

/** A tool call the model made, echoed back in the conversation. */
export interface ToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: Record<string, unknown>;
  cache_control?: CacheControl;
}

/** A tool's answer, in the user message after the call. */
export interface ToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content: string;
  cache_control?: CacheControl;
}

/** Any block of a request's message. */
export type ContentBlock = TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock;

/** One message: the roles alternate, starting with `user`. */
export interface MessageParam {
  role: "user" | "assistant";
  content: ContentBlock[];
}

/** A tool the model may call. */
export interface MessagesTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  cache_control?: CacheControl;
}

/** The body of `POST /v1/messages`, without `stream`. */
export interface MessagesRequest {
  model: string;
  max_tokens: number;
  system?: TextBlock[];
  messages: MessageParam[];
  tools?: MessagesTool[];
  temperature?: number;
  stop_sequences?: string[];
}

/** Token counts as the API reports them (any field may be missing). */
export interface MessagesUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** A block of an answer, as loosely as servers send it. */
export interface AnswerBlock {
  type?: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
}

/** A whole (non-streamed) message, or the skeleton `message_start` carries. */
export interface MessagesAnswer {
  type?: string;
  model?: string;
  content?: AnswerBlock[];
  stop_reason?: string | null;
  usage?: MessagesUsage | null;
}

/** One event of a streamed answer (its `type` repeats the SSE event name). */
export interface MessagesEvent {
  type?: string;
  index?: number;
  message?: MessagesAnswer;
  content_block?: AnswerBlock;
  delta?: {
    type?: string;
    text?: string;
    partial_json?: string;
    stop_reason?: string | null;
  };
  usage?: MessagesUsage | null;
  error?: unknown;
}

/**
 * The HTTP status an error type stands for, for an error that arrives inside a stream
 * (the answer had started with 200): `overloaded_error` is the 529 that is worth a retry.
 */
export const ERROR_TYPE_STATUS: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};
