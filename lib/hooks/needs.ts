/**
 * What the configuration's hooks need from Deno's sandbox (docs/hooks.md): each command is
 * granted like a stdio server's, by the file its program resolves to, from the folder the
 * hook runs in and on the PATH hooks get. A line that needs a shell runs as `sh -c`, so
 * `sh` is granted instead, and a note says what that means: the shell may start any
 * program, which `--allow-run` cannot narrow. Ending a hook's process group needs the
 * `kill` program, as for stdio servers.
 *
 * @module
 */

import { resolve } from "node:path";
import type { Config } from "../config/types.ts";
import type { MachineFacts, NeedsSink } from "../deno_permission/needs.ts";
import { HOOK_SHELL, parseHookCommand } from "./command_line.ts";
import { hookCommands } from "./types.ts";
import { KILL_PROGRAM } from "../transports/process.ts";

/** What {@linkcode hookNeeds} reads of the plan's inputs. */
export interface HookNeedsInputs extends MachineFacts {
  config: Pick<Config, "hooks">;
}

/** Adds what the configuration's hooks need: their programs, `kill`, and notes. */
export function hookNeeds(plan: NeedsSink, inputs: HookNeedsInputs): void {
  const commands = hookCommands(inputs.config.hooks);
  if (commands.length === 0) return;
  const shellLines: string[] = [];
  for (const { event, hook } of commands) {
    const searchPath = hook.env.PATH ?? inputs.env.get("PATH");
    const line = parseHookCommand(hook.command, hook.folder);
    const written = line.kind === "program" ? line.argv[0] : HOOK_SHELL;
    const program = line.kind === "program" && written.includes("/")
      ? resolve(hook.folder, written)
      : written;
    const path = inputs.resolveCommand(program, searchPath, hook.folder);
    const shown = JSON.stringify(
      hook.command.length > 60 ? `${hook.command.slice(0, 59)}…` : hook.command,
    );
    const why = line.kind === "program"
      ? `runs the ${event} hook ${shown}`
      : `runs the ${event} hook ${shown} through sh -c (it has ${line.why})`;
    plan.add("run", path ?? program, why);
    if (line.kind === "shell") shellLines.push(shown);
    if (!path) {
      plan.note(
        `'${program}' (the ${event} hook ${shown}) is not found from ${hook.folder} on the PATH ` +
          "hooks get; Deno allows a command by the file it resolves to, so install it (or fix " +
          '"command") and run `patchbay permissions` again.',
      );
    }
  }
  plan.add(
    "run",
    inputs.resolveCommand(KILL_PROGRAM, inputs.env.get("PATH"), inputs.cwd) ?? KILL_PROGRAM,
    "ends what a hook started when it runs past its timeout (its process group)",
  );
  if (shellLines.length > 0) {
    plan.note(
      `Hooks with shell syntax (${shellLines.join(", ")}) run with sh -c, so sh is granted, ` +
        "and a shell can start any program: --allow-run cannot narrow what such a hook runs. " +
        "Write a hook as a program and its arguments (a script file with a #! line) to grant " +
        "only that program.",
    );
  }
}
