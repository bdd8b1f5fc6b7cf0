/**
 * `patchbay prompt <name> [k=v ...]`: fills in a server's prompt and prints its messages
 * (`--json`: the server's result), without sending them to the model.
 *
 * @module
 */

import { EXIT, PatchbayError } from "../lib/errors.ts";
import { promptText } from "../lib/ui/listing.ts";
import {
  missingArguments,
  parseKeyValues,
  resolveNamed,
  serverPrefix,
} from "../lib/session/resolve.ts";
import { stripTerminalEscapes } from "../lib/terminal/terminal.ts";
import { type ScriptOptions, withServers } from "./_connect.ts";
import { USAGE_STEPS } from "../lib/errors/usage_steps.ts";

/** Gets a prompt. */
export function prompt(spec: string, words: string[], options: ScriptOptions): Promise<number> {
  const values = parseKeyValues(words.join(" "));
  return withServers(options, async ({ manager, signal }) => {
    // A prompt of a disabled server is that server's state (and how to enable it), as for
    // `call`, rather than an unknown prompt.
    const named = serverPrefix(spec, manager.states().map((st) => st.name));
    const away = named && !manager.prompts().some((p) => p.server === named)
      ? manager.unavailable(named)
      : undefined;
    if (away) throw away;
    const found = resolveNamed("prompt", spec, manager.prompts());
    // The prompt's own declaration says what it needs: a missing argument is caught here,
    // in patchbay's words, rather than as the server's validation error.
    const missing = missingArguments(found, values);
    if (missing.length > 0) {
      throw new PatchbayError(
        "usage",
        `Usage: patchbay prompt ${spec} ${missing.map((name) => `${name}=…`).join(" ")}`,
        {
          reason: `the prompt ${found.name} of server '${found.server}' requires ` +
            `${missing.join(", ")}, which ${missing.length === 1 ? "was" : "were"} not given`,
          remedy: USAGE_STEPS.promptArguments,
          exitCode: EXIT.usage,
        },
      );
    }
    const result = await manager.getPrompt(found.server, found.name, values, { signal });
    if (options.json) console.log(JSON.stringify({ server: found.server, ...result }, null, 2));
    else console.log(stripTerminalEscapes(promptText(result)));
    return EXIT.ok;
  });
}
