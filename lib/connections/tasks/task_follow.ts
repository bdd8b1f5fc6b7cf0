/**
 * Following one task on a live session ({@linkcode LiveTask}): its statuses as they come
 * (bounded and masked before anyone sees them), how it ends, cancelling it.
 *
 * ext-tasks drives the polling. Two things it leaves to the host are done here: when a
 * 2025-11-25 task needs input (`input_required`), `tasks/result` is called at once, since
 * that is the stream the server's question (an elicitation) arrives on (the spec's
 * "SHOULD preemptively call tasks/result"; ext-tasks only calls it once the task is
 * over); and a failed 2025-11-25 task's error result is fetched, so the model reads what
 * the tool said rather than only the status message.
 *
 * @module
 */

import type { CallToolResult, Client } from "@modelcontextprotocol/client";
import {
  type TaskOutcome,
  type TaskView,
  type ToolExecution,
} from "@modelcontextprotocol/ext-tasks/client";
import { timerDelay } from "../../async/timers.ts";
import type { Log } from "../../log/log.ts";
import type { Redactor } from "../../redact/redact.ts";
import { boundedPollInterval, boundedStatusMessage, MAX_FOLLOW_MS } from "../../tasks/bounds.ts";
import type { LiveTask, StartedTask, TaskEnd, TaskStatusUpdate } from "./task_types.ts";

/** JSON-RPC "invalid params": what a server answers for a task id it does not know. */
const UNKNOWN_TASK_CODE = -32602;

/** A Standard Schema that accepts any JSON value (results read as they are). */
export const ANY_RESULT = {
  "~standard": {
    version: 1,
    vendor: "patchbay",
    validate: (value: unknown) => ({ value }),
  },
} as const;

/** What following a task needs of its session. */
export interface FollowContext {
  /** The session's client. */
  client: Client;
  redactor: Redactor;
  log: Log;
  /** The server's `timeout`, for the requests made here (milliseconds). */
  requestTimeoutMs: number;
}

/** Follows `execution` (a task ext-tasks created or recovered) until it ends. */
export function followExecution(
  execution: ToolExecution<unknown>,
  task: StartedTask,
  context: FollowContext,
): LiveTask {
  const listeners = new Set<(update: TaskStatusUpdate) => void>();
  let fetching: Promise<unknown> | undefined;
  const first = Promise.withResolvers<TaskStatusUpdate | undefined>();
  const settlement = execution.settle({
    close: false,
    onEvent: (event) => {
      if (event.type !== "task") return;
      const update = statusUpdate(event.task, context.redactor);
      first.resolve(update);
      for (const listener of [...listeners]) listener(update);
      if (task.generation === "v1" && update.status === "input_required" && !fetching) {
        // The server's question waits on the tasks/result stream; its answer is the
        // result too, which ext-tasks fetches again once the task is over.
        fetching = fetchResult(context, task.taskId, MAX_FOLLOW_MS)
          .catch((error) => context.log.debug("tasks/result while input was required", { error }))
          .finally(() => fetching = undefined);
      }
    },
  });
  const end = settlement.then(
    ({ outcome }) => endOf(outcome, task, context),
    (error): TaskEnd => ({ status: "lost", error: messageOf(error) }),
  );
  void end.then(() => first.resolve(undefined));
  return {
    task,
    end,
    first: first.promise,
    onStatus(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    cancel: (signal) => execution.cancel(signal),
    stop: () => execution.detach(),
  };
}

/** A task's state as it may be shown and stored. */
export function statusUpdate(view: TaskView, redactor: Redactor): TaskStatusUpdate {
  const message = boundedStatusMessage(view.statusMessage, redactor);
  const poll = view.suggestedPollIntervalMs;
  return {
    status: view.status,
    ...(message ? { statusMessage: message } : {}),
    ...(poll === undefined ? {} : { pollIntervalMs: boundedPollInterval(poll) }),
    ttlMs: view.retentionMs,
  };
}

/** How a task ended, in patchbay's terms, from ext-tasks' outcome. */
async function endOf(
  outcome: TaskOutcome<unknown>,
  task: StartedTask,
  context: FollowContext,
): Promise<TaskEnd> {
  switch (outcome.status) {
    case "completed":
      return { status: "completed", result: context.redactor.redactValue(outcome.result) as never };
    case "cancelled":
      return { status: "cancelled" };
  }
  const error = context.redactor.redact(outcome.error.message);
  if (outcome.task?.status === "failed") {
    // The server's verdict. A 2025-11-25 tool task that failed holds the tool's error
    // result (isError), which says more than the status message.
    if (task.generation === "v1") {
      try {
        // The task is over: its result is owed at once.
        const result = await fetchResult(context, task.taskId, context.requestTimeoutMs);
        if (isCallToolResult(result)) {
          return { status: "failed", result: context.redactor.redactValue(result), error };
        }
      } catch (failure) {
        return { status: "failed", error: context.redactor.redact(messageOf(failure)) };
      }
    }
    return { status: "failed", error };
  }
  if (outcome.error.code === UNKNOWN_TASK_CODE) return { status: "unknown", error };
  // No verdict from the server: the session ended, or the follow-up was stopped.
  return { status: "lost", error };
}

/**
 * `tasks/result` of a 2025-11-25 task, which the server holds until the task is over:
 * bounded by `timeoutMs` (while input is required, by how long a task is followed at all,
 * since the task waits for a person).
 */
export async function fetchResult(
  context: FollowContext,
  taskId: string,
  timeoutMs: number,
): Promise<unknown> {
  return await context.client.request(
    { method: "tasks/result", params: { taskId } } as never,
    ANY_RESULT as never,
    { timeout: timerDelay(timeoutMs), maxTotalTimeout: timerDelay(timeoutMs) },
  );
}

function isCallToolResult(value: unknown): value is CallToolResult {
  return typeof value === "object" && value !== null &&
    Array.isArray((value as { content?: unknown }).content);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
