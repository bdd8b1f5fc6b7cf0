/**
 * What a conversation is made of when it is stored. The agent produces these; the
 * memory stores persist them unchanged (after redaction).
 *
 * @module
 */

/** A tool call the model asked for. */
import type { LeaseKeeper } from "./lease.ts";
import type { TaskRegistry } from "./task_registry.ts";

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
  /** User: the folder the client ran in, which `patchbay sessions` lists by. */
  folder?: string;
  /**
   * User: the resources its `@server:uri` mentions attached. Tool: the images the result
   * carried. Absent in conversations stored before attachments existed.
   */
  attachments?: StoredAttachment[];
  /**
   * User: not the person's words but the outcome of an MCP task an earlier tool call
   * started, delivered when it ended (docs/tasks.md); `content` holds the tool's output.
   */
  task?: StoredTaskOutcome;
  /**
   * Tool: what the session's hooks added for the model (docs/hooks.md), sent after the
   * tool's own output, outside the element that marks it untrusted.
   */
  hookContext?: string;
}

/** Which task a delivered outcome is of, and how it ended. */
export interface StoredTaskOutcome {
  id: string;
  server: string;
  /** The tool's name on its server. */
  tool: string;
  state: string;
  /** The call that started it (its result said it was pending). */
  toolCallId?: string;
  /** The tool's result was an error. */
  isError?: boolean;
}

/**
 * Server content that travels with a message: a mentioned resource, or an image a tool
 * returned. Untrusted, like tool output: it is wrapped as such when sent to the model.
 */
export interface StoredAttachment {
  /** The server it came from. */
  server: string;
  /** The resource's URI (mentions, embedded resources); absent for a tool's image. */
  uri?: string;
  /** `text`: `text` holds it; `image`: `data` holds it (base64); `binary`: described only. */
  kind: "text" | "image" | "binary";
  mimeType?: string;
  /** The text of a text resource, capped like tool output. */
  text?: string;
  /** An image's bytes, base64; absent when the image was larger than the cap. */
  data?: string;
  /** Decoded size in bytes (images and binary content). */
  bytes?: number;
  /** Where the image was saved for the person to open. */
  path?: string;
}

/** Which kind of store holds the conversations. */
export type StoreKind = "redis" | "file" | "off";

/**
 * A message as a store keeps it: the (redacted) message, a unique id that makes a retried
 * write harmless, and its position in the stored session.
 */
export interface MessageRecord {
  /** Unique id of this message; writing the same id twice stores it once. */
  id: string;
  /** Position in the stored session, from 0. */
  seq: number;
  message: StoredMessage;
}

/** What `patchbay sessions` shows about one conversation. */
export interface SessionSummary {
  id: string;
  /** ISO 8601 time of the first stored message. */
  started: string;
  /** ISO 8601 time of the last stored message. */
  lastMessageAt: string;
  /** Stored messages of every role. */
  messages: number;
  /** User messages: one per exchange. */
  turns: number;
  /** The model of the latest assistant message, if any. */
  model?: string;
  /** The first user message, shortened: what the conversation is about. */
  title?: string;
  /** The folder of the first user message; absent for conversations stored without one. */
  folder?: string;
}

/** How an append ended. */
export type AppendStatus =
  /** In the store. */
  | "written"
  /** The store already held this message id (a retried write); nothing changed. */
  | "duplicate"
  /** The store is unreachable: kept in the local journal, written when it returns. */
  | "journaled"
  /** Memory is off: kept in this session only, never written. */
  | "off";

/** Options shared by the store operations. */
export interface StoreCallOptions {
  signal?: AbortSignal;
}

/** Options of {@linkcode MemoryStore.list}. */
export interface ListOptions extends StoreCallOptions {
  /** At most this many sessions, most recent first. @default every session */
  limit?: number;
}

/**
 * A place conversations live. Implementations: `RedisStore`, `FileStore`, `OffStore`.
 * Records reach a store already redacted; a store never sees a secret.
 */
export interface MemoryStore {
  readonly kind: StoreKind;
  /** Where the conversations live, for people: `Redis at localhost:6379 db 0`, a path. */
  readonly location: string;
  /** Appends one record to a session (created on its first record). */
  append(
    sessionId: string,
    record: MessageRecord,
    options?: StoreCallOptions,
  ): Promise<AppendStatus>;
  /** The session's records in order, or `undefined` when there is no such session. */
  load(sessionId: string, options?: StoreCallOptions): Promise<MessageRecord[] | undefined>;
  /** Sessions, most recently active first. */
  list(options?: ListOptions): Promise<SessionSummary[]>;
  /** One session's summary, or `undefined`. */
  summary(sessionId: string, options?: StoreCallOptions): Promise<SessionSummary | undefined>;
  /** Ids of stored sessions that start with `prefix`. */
  findIds(prefix: string, options?: StoreCallOptions): Promise<string[]>;
  /**
   * Leases on conversations (`lease.ts`): which process has one open. A store without
   * them (memory off) lets any process open any conversation.
   */
  readonly leases?: LeaseKeeper;
  /** The tasks patchbay started, kept beside the conversations (`task_registry.ts`). */
  readonly tasks?: TaskRegistry;
  /** Removes a session; `false` when there was none. */
  delete(sessionId: string, options?: StoreCallOptions): Promise<boolean>;
  /** Releases connections and files. Safe to call twice. */
  close(): Promise<void>;
}
