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
import { HOOK_SHELL, parseHookCommand } from "../hooks/command_line.ts";
import type { Environment } from "../env.ts";
import { hookCommands, type HooksConfig } from "../hooks/types.ts";
import { KILL_PROGRAM } from "../transports/process.ts";

/** A program to allow, and why (a `run` grant of the plan). */
export interface RunGrant {
  kind: "run";
  value: string;
  why: string;
}

/** What {@linkcode hookGrants} reads of the plan's inputs (`plan.ts`). */
export interface HookGrantInputs {
  env: Environment;
  /** The plan's command lookup: the path Deno checks, or `undefined` when not found. */
  resolveCommand(command: string, searchPath: string | undefined, cwd: string): string | undefined;
  cwd: string;
}

/** The grants and notes `hooks` need. */
export function hookGrants(
  hooks: HooksConfig | undefined,
  inputs: HookGrantInputs,
): { grants: RunGrant[]; notes: string[] } {
  const grants: RunGrant[] = [];
  const notes: string[] = [];
  const commands = hookCommands(hooks);
  if (commands.length === 0) return { grants, notes };
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
    grants.push({ kind: "run", value: path ?? program, why });
    if (line.kind === "shell") shellLines.push(shown);
    if (!path) {
      notes.push(
        `'${program}' (the ${event} hook ${shown}) is not found from ${hook.folder} on the PATH ` +
          "hooks get; Deno allows a command by the file it resolves to, so install it (or fix " +
          '"command") and run `patchbay permissions` again.',
      );
    }
  }
  grants.push({
    kind: "run",
    value: inputs.resolveCommand(KILL_PROGRAM, inputs.env.get("PATH"), inputs.cwd) ?? KILL_PROGRAM,
    why: "ends what a hook started when it runs past its timeout (its process group)",
  });
  if (shellLines.length > 0) {
    notes.push(
      `Hooks with shell syntax (${shellLines.join(", ")}) run with sh -c, so sh is granted, ` +
        "and a shell can start any program: --allow-run cannot narrow what such a hook runs. " +
        "Write a hook as a program and its arguments (a script file with a #! line) to grant " +
        "only that program.",
    );
  }
  return { grants, notes };
}
