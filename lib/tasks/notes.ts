/**
 * What the model and the person read about tasks: the result of a call whose task was
 * still running when the call stopped waiting (pending: its id, and how its result will
 * come), and the note that brings a task's result into its conversation later.
 *
 * @module
 */

import type { CallToolResult } from "@modelcontextprotocol/client";
import type { StoredMessage } from "../memory/types.ts";
import type { TaskRecord } from "../memory/task_registry.ts";
import type { Surface } from "../errors/failure_table.ts";

/** `_meta` key of a pending result: the task's id and server, for scripts (`call --json`). */
export const PENDING_META = "io.github.patchbay/task";

/** The result a call reads when its task is still running: it says so, and what comes next. */
export function pendingResult(
  record: TaskRecord,
  waitedSeconds: number,
  options: { surface: Surface; followed: boolean },
): CallToolResult {
  const where = `the task ${record.id} (${record.server}/${record.tool})`;
  const waited = waitedSeconds > 0
    ? `is still running after ${waitedSeconds} s (AgentConfig.tool_call_timeout)`
    : "is still running, but the connection to its server was lost";
  const next = options.followed
    ? "patchbay keeps following it: its result will be added to this conversation when it " +
      "completes, even if patchbay is restarted in between (`--resume`)."
    : "Its result is kept by the server until its ttl passes.";
  const fetch = options.surface === "repl"
    ? `The user can fetch it with /tasks result ${record.id}.`
    : `It can be fetched with \`patchbay tasks result ${record.id}\`.`;
  return {
    content: [{
      type: "text",
      text: `Pending: ${where} ${waited}. It was not cancelled. ${next} ${fetch} ` +
        "Do not call the tool again for the same request; continue with what you can do " +
        "meanwhile, or tell the user the result will follow.",
    }],
    _meta: { [PENDING_META]: { taskId: record.id, server: record.server, state: record.state } },
  };
}

/** The stored message that brings a settled task's outcome into its conversation. */
export function deliveryMessage(record: TaskRecord, now = new Date()): StoredMessage {
  return {
    role: "user",
    content: record.result ?? record.error ?? "",
    timestamp: now.toISOString(),
    task: {
      id: record.id,
      server: record.server,
      tool: record.tool,
      state: record.state,
      ...(record.toolCallId ? { toolCallId: record.toolCallId } : {}),
      ...(record.isError ? { isError: true } : {}),
    },
  };
}

/** How a settled task is named in one line (notices, `/tasks`). */
export function outcomeLine(record: TaskRecord): string {
  const what = `${record.server}/${record.tool}`;
  switch (record.state) {
    case "completed":
      return `Task ${record.id} (${what}) completed${record.isError ? " with an error" : ""}`;
    case "failed":
      return `Task ${record.id} (${what}) failed${record.error ? `: ${record.error}` : ""}`;
    case "cancelled":
      return `Task ${record.id} (${what}) was cancelled`;
    case "unknown":
      return `Task ${record.id} (${what}) is unknown to its server`;
    default:
      return `Task ${record.id} (${what}) is ${record.state.replace("_", " ")}`;
  }
}
