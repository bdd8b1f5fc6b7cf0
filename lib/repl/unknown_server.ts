/**
 * The one wording of a slash command's unknown server name (`/tools`, `/refresh`, `/mcp`,
 * `/trace show`): the name seen, the closest configured one, and every name.
 *
 * @module
 */

import { PatchbayError } from "../errors.ts";
import { REPL_STEPS } from "../errors/repl_steps.ts";
import { stripTerminalEscapes } from "../terminal/terminal.ts";
import { didYouMean } from "../text/text.ts";

/** `Unknown server: <name>`, with a did-you-mean and the configured names. */
export function unknownServer(name: string, names: readonly string[]): PatchbayError {
  const shown = stripTerminalEscapes(name);
  const close = didYouMean(name, [...names]);
  return new PatchbayError("usage", `Unknown server: ${shown}`, {
    reason: `the configuration has no server named "${shown}"` +
      (close ? ` (did you mean '${close}'?)` : ""),
    remedy: REPL_STEPS.servers(...names),
  });
}
