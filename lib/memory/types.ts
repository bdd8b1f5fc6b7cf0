/**
 * What a conversation is made of when it is stored. The agent produces these; the
 * memory stores persist them unchanged (after redaction).
 *
 * @module
 */

/** A tool call the model asked for. */
export interface StoredToolCall {
  id: string;
  /** Catalogue (model-facing) name. */
  name: string;
  /** Arguments as the JSON text the model produced. */
  arguments: string;
}

/** One message of a conversation. */
export interface StoredMessage {
  role: "system" | "user" | "assistant" | "tool";
  /** Text content; `null` for an assistant message that only calls tools. */
  content: string | null;
  /** Assistant: the tool calls it made. */
  toolCalls?: StoredToolCall[];
  /** Tool: the call this result answers. */
  toolCallId?: string;
  /** Tool: which server and tool produced it (original tool name). */
  server?: string;
  tool?: string;
  /** Tool: the result was an error or timeout. */
  isError?: boolean;
  /** Assistant: the model that wrote it. */
  model?: string;
  /** ISO 8601 time the message was created. */
  timestamp: string;
}
