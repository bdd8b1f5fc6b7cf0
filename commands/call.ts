/**
 * `patchbay call <server>.<tool> ['<json-args>']`: calls one tool without the model and
 * prints its result. Arguments may also come on stdin (`-`). Exit code 1 when the tool
 * reports an error or cannot be called.
 *
 * @module
 */

import { convertToolResult } from "../lib/agent/content.ts";
import { EXIT } from "../lib/errors.ts";
import { parseJsonArgs, resolveTool } from "../lib/repl/resolve.ts";
import { stripTerminalEscapes } from "../lib/terminal.ts";
import { type ScriptOptions, serverPrefix, withServers } from "./_connect.ts";

/** Calls a tool. */
export async function call(
  spec: string,
  json: string | undefined,
  options: ScriptOptions,
): Promise<number> {
  const argsText = json === "-" ? await new Response(Deno.stdin.readable).text() : json ?? "";
  const args = parseJsonArgs(argsText);
  return await withServers(options, async ({ runtime, manager, failed, signal }) => {
    if (failed.length > 0 && manager.tools().length === 0) throw failed[0].error;
    const tool = resolveTool(spec, manager.tools());
    const result = await manager.callTool(tool.name, args, {
      signal,
      timeoutSeconds: runtime.config.agent.toolCallTimeoutSeconds,
    });
    if (options.json) {
      console.log(
        JSON.stringify({ server: tool.server, tool: tool.originalName, ...result }, null, 2),
      );
    } else {
      const text = stripTerminalEscapes(convertToolResult(result, Number.MAX_SAFE_INTEGER).text);
      if (result.isError) console.error(text);
      else console.log(text);
    }
    return result.isError ? EXIT.failure : EXIT.ok;
  }, (names) => {
    // Connect only the server named in `server.tool`, when the name says which.
    const named = serverPrefix(spec, names);
    return named ? [named] : names;
  });
}
