/**
 * `patchbay prompts [--json]`: the prompts of every connected server.
 *
 * @module
 */

import { EXIT } from "../lib/errors.ts";
import { formatPrompts } from "../lib/ui/listing.ts";
import { stdoutStyle } from "../lib/style.ts";
import { type ScriptOptions, statesJson, withServers } from "./_connect.ts";
import { terminalColumns } from "../lib/terminal.ts";

/** Lists prompts. */
export function prompts(options: ScriptOptions): Promise<number> {
  return withServers(options, ({ manager, states, failed }) => {
    const list = manager.prompts();
    if (options.json) {
      console.log(JSON.stringify({ servers: statesJson(states), prompts: list }, null, 2));
    } else if (list.length > 0) {
      console.log(formatPrompts(list, stdoutStyle(), terminalColumns(Deno.stdout)).join("\n"));
    } else {
      console.error("No connected server offers prompts.");
    }
    return Promise.resolve(failed.length > 0 ? EXIT.failure : EXIT.ok);
  });
}
