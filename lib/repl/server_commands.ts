/**
 * The slash commands about the servers and what they offer: `/tools`, `/connections`,
 * `/refresh`, `/prompts`, `/prompt`, `/resources`, `/resource` and `/call`.
 *
 * @module
 */

import type { CallToolResult } from "@modelcontextprotocol/client";
import { convertToolResult } from "../agent/content.ts";
import { isPending, progressOf } from "../connections/progress.ts";
import type { ServerStatus } from "../connections/types.ts";
import { CancelledError } from "../errors.ts";
import { REPL_STEPS } from "../errors/repl_steps.ts";
import { errorResultFailure, thrownFailure } from "../agent/tool_failure.ts";
import {
  afterDirectCall,
  beforeDirectCall,
  type DirectCallHooks,
  directCallId,
} from "../agent/direct_call_hooks.ts";
import type { CatalogueTool } from "../connections/types.ts";
import { abridge } from "../text/text.ts";
import {
  formatPrompts,
  formatResourceContents,
  formatResources,
  formatTools,
  unmatchedLines,
  withheldLines,
} from "../ui/listing.ts";
import {
  missingArguments,
  parseJsonArgs,
  parseKeyValues,
  resolveNamed,
  resolveTool,
  resourceServer,
  serverPrefix,
  splitServerUri,
} from "../session/resolve.ts";
import { describeChanges, reloadConfiguration } from "./reload.ts";
import { sendPrompt } from "./server_prompts.ts";
import { keepCallMedia } from "./call_media.ts";
import type { ClientSession } from "../session/client_session.ts";
import type { SlashCommand } from "./slash.ts";
import { formatDuration } from "../ui/terminal_ui.ts";
import { showName } from "../text/names.ts";
import { transportChoice } from "../config/servers.ts";
import { clean, out, outVerbatim, serverNames, unknownServer, usage } from "./slash_helpers.ts";
import { terminalColumns } from "../terminal/terminal.ts";

type Command = SlashCommand<ClientSession>;

/** `/tools [server]`: the tools, grouped by server, and the servers missing. */
export const toolsCommand: Command = {
  name: "tools",
  usage: "[server]",
  summary: "list the tools, grouped by server, with their required arguments",
  complete: (s) => serverNames(s),
  run(s, args) {
    const tools = s.manager.tools().filter((t) => !args || t.server === args);
    if (args && !serverNames(s).includes(args)) throw unknownServer(s, args);
    // Servers not connected (yet) are named, so an empty list is not mistaken for none.
    const away = s.manager.states().filter((st) =>
      !st.disabled && st.state !== "connected" && (!args || st.name === args)
    );
    if (tools.length > 0) {
      out(s, formatTools(tools, s.style, terminalColumns(Deno.stdout)).join("\n"));
    } else if (away.length === 0) {
      // A disabled server offers none because it is off: said, with how to switch it on.
      const off = args && s.manager.status(args)?.disabled
        ? s.manager.unavailable(args)
        : undefined;
      out(
        s,
        off
          ? `${args} offers no tools now: ${off.reason}; ${off.remedy}.`
          : args
          ? `${args} offers no tools.`
          : "No tools: no connected server offers any (see /connections).",
      );
    }
    for (const st of away) out(s, awayLine(s, st));
    const withheld = s.manager.withheld().filter((w) => !args || w.tool.server === args);
    for (const line of withheldLines(withheld)) out(s, s.style.dim(line));
    const unmatched = s.manager.unmatchedPatterns().filter((u) => !args || u.server === args);
    for (const line of unmatchedLines(unmatched)) out(s, s.style.yellow(`warning: ${line}`));
    return Promise.resolve();
  },
};

/** `/connections`: each server's transport, target, state and what it offers. */
export const connectionsCommand: Command = {
  name: "connections",
  summary: "each server: transport, target, state, what it offers, last error and remedy",
  run(s) {
    out(s, s.renderServers(s.style));
    for (const status of s.manager.states()) {
      const info = status.serverInfo
        ? `${showName(status.serverInfo.name)} ${showName(status.serverInfo.version)}`
        : "";
      const protocol = status.protocolVersion ? `protocol ${status.protocolVersion}` : "";
      out(
        s,
        s.style.dim(
          `  ${clean(status.name)}: ${status.transport} ${clean(status.target)}${
            info ? ` · ${info}` : ""
          }${
            protocol ? ` · ${protocol}` : ""
          } · ${status.state} since ${status.since.toLocaleTimeString()}`,
        ),
      );
      if (status.transportReason) {
        out(s, s.style.dim(`    ${transportChoice(status.transport, status.transportReason)}`));
      }
    }
    return Promise.resolve();
  },
};

