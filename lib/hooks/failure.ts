/**
 * A failed hook as the person reads it: {@linkcode HookFailedError} (row `hook_failed`),
 * with a remedy that fits the failure where one is more precise than the row's (a program
 * not found, not executable, not granted by Deno's sandbox).
 *
 * @module
 */

import { denoPermissionRemedy } from "../deno_permission/remedy.ts";
import { HookFailedError } from "../errors.ts";
import { ROWS } from "../errors/failure_table.ts";
import { showControls } from "../terminal/terminal.ts";
import { abridge } from "../text/text.ts";
import type { HookFailure } from "./answer.ts";
import type { HookCommand, HookEvent } from "./types.ts";
import { AGENT_STEPS } from "../errors/agent_steps.ts";

/** Characters of a hook's command line shown in its messages. */
const SHOWN_COMMAND_CHARS = 80;

/** `hook`'s command line as messages show it: one line, escapes visible, abridged. */
export function shownCommand(hook: HookCommand): string {
  return abridge(showControls(hook.command), SHOWN_COMMAND_CHARS);
}

/** The error of a hook that failed; `what` names what it ran for (`everything/echo`). */
export function hookFailedError(
  event: HookEvent,
  hook: HookCommand,
  failure: HookFailure,
  what?: string,
): HookFailedError {
  const cause = `${failure.cause}${what ? ` (it ran for ${what})` : ""}`;
  return new HookFailedError(event, shownCommand(hook), cause, remedyOf(hook, failure));
}

/** The error of a hook that rewrote a tool's input into one the tool refuses. */
export function invalidInputError(
  hook: HookCommand,
  what: string,
  problem: string,
): HookFailedError {
  return new HookFailedError(
    "PreToolUse",
    shownCommand(hook),
    `it rewrote the input of ${what} (updatedInput) into one the tool's input schema ` +
      `refuses: ${problem}; the call was not made`,
    AGENT_STEPS.hookInputRefused,
  );
}

function remedyOf(hook: HookCommand, failure: HookFailure) {
  const run = failure.run;
  if (run.kind === "not_started") {
    if (run.error instanceof Deno.errors.NotCapable) {
      return denoPermissionRemedy(`--allow-run=${run.program}`);
    }
    if (run.error instanceof Deno.errors.NotFound) {
      return AGENT_STEPS.hookNotFound(run.program, hook.folder);
    }
    if (run.error instanceof Deno.errors.PermissionDenied) {
      return AGENT_STEPS.hookNotExecutable(run.program);
    }
  }
  if (failure.kind === "timeout") {
    return AGENT_STEPS.hookTimeout(hook.timeoutSeconds);
  }
  return ROWS.hook_failed.remedy;
}
