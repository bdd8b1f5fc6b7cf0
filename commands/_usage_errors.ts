/**
 * commander's refusals of a command line (an unknown option, a missing argument, a value
 * outside its choices) as {@linkcode UsageError}s, so that the boundary shows them in the
 * form of every other error (message, cause, remedy; JSON with `--json`) with the usage
 * exit code. Each command's exit hook ({@linkcode failedAt}) notes which command refused.
 *
 * @module
 */

import type { CommanderError } from "commander";
import type { CommandDeclaration } from "./_declarations.ts";
import { UsageError } from "../lib/errors.ts";
import { NAME } from "../lib/version.ts";

/** The command that refused each error, noted by its exit hook. */
const refusedBy = new WeakMap<Error, { declaration: CommandDeclaration; path: string[] }>();

/**
 * The exit hook of the command `path` (commander calls it instead of ending the process):
 * notes the command on the error, then throws it on to `main`.
 */
export function failedAt(
  declaration: CommandDeclaration,
  path: readonly string[] = [],
): (error: CommanderError) => never {
  return (error) => {
    if (!refusedBy.has(error)) refusedBy.set(error, { declaration, path: [...path] });
    throw error;
  };
}

/** commander's `Allowed choices` refusal, to be said in patchbay's words. */
const CHOICES =
  /^command-argument value '(.*)' is invalid for argument '(.*)'\. Allowed choices are (.*)\.$/s;
/** commander's suggestion, on a line of its own. */
const SUGGESTION = /^\(Did you mean (.+)\?\)$/;

/** `error` as the usage error the boundary shows. */
export function commandLineError(error: CommanderError): UsageError {
  const at = refusedBy.get(error);
  const [first, ...rest] = error.message.replace(/^error:\s*/, "").split("\n");
  const choices = CHOICES.exec(first);
  let message = choices
    ? `invalid ${choices[2]} '${choices[1]}': the choices are ${choices[3]}`
    : first.replace(/\.$/, "");
  const suggestion = SUGGESTION.exec(rest.join(" ").trim());
  if (suggestion) message += ` (did you mean '${suggestion[1]}'?)`;
  const own = at?.declaration.helpAfterError?.replace(/^\((.*)\)$/s, "$1");
  const remedy = own ?? `run \`${[NAME, ...at?.path ?? []].join(" ")} --help\` for usage`;
  return new UsageError(message, remedy);
}