/** `/refresh [server]`: reconnect one server, or read the configuration again. */
export const refreshCommand: Command = {
  name: "refresh",
  usage: "[server]",
  summary: "reconnect servers and list their tools, prompts and resources again",
  complete: (s) => serverNames(s),
  async run(s, args) {
    if (args && !serverNames(s).includes(args)) throw unknownServer(s, args);
    const off = args && s.manager.status(args)?.disabled ? s.manager.unavailable(args) : undefined;
    // A disabled server is not connected by a refresh: said, with how to switch it on.
    if (off) out(s, `${args} was not refreshed: ${off.reason}; ${off.remedy}.`);
    else if (args) await s.refresh(args);
    else {
      // The whole refresh reads the configuration again (lib/repl/reload.ts).
      const outcome = await reloadConfiguration(s);
      if (outcome.kind === "restart") {
        s.restartRequested = true;
        return "exit";
      }
      // invalid or held: the servers stay as they were, said so; not reconnected either.
      if (outcome.kind === "applied") out(s, s.style.dim(describeChanges(outcome.changes)));
    }
    out(s, s.renderServers(s.style));
  },
};

/** `/prompts`: the servers' prompts and their arguments. */
export const promptsCommand: Command = {
  name: "prompts",
  summary: "list the servers' prompts and their arguments",
  run(s) {
    const prompts = s.manager.prompts();
    if (prompts.length === 0) out(s, "No prompts: no connected server offers any.");
    else out(s, formatPrompts(prompts, s.style, terminalColumns(Deno.stdout)).join("\n"));
    return Promise.resolve();
  },
};

/** `/prompt <name> [k=v ...]`: a server's prompt filled in and sent to the model. */
export const promptCommand: Command = {
  name: "prompt",
  usage: "<name> [k=v ...]",
  summary: "fill in a server's prompt and send it to the model",
  complete: (s, partial) => completePrompt(s, partial),
  async run(s, args) {
    const [spec, ...rest] = args.split(/\s+/);
    if (!spec) throw usage("/prompt <name> [k=v ...]", REPL_STEPS.promptNames);
    const prompt = resolveNamed("prompt", spec, s.manager.prompts());
    const values = parseKeyValues(rest.join(" "));
    const missing = missingArguments(prompt, values);
    if (missing.length > 0) {
      throw usage(
        `/prompt ${spec} ${missing.map((m) => `${m}=…`).join(" ")}`,
        REPL_STEPS.required(...missing),
      );
    }
    await sendPrompt(s, prompt, values);
  },
};

/** `/resources`: the servers' resources and resource templates. */
export const resourcesCommand: Command = {
  name: "resources",
  summary: "list the servers' resources and resource templates",
  run(s) {
    const resources = s.manager.resources();
    const templates = s.manager.resourceTemplates();
    if (resources.length + templates.length === 0) {
      out(s, "No resources: no connected server offers any.");
    } else {
      out(s, formatResources(resources, templates, s.style).join("\n"));
    }
    return Promise.resolve();
  },
};

/** `/resource [server] <uri>`: a resource shown as the server sent it. */
export const resourceCommand: Command = {
  name: "resource",
  usage: "[server] <uri>",
  summary: "read a resource and show it exactly as the server sent it",
  complete: (s) => s.manager.resources().map((r) => r.uri),
  async run(s, args) {
    const words = args.split(/\s+/).filter(Boolean);
    if (words.length === 0) {
      throw usage("/resource [server] <uri>", REPL_STEPS.resourceUris);
    }
    const resources = s.manager.resources();
    const templates = s.manager.resourceTemplates();
    // `server:uri` names its server, as `@server:uri` does in a message.
    const named = words.length === 1
      ? splitServerUri(words[0], s.manager.states().map((st) => st.name), resources, templates)
      : undefined;
    const uri = named?.uri ?? words.at(-1)!;
    const server = named?.server ??
      (words.length > 1 ? words[0] : resourceServer(uri, resources, templates));
    const result = await s.request(
      `reading ${uri}…`,
      (signal) => s.manager.readResource(server, uri, { signal }),
    );
    outVerbatim(s, formatResourceContents(result, s.style).join("\n"));
  },
};

