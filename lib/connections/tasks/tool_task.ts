/**
 * A tool call made as an MCP task: the server answers at once with a task, which is
 * recorded (before the call waits), then followed until it ends, its statuses passed on
 * to whoever watches the call. The caller gets an ordinary result at the end.
 *
 * The wait is the call's: `tool_call_timeout` bounds it (not counting the time the server
 * waits on the person, a form inside the task), Ctrl+C cancels the task (`tasks/cancel`).
 * When the timeout passes the task is not cancelled: it goes on on the server, the
 * tracking follows it, and the caller reads that it is pending and how its result will
 * come. A session lost meanwhile leaves the task to be followed on the next one.
 *
 * @module
 */

import type { CallToolResult } from "@modelcontextprotocol/client";
import type {
  SerializedTaskReference,
  TaskEnabledSession,
  ToolExecution,
} from "@modelcontextprotocol/ext-tasks/client";
import { startDeadline } from "../../async/wait_clock.ts";
import { CancelledError, TaskUnknownError, ToolAnswerRefusedError } from "../../errors.ts";
import { MAX_TASK_ID_CHARS, REQUESTED_TTL_MS, usableTaskId } from "../../tasks/bounds.ts";
import type { ServerConnection } from "../connection.ts";
import type { ServerSession } from "../session/live_session.ts";
import { followExecution, statusUpdate } from "./task_follow.ts";
import { followInPriorSession } from "./prior_session.ts";
import { HttpTransport } from "../../transports/http.ts";
import { openTaskSession, taskGeneration } from "./task_session.ts";
import type {
  LiveTask,
  StartedTask,
  TaskCallContext,
  TaskEnd,
  TaskProgress,
  TaskStatusUpdate,
  TaskTracking,
} from "./task_types.ts";

/** Options of {@linkcode callToolAsTask}. */
export interface ToolTaskOptions {
  /** The catalogue name, for messages. */
  tool: string;
  /** Aborting cancels the task on the server. */
  signal?: AbortSignal;
  /** How long the call waits (`AgentConfig.tool_call_timeout`). @default the server's timeout */
  toolCallTimeoutSeconds?: number;
  /** The task's statuses while the call waits. */
  onTask?: (progress: TaskProgress) => void;
  context?: TaskCallContext;
  tracking: TaskTracking;
}

/** The ext-tasks session of each live session, made on first need. */
const taskSessions = new WeakMap<ServerSession, Promise<TaskEnabledSession>>();

/** `session`'s ext-tasks session (one per session; tasks followed are let go at its end). */
export function taskSessionOf(
  connection: ServerConnection,
  session: ServerSession,
): Promise<TaskEnabledSession> {
  let made = taskSessions.get(session);
  if (!made) {
    made = openTaskSession(session, { log: connection.log });
    taskSessions.set(session, made);
    session.beforeClose(async () => {
      const tasks = await made!.catch(() => undefined);
      // Closing ext-tasks' session cancels the tasks it still drives; they must go on
      // on the server (they are followed again by the next session), so each is let go
      // first (`detach`, see letGo), and a streamable HTTP session holding them is left to
      // the server rather than ended (a server may keep tasks per session).
      const unfinished = unfinishedTasks(session).size > 0;
      if (unfinished && session.transport instanceof HttpTransport) {
        session.transport.keepSessionOnClose();
      }
      await Promise.all([...following(session)].map((execution) => letGo(execution)));
      await tasks?.close();
    });
  }
  return made;
}

/** The executions followed on each session, let go when it closes. */
const followed = new WeakMap<ServerSession, Set<ToolExecution<unknown>>>();

function following(session: ServerSession): Set<ToolExecution<unknown>> {
  let set = followed.get(session);
  if (!set) followed.set(session, set = new Set());
  return set;
}

/**
 * The tasks started in each session that have not ended, followed or not: the session is
 * left to the server at close while it holds any.
 */
const unfinished = new WeakMap<ServerSession, Set<string>>();

function unfinishedTasks(session: ServerSession): Set<string> {
  let set = unfinished.get(session);
  if (!set) unfinished.set(session, set = new Set());
  return set;
}

