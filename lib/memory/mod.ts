/**
 * Conversation memory: what the REPL and the commands import.
 *
 * ```ts
 * const memory = await openMemory(config.memory, env, { log, redactor, onEvent });
 * const session = resume ? await memory.resume(resume) : memory.newSession();
 * await session.append(message);          // every message, in order
 * memory.newSession();                     // /clear
 * await memory.setEnabled(!memory.enabled) // /memory, then show .text of the result
 * await memory.close();                    // at exit
 * ```
 *
 * @module
 */

export { Memory, type MemoryEvent, type MemoryStatus } from "./memory.ts";
export { openMemory, type OpenMemoryOptions } from "./open.ts";
export { type AppendResult, Conversation } from "./conversation.ts";
export type {
  AppendStatus,
  MemoryStore,
  MessageRecord,
  SessionSummary,
  StoredMessage,
  StoredToolCall,
  StoreKind,
} from "./types.ts";
