/**
 * `patchbay resources [--json]`: the resources and resource templates of every
 * connected server.
 *
 * @module
 */

import { EXIT } from "../lib/errors.ts";
import { formatResources } from "../lib/ui/listing.ts";
import { stdoutStyle } from "../lib/style.ts";
import { type ScriptOptions, statesJson, withServers } from "./_connect.ts";

/** Lists resources. */
export function resources(options: ScriptOptions): Promise<number> {
  return withServers(options, ({ manager, states, failed }) => {
    const list = manager.resources();
    const templates = manager.resourceTemplates();
    if (options.json) {
      console.log(
        JSON.stringify({ servers: statesJson(states), resources: list, templates }, null, 2),
      );
    } else if (list.length + templates.length > 0) {
      console.log(formatResources(list, templates, stdoutStyle()).join("\n"));
    } else {
      console.error("No connected server offers resources.");
    }
    return Promise.resolve(failed.length > 0 ? EXIT.failure : EXIT.ok);
  });
}
