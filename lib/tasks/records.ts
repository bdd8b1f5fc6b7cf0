/**
 * Task records made and updated from what the connections report: a task started, a new
 * status, how it ended. Everything a server controls is bounded and masked here before it
 * is kept (the arguments, the status message, the result).
 *
 * @module
 */

import type { StartedTask, TaskEnd, TaskStatusUpdate } from "../connections/tasks/task_types.ts";
import { convertToolResult } from "../agent/content.ts";
import type { TaskRecord } from "../memory/task_registry.ts";
import type { Redactor } from "../redact/redact.ts";
import { followUntil, maskedArguments } from "./bounds.ts";

/** The record of a task just started. */
export function startedRecord(
  task: StartedTask,
  update: TaskStatusUpdate,
  redactor: Redactor,
  now = new Date(),
): TaskRecord {
  return withStatus(
    {
      id: task.taskId,
      server: task.server,
      tool: task.tool,
      arguments: maskedArguments(task.arguments, redactor),
      generation: task.generation,
      endpoint: task.endpoint,
      ...(task.context?.conversation ? { conversation: task.context.conversation } : {}),
      ...(task.context?.toolCallId ? { toolCallId: task.context.toolCallId } : {}),
      ...(task.httpSession ? { httpSession: task.httpSession } : {}),
      createdAt: new Date(task.startedAt).toISOString(),
      updatedAt: now.toISOString(),
      followUntil: new Date(followUntil(task.startedAt, update.ttlMs)).toISOString(),
      state: "working",
    },
    update,
    now,
  );
}

/** `record` with a new status (the status message as bounded by the connections). */
export function withStatus(
  record: TaskRecord,
  update: TaskStatusUpdate,
  now = new Date(),
): TaskRecord {
  const next: TaskRecord = {
    ...record,
    state: update.status,
    updatedAt: now.toISOString(),
    ...(update.pollIntervalMs === undefined ? {} : { pollIntervalMs: update.pollIntervalMs }),
  };
  if (update.statusMessage !== undefined) next.statusMessage = update.statusMessage;
  if (update.ttlMs !== undefined) {
    next.ttlMs = update.ttlMs;
    next.followUntil = new Date(followUntil(Date.parse(record.createdAt), update.ttlMs))
      .toISOString();
  }
  return next;
}

/** `record` as `end` left it: its result as the model reads it, or why it failed. */
export function endedRecord(
  record: TaskRecord,
  end: TaskEnd,
  redactor: Redactor,
  now = new Date(),
): TaskRecord {
  const { result: _result, isError: _isError, error: _error, ...rest } = record;
  const base = { ...rest, updatedAt: now.toISOString() };
  switch (end.status) {
    case "completed":
    case "failed": {
      const converted = end.result ? convertToolResult(end.result) : undefined;
      return {
        ...base,
        state: end.status,
        ...(converted ? { result: redactor.redact(converted.text) } : {}),
        ...(converted?.isError || end.status === "failed" ? { isError: true } : {}),
        ...(end.status === "failed" ? { error: redactor.redact(end.error) } : {}),
      };
    }
    case "cancelled":
      return { ...base, state: "cancelled", ...(end.error ? { error: end.error } : {}) };
    case "unknown":
      return { ...base, state: "unknown", error: redactor.redact(end.error) };
    case "lost":
      // Not an end: the task is followed again on the next session.
      return { ...record, updatedAt: now.toISOString() };
  }
}

/** What the connections need to follow a recorded task again. */
export function startedTaskOf(record: TaskRecord): StartedTask {
  let args: Record<string, unknown> = {};
  try {
    args = JSON.parse(record.arguments);
  } catch {
    // Abridged past its end: the masked text is what is left, and it is only shown.
  }
  return {
    server: record.server,
    tool: record.tool,
    taskId: record.id,
    generation: record.generation,
    endpoint: record.endpoint,
    arguments: args,
    startedAt: Date.parse(record.createdAt),
    ...(record.httpSession ? { httpSession: record.httpSession } : {}),
    ...(record.conversation || record.toolCallId
      ? {
        context: {
          ...(record.conversation ? { conversation: record.conversation } : {}),
          ...(record.toolCallId ? { toolCallId: record.toolCallId } : {}),
        },
      }
      : {}),
  };
}
