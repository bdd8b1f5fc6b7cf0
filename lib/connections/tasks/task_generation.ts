/**
 * Which generation of MCP Tasks a session speaks, and what patchbay declares to receive
 * tasks: read from the handshake alone, so deciding how a tool call goes needs none of
 * ext-tasks (loaded only once a task is made, `tool_task.ts`).
 *
 * @module
 */

import type { ServerSession } from "../session/live_session.ts";

/** Which Tasks protocol a session speaks; `none`: the server offers no tasks. */
export type TaskGeneration = "none" | "v1" | "v2";

/** The Tasks extension's identifier (2026-07-28). */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** The Tasks protocol `session`'s server offers for tool calls. */
export function taskGeneration(session: ServerSession): TaskGeneration {
  const capabilities = session.capabilities as Record<string, unknown> & {
    tasks?: { requests?: { tools?: { call?: unknown } } };
    extensions?: Record<string, unknown>;
  };
  if (session.client.getProtocolEra() === "modern") {
    const extension = capabilities.extensions?.[TASKS_EXTENSION];
    return extension && typeof extension === "object" ? "v2" : "none";
  }
  return capabilities.tasks?.requests?.tools?.call !== undefined ? "v1" : "none";
}

/**
 * The `tasks` capability patchbay declares (2025-11-25): which of its requests a server
 * may make as tasks. Must match what `task_receiver.ts` binds.
 */
export function receiverCapabilities(
  offersSampling: boolean,
  offersElicitation: boolean,
): Record<string, unknown> {
  return {
    list: {},
    cancel: {},
    requests: {
      ...(offersSampling ? { sampling: { createMessage: {} } } : {}),
      ...(offersElicitation ? { elicitation: { create: {} } } : {}),
    },
  };
}
