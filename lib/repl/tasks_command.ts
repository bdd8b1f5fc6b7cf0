/**
 * `/tasks`: the MCP tasks patchbay started, from the prompt (docs/tasks.md). `/tasks`
 * lists those running or over within a day, `/tasks all` every recorded one; `/tasks get
 * <id>`, `/tasks result <id>` (waiting while it runs; Ctrl+C stops waiting) and `/tasks
 * cancel <id>` ask the task's server, as `patchbay tasks` does.
 *
 * @module
 */

import { SETTLED_STATES } from "../memory/task_registry.ts";
import { listHeading, taskDetail, taskLine } from "../tasks/format.ts";
import type { TaskRequestOptions } from "../tasks/operations.ts";
import { TaskUnknownError } from "../errors.ts";
import { REPL_STEPS } from "../errors/repl_steps.ts";
import type { ClientSession } from "../session/client_session.ts";
import type { SlashCommand } from "./slash.ts";
import { clean, out, usage } from "./slash_helpers.ts";

const SUBCOMMANDS = ["all", "get", "result", "cancel"] as const;

/** ext-tasks loads with the first request about a task, not with the program. */
const operations = () => import("../tasks/operations.ts");

async function list(s: ClientSession, all: boolean): Promise<void> {
  const { listTasks } = await operations();
  const registry = s.tasks!.tracker.registry;
  const records = await listTasks(registry, { all });
  out(s, listHeading(records, registry.location));
  for (const record of records) out(s, `  ${taskLine(record)}`);
  if (records.length === 0) {
    out(
      s,
      s.style.dim(all ? "  (none)" : "  (none running or over today; /tasks all lists every one)"),
    );
  }
}

function requestOptions(s: ClientSession, signal: AbortSignal): TaskRequestOptions {
  return {
    manager: s.manager,
    registry: s.tasks!.tracker.registry,
    redactor: s.runtime.logger.redactor,
    signal,
  };
}

/** The `/tasks` slash command. */
export const tasksCommand: SlashCommand<ClientSession> = {
  name: "tasks",
  usage: "[all | get <id> | result <id> | cancel <id>]",
  summary: "the MCP tasks tools started: list them, a task's status or result, cancel one",
  complete: async (s, partial) => {
    const words = partial.split(/\s+/);
    if (words.length <= 1) return [...SUBCOMMANDS];
    if (words.length !== 2 || words[0] === "all" || !s.tasks) return [];
    const records = await s.tasks.tracker.registry.list().catch(() => []);
    return records.filter((r) => words[0] !== "cancel" || !SETTLED_STATES.has(r.state))
      .map((r) => r.id);
  },
  async run(s, args) {
    const [word, id] = args.split(/\s+/).filter((w) => w !== "");
    if (!s.tasks) return;
    if (word === undefined || word === "all") return await list(s, word === "all");
    if (!id || !["get", "result", "cancel"].includes(word)) {
      throw usage(`/tasks ${this.usage}`, REPL_STEPS.tasks);
    }
    const { cancelTask, findTask, refreshTask, taskOutcome } = await operations();
    const record = await findTask(s.tasks.tracker.registry, id);
    switch (word) {
      case "get": {
        const next = await s.request(
          `asking ${record.server} about task ${record.id}…`,
          (signal) => refreshTask(record, requestOptions(s, signal)),
        );
        out(s, taskDetail(next).join("\n"));
        return;
      }
      case "result": {
        const next = await s.request(
          `waiting for task ${record.id} (Ctrl+C stops waiting)…`,
          (signal) => taskOutcome(record, requestOptions(s, signal)),
        );
        if (next.state === "unknown") {
          throw new TaskUnknownError(next.server, next.id, next.error ?? "the task is unknown");
        }
        if (next.state !== "completed") out(s, s.style.yellow(`Task ${next.id}: ${next.state}`));
        out(s, clean(next.result ?? next.error ?? ""));
        return;
      }
      case "cancel": {
        const before = record.state;
        const next = await s.request(
          `cancelling task ${record.id}…`,
          (signal) => cancelTask(record, requestOptions(s, signal)),
        );
        out(
          s,
          next.state !== "cancelled" || before === "cancelled"
            ? `Task ${next.id} is already ${next.state}: nothing to cancel.`
            : `Cancelled task ${next.id} on server '${next.server}'.`,
        );
        return;
      }
    }
  },
};
