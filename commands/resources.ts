/**
 * `patchbay resources [server] [--json]`: the resources and resource templates of every
 * connected server, or of the one named (as `tools <server>`).
 *
 * @module
 */

import { EXIT } from "../lib/errors.ts";
import { formatResources } from "../lib/ui/listing.ts";
import { stdoutStyle } from "../lib/terminal/style.ts";
import { type ScriptOptions, statesJson, withServers } from "./_connect.ts";
import { only } from "./tools.ts";

/** Lists resources. */
export function resources(server: string | undefined, options: ScriptOptions): Promise<number> {
  return withServers(options, ({ manager, states, failed }) => {
    const list = manager.resources().filter((r) => !server || r.server === server);
    const templates = manager.resourceTemplates().filter((t) => !server || t.server === server);
    if (options.json) {
      console.log(
        JSON.stringify({ servers: statesJson(states), resources: list, templates }, null, 2),
      );
    } else if (list.length + templates.length > 0) {
      console.log(formatResources(list, templates, stdoutStyle()).join("\n"));
    } else {
      console.error(
        server ? `${server} offers no resources.` : "No connected server offers resources.",
      );
    }
    return Promise.resolve(failed.length > 0 ? EXIT.failure : EXIT.ok);
  }, server ? (names) => only(server, names) : undefined);
}
