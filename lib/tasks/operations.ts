/**
 * What `patchbay tasks` and `/tasks` do with the recorded tasks: list them, find one by
 * id (or a unique prefix), ask its server for its status or its result, cancel it. Each
 * answer updates the task's record, so the registry says what the server last said.
 *
 * @module
 */

import type { ConnectionManager } from "../connections/manager.ts";
import { cancelTaskOn, taskEndOn, taskStatusOn } from "../connections/tasks/task_requests.ts";
import { TaskNotFoundError, TaskUnknownError } from "../errors.ts";
import {
  hasOutcome,
  SETTLED_STATES,
  type TaskRecord,
  type TaskRegistry,
} from "../memory/task_registry.ts";

export { hasOutcome } from "../memory/task_registry.ts";
import type { Redactor } from "../redact/redact.ts";
import { endedRecord, startedTaskOf, withStatus } from "./records.ts";

/** How long a settled task stays in the default listing. */
export const RECENT_MS = 24 * 60 * 60 * 1000;

/** The recorded tasks: all, or those still pending and those settled in the last day. */
export async function listTasks(
  registry: TaskRegistry,
  options: { all?: boolean; now?: number } = {},
): Promise<TaskRecord[]> {
  const records = await registry.list();
  if (options.all) return records;
  const now = options.now ?? Date.now();
  return records.filter((r) =>
    !SETTLED_STATES.has(r.state) || now - Date.parse(r.updatedAt) < RECENT_MS
  );
}

/** The recorded task with this id, or the only one whose id starts with it. */
export async function findTask(registry: TaskRegistry, id: string): Promise<TaskRecord> {
  const wanted = id.trim();
  const records = await registry.list();
  const exact = records.filter((r) => r.id === wanted);
  const matches = exact.length > 0 ? exact : records.filter((r) => r.id.startsWith(wanted));
  if (wanted !== "" && matches.length === 1) return matches[0];
  if (matches.length > 1) {
    throw new TaskNotFoundError(
      id,
      `it names ${matches.length} recorded tasks: ` +
        matches.slice(0, 5).map((r) => `${r.id} (${r.server})`).join(", "),
    );
  }
  throw new TaskNotFoundError(id, `${registry.location} holds no task with that id`);
}

/** Options of the requests below. */
export interface TaskRequestOptions {
  manager: ConnectionManager;
  registry: TaskRegistry;
  redactor: Redactor;
  signal?: AbortSignal;
}

/** Asks the task's server for its status; the record, updated. */
export async function refreshTask(
  record: TaskRecord,
  options: TaskRequestOptions,
): Promise<TaskRecord> {
  const connection = options.manager.taskConnection(record.server);
  try {
    const update = await taskStatusOn(connection, startedTaskOf(record), options.signal);
    const next = withStatus(record, update);
    if (SETTLED_STATES.has(record.state) && !SETTLED_STATES.has(next.state)) return record;
    // Over: its outcome is fetched now (at once, since it is over), so that a record
    // that says a task is over always holds its outcome.
    if (SETTLED_STATES.has(next.state) && !hasOutcome(next)) {
      return await taskOutcome(next, options);
    }
    await options.registry.put(next);
    return next;
  } catch (error) {
    throw await forgotten(record, error, options);
  }
}

/**
 * The task's outcome: the recorded one when it is over, else asked of its server, waiting
 * until the task is over (until `signal` aborts). The record, updated.
 */
export async function taskOutcome(
  record: TaskRecord,
  options: TaskRequestOptions,
): Promise<TaskRecord> {
  if (hasOutcome(record)) return record;
  const connection = options.manager.taskConnection(record.server);
  try {
    const end = await taskEndOn(connection, startedTaskOf(record), options.signal);
    const next = endedRecord(record, end, options.redactor);
    await options.registry.put(next);
    return next;
  } catch (error) {
    throw await forgotten(record, error, options);
  }
}

/**
 * Cancels the task on its server (`tasks/cancel`); the record, updated. A task already
 * over is not cancelled (the server would refuse): its record says how it ended.
 */
export async function cancelTask(
  record: TaskRecord,
  options: TaskRequestOptions,
): Promise<TaskRecord> {
  const now = await refreshTask(record, options);
  if (SETTLED_STATES.has(now.state)) return now;
  const connection = options.manager.taskConnection(record.server);
  try {
    await cancelTaskOn(connection, startedTaskOf(record), options.signal);
  } catch (error) {
    throw await forgotten(record, error, options);
  }
  const next = endedRecord(record, { status: "cancelled" }, options.redactor);
  await options.registry.put(next);
  return next;
}

/** `error`; a task the server forgot is recorded as unknown first. */
async function forgotten(
  record: TaskRecord,
  error: unknown,
  options: TaskRequestOptions,
): Promise<unknown> {
  if (error instanceof TaskUnknownError && !SETTLED_STATES.has(record.state)) {
    await options.registry.put(
      endedRecord(record, { status: "unknown", error: error.reason }, options.redactor),
    ).catch(() => {});
  }
  return error;
}