/** Stops following `execution` locally, leaving the task running on the server. */
async function letGo(execution: ToolExecution<unknown>): Promise<void> {
  await execution.detach();
  // Settled (as closed) before ext-tasks' close looks at it, so it is not cancelled.
  await execution.result();
}

/** Calls `tool` on `connection`'s server as a task (see the module's description). */
export async function callToolAsTask(
  connection: ServerConnection,
  originalName: string,
  args: Record<string, unknown>,
  options: ToolTaskOptions,
): Promise<CallToolResult> {
  const session = connection.session;
  if (!session) throw connection.unavailable();
  const generation = taskGeneration(session);
  const tasks = await taskSessionOf(connection, session);
  const execution = await connection.request(
    `tools/call ${originalName}`,
    (_session, request) =>
      tasks.callTool(originalName, args as never, {
        signal: request.signal,
        requestTimeoutMs: request.timeout,
        task: {
          // 2025-11-25: the client asks for a task; 2026-07-28: the server decides.
          preference: generation === "v1" ? "require" : "allow",
          retentionMs: REQUESTED_TTL_MS,
        },
      }),
    { tool: options.tool, signal: options.signal, unmasked: true },
  );
  if (execution.kind === "immediate") {
    const { outcome } = await execution.settle();
    if (outcome.status !== "completed") throw new Error(`the call ended ${outcome.status}`);
    return connection.redactor.redactValue(outcome.result) as CallToolResult;
  }
  const reference = execution.serializeReference();
  if (!usableTaskId(reference.taskId)) {
    void execution.close().catch(() => {});
    // patchbay's judgement of the server, not the server's own words: the generic remedy of
    // a failed tool ("the cause is the server's own message") would send the person to
    // their arguments.
    throw new ToolAnswerRefusedError(
      `${connection.name}/${originalName}`,
      `server '${connection.name}' answered with a task id patchbay cannot use ` +
        `(empty, longer than ${MAX_TASK_ID_CHARS} characters, or with control characters or ` +
        "spaces)",
      undefined,
      "the server breaks MCP Tasks: report it to its authors (the task may go on running " +
        "there, unfollowed)",
    );
  }
  const task: StartedTask = {
    server: connection.name,
    tool: originalName,
    catalogueName: options.tool,
    taskId: reference.taskId,
    generation: reference.generation,
    endpoint: reference.endpointId,
    arguments: args,
    startedAt: Date.now(),
    ...(options.context ? { context: options.context } : {}),
    ...(httpSessionOf(session) ? { httpSession: httpSessionOf(session) } : {}),
  };
  const view = await firstView(execution);
  const first: TaskStatusUpdate = view
    ? statusUpdate(view, connection.redactor)
    : { status: "working" };
  const live = follow(connection, session, execution, task);
  try {
    await options.tracking.started(task, first);
  } catch (error) {
    connection.log.warn(`could not record task ${task.taskId}`, { error: String(error) });
  }
  options.onTask?.({ taskId: task.taskId, startedAt: task.startedAt, ...first });
  return await waitFor(connection, live, options);
}

/** The task as the server created it. */
async function firstView(execution: ToolExecution<unknown>) {
  for await (const event of execution.updates()) {
    if (event.type === "task") return event.task;
    return undefined;
  }
  return undefined;
}

/** Follows an execution on `session`, letting it go when the session closes. */
function follow(
  connection: ServerConnection,
  session: ServerSession,
  execution: ToolExecution<unknown>,
  task: StartedTask,
): LiveTask {
  const executions = following(session);
  executions.add(execution);
  const started = unfinishedTasks(session);
  started.add(task.taskId);
  const live = followExecution(execution, task, {
    client: session.client,
    redactor: connection.redactor,
    log: connection.log,
    requestTimeoutMs: connection.config.timeoutSeconds * 1000,
  });
  void live.end.then((end) => {
    executions.delete(execution);
    // Let go (`lost`) is not over: the task may still run on the server.
    if (end.status !== "lost") started.delete(task.taskId);
  });
  return live;
}

