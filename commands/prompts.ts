/**
 * `patchbay prompts [server] [--json]`: the prompts of every connected server, or of the
 * one named (as `tools <server>`).
 *
 * @module
 */

import { EXIT } from "../lib/errors.ts";
import { formatPrompts } from "../lib/ui/listing.ts";
import { stdoutStyle } from "../lib/terminal/style.ts";
import { type ScriptOptions, statesJson, withServers } from "./_connect.ts";
import { terminalColumns } from "../lib/terminal/terminal.ts";
import { only } from "./tools.ts";

/** Lists prompts. */
export function prompts(server: string | undefined, options: ScriptOptions): Promise<number> {
  return withServers(options, ({ manager, states, failed }) => {
    const list = manager.prompts().filter((p) => !server || p.server === server);
    if (options.json) {
      console.log(JSON.stringify({ servers: statesJson(states), prompts: list }, null, 2));
    } else if (list.length > 0) {
      console.log(formatPrompts(list, stdoutStyle(), terminalColumns(Deno.stdout)).join("\n"));
    } else {
      console.error(
        server ? `${server} offers no prompts.` : "No connected server offers prompts.",
      );
    }
    return Promise.resolve(failed.length > 0 ? EXIT.failure : EXIT.ok);
  }, server ? (names) => only(server, names) : undefined);
}
