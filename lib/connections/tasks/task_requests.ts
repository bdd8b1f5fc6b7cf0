/**
 * Asking a server about one of its tasks by id, for `patchbay tasks` and `/tasks`: its
 * status (`tasks/get`), its result (waiting until it is over), cancelling it
 * (`tasks/cancel`). A task the server no longer knows is a `TaskUnknownError`.
 *
 * @module
 */

import type { CallToolResult } from "@modelcontextprotocol/client";
import { JsonRpcResponseError } from "@modelcontextprotocol/ext-tasks/client";
import { abortable } from "../../async/abortable.ts";
import {
  CancelledError,
  messageOf,
  PatchbayError,
  ServerRequestError,
  TaskUnknownError,
} from "../../errors.ts";
import { STEPS } from "../../errors/failure_table.ts";
import type { ServerConnection } from "../connection.ts";
import { statusUpdate } from "./task_follow.ts";
import type { StartedTask, TaskEnd, TaskStatusUpdate } from "./task_types.ts";
import { httpSessionOf, taskSessionOf } from "./tool_task.ts";
import { joinPriorSession } from "./prior_session.ts";

/** JSON-RPC "invalid params": what a server answers for a task id it does not know. */
const UNKNOWN_TASK_CODE = -32602;

/** The task's status now. */
export async function taskStatusOn(
  connection: ServerConnection,
  task: StartedTask,
  signal?: AbortSignal,
): Promise<TaskStatusUpdate> {
  return await asked(connection, task, "get the status of", async (controller) =>
    statusUpdate(
      await controller.snapshot(withBound(connection, signal)),
      connection.redactor,
    ));
}

/** Cancels the task (`tasks/cancel`). */
export async function cancelTaskOn(
  connection: ServerConnection,
  task: StartedTask,
  signal?: AbortSignal,
): Promise<void> {
  await asked(
    connection,
    task,
    "cancel",
    (controller) => controller.cancel(withBound(connection, signal)),
  );
}

/** How the task ended, waiting for it until `signal` aborts. */
export async function taskEndOn(
  connection: ServerConnection,
  task: StartedTask,
  signal?: AbortSignal,
): Promise<TaskEnd> {
  return await asked(connection, task, "get the result of", async (controller): Promise<
    TaskEnd
  > => {
    const outcome = await abortable(controller.result({ signal }), signal);
    switch (outcome.status) {
      case "completed":
        return {
          status: "completed",
          result: connection.redactor.redactValue(outcome.result) as CallToolResult,
        };
      case "cancelled":
        return { status: "cancelled" };
      case "failed":
        if (outcome.error.code === UNKNOWN_TASK_CODE) throw outcome.error;
        return { status: "failed", error: connection.redactor.redact(outcome.error.message) };
    }
  });
}

type Controller = ReturnType<Awaited<ReturnType<typeof taskSessionOf>>["task"]>;

async function asked<T>(
  connection: ServerConnection,
  task: StartedTask,
  what: string,
  work: (controller: Controller) => Promise<T>,
): Promise<T> {
  const taskId = task.taskId;
  const session = connection.session;
  if (!session) throw connection.unavailable();
  // A task started in a session of an earlier process is asked for there.
  const prior = task.httpSession && task.httpSession !== httpSessionOf(session)
    ? await joinPriorSession(task.httpSession, task.endpoint, connection.priorSessionOptions())
    : undefined;
  const tasks = prior?.tasks ?? await taskSessionOf(connection, session);
  // A task id is the server's string; ext-tasks brands it.
  const controller = tasks.task(taskId as Parameters<typeof tasks.task>[0], {
    requestTimeoutMs: connection.config.timeoutSeconds * 1000,
  });
  try {
    return await work(controller);
  } catch (error) {
    const rpc = error instanceof JsonRpcResponseError ||
        (error instanceof Error && "code" in error && typeof error.code === "number")
      ? error as Error & { code: number }
      : undefined;
    if (rpc?.code === UNKNOWN_TASK_CODE) {
      throw new TaskUnknownError(connection.name, taskId, connection.redactor.redact(rpc.message));
    }
    if (error instanceof DOMException && error.name === "AbortError") {
      throw new CancelledError(`asking server '${connection.name}' about task ${taskId}`);
    }
    if (error instanceof PatchbayError) throw error;
    throw connection.redactor.redactError(
      new ServerRequestError(connection.name, `${what} task ${taskId}`, {
        reason: messageOf((error as { cause?: unknown }).cause ?? error),
        remedy: STEPS.requestFailed,
        cause: error,
      }, rpc?.code),
    );
  } finally {
    await prior?.leave();
  }
}

/** `signal`, and the server's `timeout` on a request that should be answered at once. */
function withBound(connection: ServerConnection, signal?: AbortSignal): AbortSignal {
  const bound = AbortSignal.timeout(connection.config.timeoutSeconds * 1000);
  return signal ? AbortSignal.any([signal, bound]) : bound;
}
