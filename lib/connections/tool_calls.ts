/**
 * How one tool call goes to its server: as a plain `tools/call`, or as an MCP task
 * (`tool_task.ts`), which decides {@linkcode runsAsTask}:
 *
 * - a 2025-11-25 server with the `tasks` capability: a tool whose `execution.taskSupport`
 *   is `required` always; one whose support is `optional` when the entry says
 *   `"tasks": "always"`, or under `auto` once a plain call of it came close to
 *   `tool_call_timeout` (over half of it, or past it) in this session;
 * - a 2026-07-28 server offering the Tasks extension: every call goes through it (the
 *   server decides which become tasks), unless the entry says `"tasks": "never"`;
 * - any other server: plain calls.
 *
 * @module
 */

import type { CallToolResult } from "@modelcontextprotocol/client";
import { DEFAULTS } from "../defaults.ts";
import { ToolTimeoutError } from "../errors.ts";
import type { ServerConnection } from "./connection.ts";
import type { ServerSession } from "./session/live_session.ts";
import { taskGeneration } from "./tasks/task_generation.ts";
import type { TaskTracking } from "./tasks/task_types.ts";
import type { CatalogueTool, ToolCallOptions } from "./types.ts";

/** Whether a call of `tool` on `session` runs as a task (see the module's description). */
export function runsAsTask(
  session: ServerSession | undefined,
  toolName: string,
  slow: boolean,
): boolean {
  if (!session) return false;
  const setting = session.config.tasks ?? DEFAULTS.server.tasks;
  switch (taskGeneration(session)) {
    case "none":
      return false;
    case "v2":
      return setting !== "never";
    case "v1": {
      const tool = session.lists.tools.find((t) => t.name === toolName) as
        | { execution?: { taskSupport?: unknown } }
        | undefined;
      const support = tool?.execution?.taskSupport;
      if (support === "required") return true;
      if (support !== "optional") return false;
      return setting === "always" || (setting === "auto" && slow);
    }
  }
}

/** What the calls of one manager share. */
export class ToolCalls {
  /** Tools (`server`, name) whose plain calls came close to their timeout. */
  readonly #slow = new Set<string>();
  #tracking: TaskTracking;

  constructor(tracking: TaskTracking) {
    this.#tracking = tracking;
  }

  /** Who keeps track of the tasks calls start from now on. */
  set tracking(tracking: TaskTracking) {
    this.#tracking = tracking;
  }

  get tracking(): TaskTracking {
    return this.#tracking;
  }

  /** Calls `tool` on `connection`, as a task when {@linkcode runsAsTask} says so. */
  async call(
    connection: ServerConnection,
    tool: CatalogueTool,
    args: Record<string, unknown>,
    options: ToolCallOptions,
    /** The request's `_meta`: the call span's trace context (`lib/telemetry/tool_span.ts`). */
    meta?: Record<string, string>,
  ): Promise<CallToolResult> {
    const key = JSON.stringify([tool.server, tool.originalName]);
    if (runsAsTask(connection.session, tool.originalName, this.#slow.has(key))) {
      // ext-tasks loads with the first task, not with the program (start-up cost).
      const { callToolAsTask } = await import("./tasks/tool_task.ts");
      return await callToolAsTask(connection, tool.originalName, args, {
        tool: tool.name,
        signal: options.signal,
        toolCallTimeoutSeconds: options.toolCallTimeoutSeconds,
        onTask: options.onTask,
        context: options.context,
        tracking: this.#tracking,
      });
    }
    const started = Date.now();
    const seconds = options.toolCallTimeoutSeconds ?? connection.config.timeoutSeconds;
    try {
      const result = await connection.request(
        `tools/call ${tool.originalName}`,
        (session, request) =>
          session.client.callTool(
            { name: tool.originalName, arguments: args, ...(meta ? { _meta: meta } : {}) },
            request,
          ),
        {
          tool: tool.name,
          timeoutSeconds: options.toolCallTimeoutSeconds,
          signal: options.signal,
          onProgress: options.onProgress,
        },
      ) as CallToolResult;
      if ((Date.now() - started) * 2 > seconds * 1000) this.#slow.add(key);
      return result;
    } catch (error) {
      if (error instanceof ToolTimeoutError) this.#slow.add(key);
      throw error;
    }
  }
}
