/**
 * `patchbay tools [server] [--json]`: the tools of every connected server. Exit code 1
 * when a server failed to connect (its diagnosis is on stderr, or in the JSON).
 *
 * @module
 */

import { EXIT, UsageError } from "../lib/errors.ts";
import { didYouMean } from "../lib/text/text.ts";
import { formatTools } from "../lib/ui/listing.ts";
import { stderrStyle, stdoutStyle } from "../lib/terminal/style.ts";
import { unmatchedLines, withheldLines } from "../lib/ui/listing.ts";
import { type ScriptOptions, statesJson, withServers } from "./_connect.ts";
import { terminalColumns } from "../lib/terminal/terminal.ts";
import { USAGE_STEPS } from "../lib/errors/usage_steps.ts";

/** Lists tools. */
export function tools(server: string | undefined, options: ScriptOptions): Promise<number> {
  return withServers(options, ({ manager, states, failed }) => {
    const list = manager.tools().filter((t) => !server || t.server === server);
    const withheld = manager.withheld().filter((w) => !server || w.tool.server === server);
    const unmatched = manager.unmatchedPatterns().filter((u) => !server || u.server === server);
    if (options.json) {
      console.log(JSON.stringify(
        {
          servers: statesJson(states),
          tools: list.map((t) => ({
            name: t.name,
            server: t.server,
            tool: t.originalName,
            description: t.description ?? null,
            input_schema: t.inputSchema,
          })),
          withheld: withheld.map((w) => ({
            server: w.tool.server,
            tool: w.tool.originalName,
            reason: w.reason,
          })),
          unmatched_patterns: unmatched,
        },
        null,
        2,
      ));
    } else if (list.length > 0) {
      console.log(formatTools(list, stdoutStyle(), terminalColumns(Deno.stdout)).join("\n"));
    } else {
      // A disabled server offers none because it is off: said, with how to switch it on.
      const off = server && manager.status(server)?.disabled
        ? manager.unavailable(server)
        : undefined;
      console.error(
        off
          ? `${server} offers no tools now: ${off.reason}; ${off.remedy}.`
          : server
          ? `${server} offers no tools.`
          : "No connected server offers tools.",
      );
    }
    if (!options.json) {
      for (const line of withheldLines(withheld)) console.error(stderrStyle().dim(line));
      for (const line of unmatchedLines(unmatched)) {
        console.error(stderrStyle().yellow(`warning: ${line}`));
      }
    }
    return Promise.resolve(failed.length > 0 ? EXIT.failure : EXIT.ok);
  }, server ? (names) => only(server, names) : undefined);
}

/** Just `server`, which must be configured. */
export function only(server: string, names: string[]): string[] {
  if (names.includes(server)) return [server];
  const close = didYouMean(server, names);
  throw new UsageError(
    `unknown server '${server}'${close ? ` (did you mean '${close}'?)` : ""}`,
    USAGE_STEPS.configuredServers(names.join(", ")),
  );
}
