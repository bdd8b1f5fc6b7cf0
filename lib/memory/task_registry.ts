/**
 * The task registry: every MCP task patchbay starts, recorded before the tool call
 * returns, so that a task outlives the process that started it. The next session (or
 * `--resume`) finds the tasks still pending, fetches their results when they complete,
 * and puts each into the conversation it belongs to; `patchbay tasks` lists them.
 *
 * One interface, kept beside the conversations: in Redis when memory is in Redis
 * (`task_registry_redis.ts`), else in a file of the embedded store's folder, or of the
 * state folder when memory is off (`task_registry_file.ts`). Records are masked before
 * they are written (arguments, status messages, results): a store never sees a secret.
 *
 * @module
 */

import { MAX_TASK_RECORDS } from "../tasks/bounds.ts";

/** Where a task stands, as the server last said, or as patchbay found it. */
export type TaskRecordState =
  /** The server is working on it. */
  | "working"
  /** The server waits for an answer (a form) from the person. */
  | "input_required"
  /** Finished; `result` holds what the tool returned. */
  | "completed"
  /** Finished with an error; `result` or `error` says which. */
  | "failed"
  /** Cancelled (by the person, or by the server). */
  | "cancelled"
  /** The server no longer knows the task (expired, or the server lost it); `error` says. */
  | "unknown";

/** The states after which nothing changes on the server. */
export const SETTLED_STATES: ReadonlySet<TaskRecordState> = new Set([
  "completed",
  "failed",
  "cancelled",
  "unknown",
]);

/** One task patchbay started. */
export interface TaskRecord {
  /** The server's task id. */
  id: string;
  /** The server entry's name. */
  server: string;
  /** The tool's name on its server. */
  tool: string;
  /** The arguments, masked and abridged (JSON text). */
  arguments: string;
  /** Which Tasks protocol the server spoke: 2025-11-25 (`v1`) or the 2026-07-28 extension. */
  generation: "v1" | "v2";
  /** The ext-tasks endpoint the task belongs to (the server as patchbay reached it). */
  endpoint: string;
  /** The conversation the call was made in; absent for `patchbay call`. */
  conversation?: string;
  /** The model's id for the call in that conversation. */
  toolCallId?: string;
  /** The streamable HTTP session it was started in (followed there by later processes). */
  httpSession?: string;
  /** ISO times: created, last changed. */
  createdAt: string;
  updatedAt: string;
  /** When patchbay stops following it (the server's ttl, bounded; ISO time). */
  followUntil: string;
  state: TaskRecordState;
  /** The server's last status message (bounded, masked, escaped). */
  statusMessage?: string;
  /** The server's suggested poll interval, as bounded (milliseconds). */
  pollIntervalMs?: number;
  /** The ttl the server granted (milliseconds; `null`: unlimited). */
  ttlMs?: number | null;
  /** The result as the model reads it (masked, capped like any tool output). */
  result?: string;
  /** The result was an error (`isError`). */
  isError?: boolean;
  /** Why it failed or is unknown, in words. */
  error?: string;
  /** When its result was put into its conversation (ISO time). */
  deliveredAt?: string;
}

/**
 * Whether a record holds its task's outcome: over, with its result or error (a status
 * seen as terminal before the result was fetched, then a crash, leaves one without).
 */
export function hasOutcome(record: TaskRecord): boolean {
  if (record.state === "cancelled" || record.state === "unknown") return true;
  return SETTLED_STATES.has(record.state) &&
    (record.result !== undefined || record.error !== undefined);
}

/** Records of tasks, in a store. Implementations must be safe for several processes. */
export interface TaskRegistry {
  /** Where the records live, for people: a path, or `Redis at …`. */
  readonly location: string;
  /** Adds or replaces the record of `record.server`'s task `record.id`. */
  put(record: TaskRecord): Promise<void>;
  /** Every record, newest first. */
  list(): Promise<TaskRecord[]>;
  /** Releases files and connections. Safe to call twice. */
  close(): Promise<void>;
}

/** The key of a record: task ids are unique per server only. */
export function taskKey(record: Pick<TaskRecord, "server" | "id">): string {
  return JSON.stringify([record.server, record.id]);
}

/** Whether `value` read back from a store is a usable record. */
export function isTaskRecord(value: unknown): value is TaskRecord {
  const r = value as Partial<TaskRecord> | null;
  return typeof r === "object" && r !== null && typeof r.id === "string" &&
    typeof r.server === "string" && typeof r.tool === "string" &&
    typeof r.createdAt === "string" && typeof r.state === "string" &&
    (r.generation === "v1" || r.generation === "v2") && typeof r.endpoint === "string";
}

/** Newest first. */
export function newestFirst(records: Iterable<TaskRecord>): TaskRecord[] {
  return [...records].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

/**
 * The records a registry keeps of `records` (newest first): at most `max`, the ones to
 * forget chosen among the oldest settled and delivered first, then the oldest settled,
 * and a task still pending only when nothing else is left.
 */
export function keptRecords(records: readonly TaskRecord[], max = MAX_TASK_RECORDS): TaskRecord[] {
  const sorted = newestFirst(records);
  if (sorted.length <= max) return sorted;
  const ranks = (r: TaskRecord) =>
    SETTLED_STATES.has(r.state) ? (r.deliveredAt || !r.conversation ? 0 : 1) : 2;
  let excess = sorted.length - max;
  const dropped = new Set<TaskRecord>();
  for (const rank of [0, 1, 2]) {
    for (let i = sorted.length - 1; i >= 0 && excess > 0; i--) {
      if (ranks(sorted[i]) === rank && !dropped.has(sorted[i])) {
        dropped.add(sorted[i]);
        excess--;
      }
    }
  }
  return sorted.filter((r) => !dropped.has(r));
}
