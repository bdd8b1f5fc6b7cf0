/**
 * `patchbay call <server>.<tool> ['<json-args>']`: calls one tool without the model and
 * prints its result. Arguments may also come on stdin (`-`). Exit code 1 when the tool
 * reports an error or cannot be called; 4 when it ran as an MCP task that was still running
 * when `tool_call_timeout` passed (the task goes on; `patchbay tasks result <id>` fetches it).
 * The `PreToolUse` and `PostToolUse` hooks run around the call (docs/hooks.md): a refusal is
 * the command's error, and a hook's question is asked at the terminal (declined without one).
 *
 * @module
 */

import process from "node:process";
import { convertToolResult } from "../lib/agent/content.ts";
import { saveImage } from "../lib/agent/image_store.ts";
import { type SavedItem, savedLine, saveResultMedia } from "../lib/agent/result_media.ts";
import {
  afterDirectCall,
  beforeDirectCall,
  type DirectCallHooks,
  directCallId,
} from "../lib/agent/direct_call_hooks.ts";
import { errorResultFailure, thrownFailure } from "../lib/agent/tool_failure.ts";
import { CancelledError, EXIT, remedyFor } from "../lib/errors.ts";
import {
  NameResolutionError,
  parseJsonArgs,
  resolveTool,
  serverPrefix,
} from "../lib/session/resolve.ts";
import { showName } from "../lib/text/names.ts";
import type { CatalogueTool } from "../lib/connections/types.ts";
import { Hooks } from "../lib/hooks/hooks.ts";
import type { Runtime } from "../lib/cli/startup.ts";
import { stderrStyle } from "../lib/terminal/style.ts";
import { showControls, stripTerminalEscapes } from "../lib/terminal/terminal.ts";
import { abridge } from "../lib/text/text.ts";
import type { TaskProgress } from "../lib/connections/tasks/task_types.ts";
import { PENDING_META } from "../lib/tasks/notes.ts";
import { commandTaskRegistry } from "../lib/tasks/open.ts";
import { progressLine } from "../lib/tasks/progress_line.ts";
import { TaskTracker } from "../lib/tasks/tracker.ts";
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
    const tool = withSamplingNote(
      spec,
      () => resolveTool(spec, manager.tools(), manager.withheld()),
    );
    const { toolCallTimeoutSeconds } = runtime.config.agent;
    // A tool run as an MCP task is recorded (`patchbay tasks`); its statuses go to stderr.
    const registry = commandTaskRegistry(runtime.config.memory, runtime.env, {
      log: runtime.logger.child("tasks"),
      redactor: runtime.logger.redactor,
    });
    const tracker = new TaskTracker({
      registry,
      manager,
      redactor: runtime.logger.redactor,
      log: runtime.logger.child("tasks"),
      surface: "script",
      follows: false,
    });
    manager.setTaskTracking(tracker);
    let shown = "";
    const onTask = (progress: TaskProgress) => {
      const line = progressLine(progress);
      const key = `${progress.status}${progress.statusMessage ?? ""}`;
      if (key !== shown) console.error(stripTerminalEscapes(line));
      shown = key;
    };
    const hooks = callHooks(runtime, tool, signal);
    const callId = directCallId();
    const args = await beforeDirectCall(tool, given, callId, hooks);
    let result;
    try {
      result = await manager.callTool(tool.name, args, {
        signal,
        toolCallTimeoutSeconds,
        onTask,
      });
    } catch (error) {
      if (error instanceof CancelledError || signal.aborted) throw error;
      // Worded as in a model turn: server/tool names, cause, a remedy for this command.
      throw thrownFailure(tool, error, {
        toolCallTimeoutSeconds,
        surface: "script",
        stillOffered: manager.tools().some((t) => t.name === tool.name),
      }).error;
    } finally {
      await tracker.close();
      await registry.close();
    }
    await afterDirectCall(tool, args, callId, result, hooks);
    // Still running when tool_call_timeout passed: the note says how to fetch the result.
    const pending = result._meta?.[PENDING_META] !== undefined;
    const converted = convertToolResult(result, Number.MAX_SAFE_INTEGER);
    const text = stripTerminalEscapes(converted.text);
    const failure = result.isError ? errorResultFailure(tool, text, "script") : undefined;
    // Images and other binary data are saved, as in a model turn; the text only names them.
    const saved = await saveResultMedia(converted, saveImage);
    const where = `${stripTerminalEscapes(tool.server)} › ${showName(tool.originalName)}`;
    if (options.json) {
      console.log(
        JSON.stringify(
          {
            server: tool.server,
            tool: tool.originalName,
            ...result,
            ...(failure ? { error: errorJson(failure.error) } : {}),
            ...(saved.some((s) => s.path) ? { saved: savedJson(saved) } : {}),
          },
          null,
          2,
        ),
      );
      return result.isError ? EXIT.failure : EXIT.ok;
    }
    for (const { item, path, error } of saved) {
      if (path) console.error(stderrStyle().dim(savedLine(item, where, path)));
      else {
        console.error(
          stderrStyle().yellow(`warning: could not save the ${item.mimeType} data: ${error}`),
        );
      }
    }
    if (failure) {
      throw failure.error;
    } else {
      console.log(text);
    }
    return result.isError ? EXIT.failure : pending ? EXIT.taskPending : EXIT.ok;
  }, (names) => {
    // Connect only the server named in `server.tool`, when the name says which.
    const named = serverPrefix(spec, names);
    return named ? [named] : names;
  });
}

/** Where each saved image or file went, for `--json`. */
function savedJson(saved: readonly SavedItem[]) {
  return saved.filter((s) => s.path).map(({ item, kind, path }) => ({
    kind,
    mime_type: item.mimeType,
    bytes: item.bytes,
    path,
  }));
}

/**
 * `find()`, whose unknown tool `spec` also says that `call` declares no sampling (it loads
 * no model): servers that offer a tool only to clients that can sample hide it here.
 */
function withSamplingNote<T>(spec: string, find: () => T): T {
  try {
    return find();
  } catch (error) {
    if (!(error instanceof NameResolutionError) || !/^no connected server/.test(error.reason)) {
      throw error;
    }
    throw new NameResolutionError(
      "tool",
      spec,
      `${error.reason}; \`call\` loads no model, so it does not offer servers sampling, and ` +
        "some servers leave out the tools that need it (`patchbay run` offers sampling)",
      remedyFor(error, "script"),
    );
  }
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
      const { LineEditor } = await import("../lib/terminal/line_editor.ts");
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
