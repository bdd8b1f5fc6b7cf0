/**
 * The MCP Tasks requester of one live session, made with the official
 * `@modelcontextprotocol/ext-tasks` over the session's SDK client: task-augmented tool
 * calls, polling, results, cancelling and recovering tasks by id, for the 2025-11-25
 * generation (`tasks` capability, SEP-1686) and the 2026-07-28 extension
 * (`io.modelcontextprotocol/tasks`).
 *
 * Between ext-tasks and the wire sits a port that bounds what the server controls: the
 * poll interval a task suggests (`pollInterval`, `pollIntervalMs`) is held within
 * `MIN_POLL_INTERVAL_MS`..`MAX_POLL_INTERVAL_MS` (ext-tasks itself floors it at 10 ms,
 * which is a hot loop by patchbay's standards, and has no ceiling).
 *
 * @module
 */

import {
  type ConnectedMcpSessionPort,
  createSessionPortFromClient,
  createTaskSessionEndpointId,
  type JsonRpcResponse,
  type TaskEnabledSession,
  withTasks,
} from "@modelcontextprotocol/ext-tasks/client";
import type { ServerConfig } from "../../config/types.ts";
import type { Log } from "../../log/log.ts";
import { boundedPollInterval } from "../../tasks/bounds.ts";
import type { ServerSession } from "../session/live_session.ts";
import { rawTaskDispatch } from "./task_dispatch.ts";
import { taskGeneration } from "./task_generation.ts";

export { type TaskGeneration, taskGeneration, TASKS_EXTENSION } from "./task_generation.ts";

/**
 * The identity ext-tasks scopes a task reference by: the server's name and where it is
 * reached (a task recorded for a server whose command or URL changed since is refused,
 * rather than asked for at another server).
 */
export function taskEndpointId(config: ServerConfig): Promise<string> {
  const target = config.transport === "stdio"
    ? { command: config.command, args: config.args }
    : { url: config.url };
  return createTaskSessionEndpointId("patchbay", { server: config.name, ...target });
}

/** Options of {@linkcode openTaskSession}. */
export interface TaskSessionOptions {
  log: Log;
}

/**
 * Makes the ext-tasks session of `session` (one per session: ext-tasks adapts the SDK
 * client once). Its background errors go to the log.
 */
export async function openTaskSession(
  session: ServerSession,
  options: TaskSessionOptions,
): Promise<TaskEnabledSession> {
  const endpoint = await taskEndpointId(session.config);
  const generation = taskGeneration(session);
  const port = createSessionPortFromClient(
    session.client,
    endpoint,
    generation === "v2" ? rawTaskDispatch(session) : {},
  );
  try {
    return withTasks(boundedPort(port), {
      onError: (error) => options.log.debug("tasks: background error", { error: String(error) }),
      // A 2026-07-28 task's questions, answered as the same requests on their own are.
      onInputRequest: async (request, context) => {
        if (!session.answer) throw new Error("this session answers no server requests");
        return await session.answer(
          request.kind,
          { ...(request.params ?? {}) },
          context.signal,
        ) as never;
      },
    });
  } catch (error) {
    port[Symbol.dispose]();
    throw error;
  }
}

/** `port` with every task's suggested poll interval held within patchbay's bounds. */
export function boundedPort(port: ConnectedMcpSessionPort): ConnectedMcpSessionPort {
  return {
    endpointId: port.endpointId,
    taskCapabilities: port.taskCapabilities,
    get invalidated() {
      return port.invalidated;
    },
    dispatch: async (request, options) => boundedResponse(await port.dispatch(request, options)),
    onServerRequest: (handler) => port.onServerRequest(handler),
    onNotification: (listener) =>
      port.onNotification((notification) => {
        const n = notification as { params?: unknown } | null;
        if (n && typeof n === "object" && isRecord(n.params)) boundTask(n.params);
        listener(notification);
      }),
    onInvalidated: (listener) => port.onInvalidated(listener),
  };
}

function boundedResponse(response: JsonRpcResponse): JsonRpcResponse {
  if (response.kind !== "result" || !isRecord(response.result)) return response;
  const result = response.result;
  boundTask(result);
  // 2025-11-25: a CreateTaskResult carries its task in `task`.
  if (isRecord(result.task)) boundTask(result.task);
  return response;
}

/** Holds a task object's poll interval (either generation's name) within the bounds. */
function boundTask(task: Record<string, unknown>): void {
  for (const field of ["pollInterval", "pollIntervalMs"]) {
    if (field in task && task[field] !== null) task[field] = boundedPollInterval(task[field]);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
