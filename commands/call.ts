/**
 * `patchbay call <server>.<tool> ['<json-args>']`: calls one tool without the model and
 * prints its result. Arguments may also come on stdin (`-`). Exit code 1 when the tool
 * reports an error or cannot be called. The `PreToolUse` and `PostToolUse` hooks run
 * around the call (docs/hooks.md): a refusal is the command's error, and a hook's question
 * is asked at the terminal (declined without one).
 *
 * @module
 */

import process from "node:process";
import { convertToolResult } from "../lib/agent/content.ts";
import {
  afterDirectCall,
  beforeDirectCall,
  type DirectCallHooks,
  directCallId,
} from "../lib/agent/direct_call_hooks.ts";
import { errorResultFailure, thrownFailure } from "../lib/agent/tool_failure.ts";
import type { CatalogueTool } from "../lib/connections/types.ts";
import { CancelledError, EXIT } from "../lib/errors.ts";
import { Hooks } from "../lib/hooks/hooks.ts";
import { parseJsonArgs, resolveTool, serverPrefix } from "../lib/repl/resolve.ts";
import type { Runtime } from "../lib/startup.ts";
import { stderrStyle } from "../lib/style.ts";
import { showControls, stripTerminalEscapes } from "../lib/terminal.ts";
import { abridge } from "../lib/text.ts";
import { errorJson } from "./_boundary.ts";
import { type ScriptOptions, withServers } from "./_connect.ts";

/** Calls a tool. */
export async function call(
  spec: string,
  json: string | undefined,
  options: ScriptOptions,
): Promise<number> {
  const argsText = json === "-" ? await new Response(Deno.stdin.readable).text() : json ?? "";
  const given = parseJsonArgs(argsText);
  return await withServers(options, async ({ runtime, manager, failed, signal }) => {
    if (failed.length > 0 && manager.tools().length === 0) throw failed[0].error;
    // A tool of a disabled server is that server's state (and how to enable it), as in the
    // interactive client's /call, rather than an unknown tool.
    const named = serverPrefix(spec, manager.states().map((st) => st.name));
    const away = named && !manager.tools().some((t) => t.server === named)
      ? manager.unavailable(named)
      : undefined;
    if (away) throw away;
    const tool = resolveTool(spec, manager.tools(), manager.withheld());
    const { toolCallTimeoutSeconds } = runtime.config.agent;
    const hooks = callHooks(runtime, tool, signal);
    const callId = directCallId();
    const args = await beforeDirectCall(tool, given, callId, hooks);
    let result;
    try {
      result = await manager.callTool(tool.name, args, { signal, toolCallTimeoutSeconds });
    } catch (error) {
      if (error instanceof CancelledError || signal.aborted) throw error;
      // Worded as in a model turn: server/tool names, cause, a remedy for this command.
      throw thrownFailure(tool, error, {
        toolCallTimeoutSeconds,
        surface: "script",
        stillOffered: manager.tools().some((t) => t.name === tool.name),
      }).error;
    }
    await afterDirectCall(tool, args, callId, result, hooks);
    const text = stripTerminalEscapes(convertToolResult(result, Number.MAX_SAFE_INTEGER).text);
    const failure = result.isError ? errorResultFailure(tool, text, "script") : undefined;
    if (options.json) {
      console.log(
        JSON.stringify(
          {
            server: tool.server,
            tool: tool.originalName,
            ...result,
            ...(failure ? { error: errorJson(failure.error) } : {}),
          },
          null,
          2,
        ),
      );
    } else if (failure) {
      throw failure.error;
    } else {
      console.log(text);
    }
    return result.isError ? EXIT.failure : EXIT.ok;
  }, (names) => {
    // Connect only the server named in `server.tool`, when the name says which.
    const named = serverPrefix(spec, names);
    return named ? [named] : names;
  });
}

/** The hooks of the call: what they say goes to stderr, their questions to the terminal. */
function callHooks(runtime: Runtime, tool: CatalogueTool, signal: AbortSignal): DirectCallHooks {
  const style = stderrStyle();
  const sessionId = crypto.randomUUID();
  return {
    hooks: new Hooks(runtime.config.hooks, {
      context: { sessionId: () => sessionId },
      parentEnv: (name) => runtime.env.get(name),
      log: runtime.logger.child("hooks"),
      redact: (text) => runtime.logger.redactor.redact(text),
    }),
    surface: "script",
    signal,
    tell: ({ level, text }) =>
      console.error(
        level === "warning"
          ? style.yellow(`warning: ${stripTerminalEscapes(text)}`)
          : style.dim(stripTerminalEscapes(text)),
      ),
    ask: async (reason, args) => {
      const heading = `${style.yellow("?")} Run ${
        style.bold(`${showControls(tool.server)} › ${showControls(tool.originalName)}`)
      } (${abridge(showControls(reason), 300)})\n    ${
        style.dim(abridge(showControls(JSON.stringify(args)), 400))
      }\n`;
      if (!Deno.stdin.isTerminal() || !Deno.stderr.isTerminal()) {
        console.error(
          heading +
            style.dim(
              "    no one to ask: declined (a hook's question needs a person at a terminal)",
            ),
        );
        return false;
      }
      const { LineEditor } = await import("../lib/repl/line_editor.ts");
      const editor = new LineEditor({ output: process.stderr });
      try {
        const question = `${heading}    [y]es  [n]o  (default No) `;
        return await editor.choose(question, ["y", "n"], "n", "n", signal) === "y";
      } finally {
        editor.close();
      }
    },
  };
}
