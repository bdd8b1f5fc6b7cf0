/**
 * The `tasks` group of commands (`patchbay tasks list|get|result|cancel`), declared apart
 * from `_declarations.ts` for its length, like the `mcp` group; the shape of an entry is
 * `lib/cli/command_declaration.ts`.
 *
 * @module
 */

import type { TasksOptions } from "./tasks.ts";
import { action, type CommandDeclaration } from "../lib/cli/command_declaration.ts";

const jsonText = { flags: "--json", description: "print JSON instead of text" };

/** `patchbay tasks`. */
export const TASKS: CommandDeclaration = {
  name: "tasks",
  description: "MCP tasks patchbay started: list them, ask for one's status or result, " +
    "cancel one",
  prefetch: () => import("./tasks.ts"),
  commands: [
    {
      name: "list",
      default: true,
      wordsAreCommands: true,
      description: "list the tasks running or over within a day (--all: every recorded one)",
      options: [jsonText, { flags: "-a, --all", description: "list every recorded task" }],
      needs: "servers",
      run: action(async (options: TasksOptions) => (await import("./tasks.ts")).tasksList(options)),
    },
    {
      name: "get",
      arguments: [{ name: "<id>", description: "a task id (a prefix is enough)" }],
      description: "ask the task's server for its status",
      options: [jsonText],
      needs: "servers",
      run: action(async (options: TasksOptions, [id]: [string]) =>
        (await import("./tasks.ts")).tasksGet(id, options)
      ),
    },
    {
      name: "result",
      arguments: [{ name: "<id>", description: "a task id (a prefix is enough)" }],
      description: "print the task's result, waiting while it runs (exit code 1 if it " +
        "failed)",
      options: [jsonText],
      needs: "servers",
      run: action(async (options: TasksOptions, [id]: [string]) =>
        (await import("./tasks.ts")).tasksResult(id, options)
      ),
    },
    {
      name: "cancel",
      arguments: [{ name: "<id>", description: "a task id (a prefix is enough)" }],
      description: "cancel the task on its server",
      options: [jsonText],
      needs: "servers",
      run: action(async (options: TasksOptions, [id]: [string]) =>
        (await import("./tasks.ts")).tasksCancel(id, options)
      ),
    },
  ],
};
