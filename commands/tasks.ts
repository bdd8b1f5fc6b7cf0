/**
 * `patchbay tasks`: the MCP tasks patchbay started (docs/tasks.md). `tasks list` reads
 * the task registry (no server is started); `tasks get <id>`, `tasks result <id>` and
 * `tasks cancel <id>` ask the task's server (its status; its result, waiting until the task
 * is over; `tasks/cancel`). An id prefix is enough. Every form takes `--json`.
 *
 * @module
 */

import { EXIT, TaskUnknownError } from "../lib/errors.ts";
import type { TaskRecord } from "../lib/memory/task_registry.ts";
import { startUp } from "../lib/cli/startup.ts";
import { listHeading, taskDetail, taskJson, taskLine } from "../lib/tasks/format.ts";
import { commandTaskRegistry, type LazyTaskRegistry } from "../lib/tasks/open.ts";
import {
  cancelTask,
  findTask,
  hasOutcome,
  listTasks,
  refreshTask,
  taskOutcome,
  type TaskRequestOptions,
} from "../lib/tasks/operations.ts";
import { stripTerminalEscapes } from "../lib/terminal/terminal.ts";
import type { Runtime } from "../lib/cli/startup.ts";
import { type ScriptOptions, withServers } from "./_connect.ts";

/** Options of the `tasks` commands. */
export interface TasksOptions extends ScriptOptions {
  /** `list`: every recorded task, not only those running or over within a day. */
  all?: boolean;
}

function registryOf(runtime: Runtime): LazyTaskRegistry {
  return commandTaskRegistry(runtime.config.memory, runtime.env, {
    log: runtime.logger.child("tasks"),
    redactor: runtime.logger.redactor,
  });
}

/** Lists the recorded tasks. */
export async function tasksList(options: TasksOptions): Promise<number> {
  const runtime = await startUp(options);
  const registry = registryOf(runtime);
  try {
    const records = await listTasks(registry, { all: options.all });
    if (options.json) {
      console.log(JSON.stringify(
        { registry: registry.location, tasks: records.map(taskJson) },
        null,
        2,
      ));
      return EXIT.ok;
    }
    console.log(listHeading(records, registry.location));
    for (const record of records) console.log(`  ${taskLine(record)}`);
    if (records.length === 0) {
      console.log(
        options.all ? "  (none)" : "  (none running or over today; --all lists every one)",
      );
    }
    return EXIT.ok;
  } finally {
    await registry.close();
  }
}

/** Asks the task's server for its status. */
export function tasksGet(id: string, options: TasksOptions): Promise<number> {
  return withTask(id, options, true, async (record, request) => {
    const next = await refreshTask(record, request);
    print(next, options);
    return EXIT.ok;
  });
}

/** Prints the task's result, waiting for it while the task runs (Ctrl+C stops waiting). */
export function tasksResult(id: string, options: TasksOptions): Promise<number> {
  return withTask(id, options, false, async (record, request) => {
    if (record.state === "working" || record.state === "input_required") {
      if (!options.json) console.error(`Waiting for task ${record.id} (Ctrl+C stops waiting)…`);
    }
    const next = await taskOutcome(record, request);
    if (next.state === "unknown") {
      throw new TaskUnknownError(next.server, next.id, next.error ?? "the task is unknown");
    }
    if (options.json) {
      console.log(JSON.stringify(taskJson(next), null, 2));
    } else {
      if (next.state !== "completed") console.error(`Task ${next.id}: ${next.state}`);
      const text = next.result ?? next.error ?? "";
      if (text) console.log(stripTerminalEscapes(text));
    }
    return next.state === "completed" && !next.isError ? EXIT.ok : EXIT.failure;
  });
}

/** Cancels the task on its server. */
export function tasksCancel(id: string, options: TasksOptions): Promise<number> {
  return withTask(id, options, true, async (record, request) => {
    const before = record.state;
    const next = await cancelTask(record, request);
    const already = next.state !== "cancelled" || before === "cancelled";
    if (options.json) console.log(JSON.stringify(taskJson(next), null, 2));
    else if (already) console.log(`Task ${next.id} is already ${next.state}: nothing to cancel.`);
    else console.log(`Cancelled task ${next.id} on server '${next.server}'.`);
    return EXIT.ok;
  });
}

function print(record: TaskRecord, options: TasksOptions): void {
  if (options.json) {
    console.log(JSON.stringify(taskJson(record), null, 2));
    return;
  }
  for (const line of taskDetail(record)) console.log(line);
}

/**
 * Finds the task, connects its server (only when `ask`, or when the task is not over),
 * and runs `work`; the registry is closed after.
 */
async function withTask(
  id: string,
  options: TasksOptions,
  ask: boolean,
  work: (record: TaskRecord, request: TaskRequestOptions) => Promise<number>,
): Promise<number> {
  let registry: LazyTaskRegistry | undefined;
  let record: TaskRecord | undefined;
  try {
    return await withServers(options, async ({ runtime, manager, signal }) =>
      await work(record!, {
        manager,
        registry: registry!,
        redactor: runtime.logger.redactor,
        signal,
      }), async (names, runtime) => {
      registry = registryOf(runtime);
      record = await findTask(registry, id);
      // A task whose outcome is recorded needs no server to print it.
      if (!ask && hasOutcome(record)) return [];
      return names.filter((name) => name === record!.server);
    });
  } finally {
    await registry?.close();
  }
}