/** `/call <tool> <json-args>`: a tool called without the model. */
export const callCommand: Command = {
  name: "call",
  usage: "<tool> <json-args>",
  summary: "call a tool directly, without the model, and show its result",
  complete: (s) => s.manager.tools().map((t) => `${t.server}.${t.originalName}`),
  async run(s, args) {
    const space = args.search(/\s/);
    const spec = space < 0 ? args : args.slice(0, space);
    const json = space < 0 ? "" : args.slice(space + 1).trim();
    if (!spec) {
      throw usage("/call <tool> <json-args>", REPL_STEPS.callExample);
    }
    const tool = resolveCallTool(s, spec);
    const callId = directCallId();
    const hooks = callHooks(s, tool, callId);
    const toolArgs = await beforeDirectCall(tool, parseJsonArgs(json), callId, hooks);
    const started = performance.now();
    const { toolCallTimeoutSeconds } = s.runtime.config.agent;
    const header = (ok: boolean) =>
      out(
        s,
        `${ok ? s.style.green("✓") : s.style.red("✗ error")} ${clean(tool.server)} › ${
          clean(tool.originalName)
        } ${s.style.dim(formatDuration(performance.now() - started))}`,
      );
    let result: CallToolResult;
    try {
      result = await s.request(
        `running ${tool.server} › ${tool.originalName}…`,
        (signal) =>
          s.manager.callTool(tool.name, toolArgs, {
            signal,
            toolCallTimeoutSeconds,
            onProgress: (p) =>
              s.output.spin(
                `${tool.originalName} ${p.progress}${p.total ? `/${p.total}` : ""}${
                  p.message ? ` ${clean(p.message)}` : ""
                }`,
              ),
          }),
      );
    } catch (error) {
      if (error instanceof CancelledError) throw error;
      header(false);
      // Worded as in a model turn: server/tool names, cause and remedy.
      throw thrownFailure(tool, error, {
        toolCallTimeoutSeconds,
        surface: "repl",
        stillOffered: s.manager.tools().some((t) => t.name === tool.name),
      }).error;
    }
    await afterDirectCall(tool, toolArgs, callId, result, hooks);
    header(!result.isError);
    const converted = convertToolResult(result, Number.MAX_SAFE_INTEGER);
    await keepCallMedia(s, tool, converted);
    if (result.isError) throw errorResultFailure(tool, clean(converted.text), "repl").error;
    outVerbatim(s, clean(converted.text));
  },
};

/** `/call`'s hooks: what they say is shown, their questions asked as a model's calls are. */
function callHooks(s: ClientSession, tool: CatalogueTool, callId: string): DirectCallHooks {
  return {
    hooks: s.hooks.hooks,
    surface: "repl",
    tell: ({ level, text }) =>
      s.output.err(
        `${level === "warning" ? s.errStyle.yellow(`warning: ${clean(text)}`) : clean(text)}\n`,
      ),
    ask: async (reason, args) =>
      await s.ui.approveToolCall({
        id: callId,
        name: tool.name,
        server: tool.server,
        tool: tool.originalName,
        args,
        argsPreview: abridge(JSON.stringify(args), 160),
        title: tool.title,
        description: tool.description,
        annotations: tool.annotations as Record<string, unknown> | undefined,
        reason: "hook",
        hookReason: reason,
      }, new AbortController().signal) !== "no",
  };
}

/** A server whose tools are missing from /tools, and why: still connecting, lost, failed. */
function awayLine(s: ClientSession, status: ServerStatus): string {
  const name = clean(status.name);
  const progress = progressOf(status);
  if (isPending(status)) {
    return s.style.yellow(`… ${name}: ${progress}; its tools are listed once it is connected`);
  }
  if (status.state === "reconnecting") {
    return s.style.yellow(
      `⟳ ${name}: ${progress ?? "reconnecting"}; its tools are back once it is`,
    );
  }
  return s.style.red(`✗ ${name}: ${status.state}`) +
    s.style.dim(" (its tools are missing; /connections says why, /refresh retries)");
}

/**
 * The tool `/call` names. A tool of a server that is not connected is that server's failure
 * (message, cause, remedy), as `patchbay call` reports it, rather than an unknown tool.
 */
function resolveCallTool(s: ClientSession, spec: string) {
  const tools = s.manager.tools();
  const server = serverPrefix(spec, serverNames(s));
  const away = server ? s.manager.unavailable(server) : undefined;
  if (away && !tools.some((t) => t.server === server)) throw away;
  return resolveTool(spec, tools, s.manager.withheld());
}

async function completePrompt(s: ClientSession, partial: string): Promise<string[]> {
  const words = partial.split(/\s+/);
  if (words.length <= 1) return s.manager.prompts().map((p) => p.name);
  const prompt = s.manager.prompts().find((p) => p.name === words[0]);
  if (!prompt) return [];
  const current = words.at(-1) ?? "";
  const eq = current.indexOf("=");
  if (eq < 0) return (prompt.arguments ?? []).map((a) => `${a.name}=`);
  const name = current.slice(0, eq);
  const context = Object.fromEntries(
    words.slice(1, -1).map((w) => w.split("=")).filter((kv) => kv.length === 2),
  );
  const completion = await s.manager.complete(prompt.server, {
    ref: { type: "ref/prompt", name: prompt.name },
    argument: { name, value: current.slice(eq + 1) },
    ...(Object.keys(context).length > 0 ? { context: { arguments: context } } : {}),
  });
  return completion.values.map((v) => `${name}=${v}`);
}
