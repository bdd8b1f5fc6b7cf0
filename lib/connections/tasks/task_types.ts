/**
 * The seam between tool calls run as MCP tasks (`tool_task.ts`, in the connections) and
 * whoever keeps track of them (`lib/tasks/`: the registry, the follow-up of tasks still
 * running, their results put into conversations). The connections run the protocol;
 * the tracking decides what is remembered and what is said.
 *
 * @module
 */

import type { CallToolResult } from "@modelcontextprotocol/client";

/** A task's status on its server. */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** Where a tool call made as a task was made from. */
export interface TaskCallContext {
  /** The conversation it belongs to (absent for `patchbay call`). */
  conversation?: string;
  /** The model's id for the call in that conversation. */
  toolCallId?: string;
}

/** A task a tool call started on a server. */
export interface StartedTask {
  server: string;
  /** The tool's name on its server. */
  tool: string;
  /** The model-facing name, when the call came from the catalogue. */
  catalogueName?: string;
  taskId: string;
  generation: "v1" | "v2";
  /** The ext-tasks endpoint (see `taskEndpointId`). */
  endpoint: string;
  /** The arguments as sent (the tracking masks them before keeping them). */
  arguments: Record<string, unknown>;
  /** Local time the task was created (ms since the epoch). */
  startedAt: number;
  context?: TaskCallContext;
  /**
   * The streamable HTTP session it was started in (2025-11-25 servers may keep tasks per
   * session): followed there when another process follows it later.
   */
  httpSession?: string;
}

/** One status of a task, bounded and masked (safe to show and to store). */
export interface TaskStatusUpdate {
  status: TaskStatus;
  statusMessage?: string;
  /** The poll interval in effect (bounded), milliseconds. */
  pollIntervalMs?: number;
  /** The ttl the server granted (milliseconds; `null`: unlimited). */
  ttlMs?: number | null;
}

/** How a task ended, or why patchbay stopped hearing of it. */
export type TaskEnd =
  | { status: "completed"; result: CallToolResult }
  /** The server failed it: its error result when it sent one, else `error`. */
  | { status: "failed"; result?: CallToolResult; error: string }
  | { status: "cancelled"; error?: string }
  /** The server no longer knows the task (it expired, or the server lost it). */
  | { status: "unknown"; error: string }
  /** The session ended before the task did: it can be followed again on the next one. */
  | { status: "lost"; error: string };

/** A task being followed on a live session. */
export interface LiveTask {
  readonly task: StartedTask;
  /** Settles (never rejects) with how the task ended, or `lost` with its session. */
  readonly end: Promise<TaskEnd>;
  /** The first status seen while following it; `undefined` when none came. */
  readonly first: Promise<TaskStatusUpdate | undefined>;
  /** Calls `listener` with each status from now on; returns the function that stops it. */
  onStatus(listener: (update: TaskStatusUpdate) => void): () => void;
  /** Asks the server to cancel it (`tasks/cancel`); resolves once it acknowledged. */
  cancel(signal?: AbortSignal): Promise<void>;
  /** Stops following it here (it goes on on the server); `end` settles `lost`. */
  stop(): Promise<void>;
}

/**
 * What keeps track of the tasks tool calls start (implemented by `lib/tasks/tracker.ts`).
 * Absent, tasks still run and their results still come back to the caller; nothing is
 * remembered.
 */
export interface TaskTracking {
  /** A task was created: resolves once it is recorded (before the call waits for it). */
  started(task: StartedTask, update: TaskStatusUpdate): Promise<void>;
  /** A new status of a task. */
  changed(task: StartedTask, update: TaskStatusUpdate): void;
  /** A task waited for ended: resolves once that is recorded. */
  ended(task: StartedTask, end: TaskEnd): Promise<void>;
  /**
   * The wait for `live` ended before the task did (`tool_call_timeout`): the tracking
   * follows it from here; returns what the caller reads now (that it is pending, its id,
   * how its result will come).
   */
  pending(live: LiveTask, waitedSeconds: number): CallToolResult;
}

/** A tool call's task, as the person watching it sees it. */
export interface TaskProgress {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  /** Local time the task was created (ms since the epoch). */
  startedAt: number;
}

/**
 * The tracking of a manager nobody gave one: nothing is recorded, and a task the call
 * stopped waiting for is only reported as pending, with its id.
 */
export const UNTRACKED: TaskTracking = {
  started: () => Promise.resolve(),
  changed: () => {},
  ended: () => Promise.resolve(),
  pending: (live, seconds) => ({
    content: [{
      type: "text",
      text: `The task ${live.task.taskId} on server '${live.task.server}' is still running` +
        (seconds > 0 ? ` after ${seconds} s` : "") +
        "; this session does not follow it, so its result will not be delivered here.",
    }],
  }),
};