/** Waits for `live` within the call's bounds; the result the caller reads. */
async function waitFor(
  connection: ServerConnection,
  live: LiveTask,
  options: ToolTaskOptions,
): Promise<CallToolResult> {
  const { task, tracking } = { task: live.task, tracking: options.tracking };
  const seconds = options.toolCallTimeoutSeconds ?? connection.config.timeoutSeconds;
  const stop = live.onStatus((update) => {
    tracking.changed(task, update);
    options.onTask?.({ taskId: task.taskId, startedAt: task.startedAt, ...update });
  });
  let expire!: () => void;
  const expired = new Promise<"timeout">((resolve) => expire = () => resolve("timeout"));
  const cancelDeadline = startDeadline(seconds * 1000, () => expire(), connection.clock);
  let cancel!: () => void;
  const cancelled = new Promise<"cancelled">((resolve) => cancel = () => resolve("cancelled"));
  const signal = options.signal;
  if (signal?.aborted) cancel();
  signal?.addEventListener("abort", cancel, { once: true });
  try {
    const outcome = await Promise.race([live.end, expired, cancelled]);
    if (outcome === "timeout") {
      connection.log.info(`task ${task.taskId} still running after ${seconds} s; followed on`);
      return tracking.pending(live, seconds);
    }
    if (outcome === "cancelled") {
      await cancelTask(connection, live, tracking);
      throw new CancelledError(`the task ${task.taskId} of ${task.server}/${task.tool}`);
    }
    return await ended(connection, live, outcome, options);
  } finally {
    stop();
    cancelDeadline();
    signal?.removeEventListener("abort", cancel);
  }
}

/** `tasks/cancel`, within the server's timeout; how it ended is recorded either way. */
async function cancelTask(
  connection: ServerConnection,
  live: LiveTask,
  tracking: TaskTracking,
): Promise<void> {
  const bound = AbortSignal.timeout(connection.config.timeoutSeconds * 1000);
  let end: TaskEnd = { status: "cancelled" };
  try {
    await live.cancel(bound);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    connection.log.warn(`tasks/cancel of ${live.task.taskId} failed: ${why}`);
    end = { status: "cancelled", error: `patchbay asked to cancel it; the server said: ${why}` };
  }
  await tracking.ended(live.task, end).catch(() => {});
}

/** The result of a task that ended while the call waited. */
async function ended(
  connection: ServerConnection,
  live: LiveTask,
  end: TaskEnd,
  options: ToolTaskOptions,
): Promise<CallToolResult> {
  const task = live.task;
  if (end.status === "lost") {
    // The session went away, not the task: it is followed again on the next session.
    return options.tracking.pending(live, 0);
  }
  await options.tracking.ended(task, end).catch((error) =>
    connection.log.warn(`could not record how task ${task.taskId} ended`, { error })
  );
  switch (end.status) {
    case "completed":
      return end.result;
    case "failed":
      return end.result ?? errorResult(`The task failed on the server: ${end.error}`);
    case "cancelled":
      return errorResult(
        `The server cancelled the task${end.error ? `: ${end.error}` : ""}.`,
      );
    case "unknown":
      throw new TaskUnknownError(task.server, task.taskId, end.error);
  }
}

/** The streamable HTTP session of a 2025-11-25 session, if it has one. */
export function httpSessionOf(session: ServerSession): string | undefined {
  const transport = session.transport;
  return transport instanceof HttpTransport && session.client.getProtocolEra() !== "modern"
    ? transport.sessionId
    : undefined;
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

/**
 * Follows again a task recorded earlier (by this process or one that ended), on the
 * server's current session: the live task, or how it ended when the server no longer
 * knows it.
 */
export async function resumeToolTask(
  connection: ServerConnection,
  task: StartedTask,
): Promise<LiveTask> {
  const session = connection.session;
  if (!session) throw connection.unavailable();
  if (task.httpSession && task.httpSession !== httpSessionOf(session)) {
    // Started in a session of an earlier process: followed in that session.
    return await followInPriorSession(task, task.httpSession, connection.priorSessionOptions());
  }
  const tasks = await taskSessionOf(connection, session);
  const reference: SerializedTaskReference = {
    endpointId: task.endpoint,
    generation: task.generation,
    // A task id is the server's string; ext-tasks brands it.
    taskId: task.taskId as SerializedTaskReference["taskId"],
    originalOperation: "tools/call",
  };
  const execution = await tasks.resumeTask(reference, {
    requestTimeoutMs: connection.config.timeoutSeconds * 1000,
  });
  return follow(connection, session, execution, task);
}
