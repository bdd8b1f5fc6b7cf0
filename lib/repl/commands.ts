/**
 * The slash commands of the interactive session (docs/interactive.md). Each
 * has a one-line summary for /help; arguments are passed on exactly as typed.
 *
 * @module
 */

import type { CallToolResult } from "@modelcontextprotocol/client";
import { convertToolResult, formatBytes } from "../agent/content.ts";
import type { StoredAttachment } from "../memory/types.ts";
import { isPending, progressOf } from "../connections/progress.ts";
import type { ServerStatus } from "../connections/types.ts";
import { CancelledError, PatchbayError } from "../errors.ts";
import { errorResultFailure, thrownFailure } from "../agent/tool_failure.ts";
import { redisConfigured } from "../redis/settings.ts";
import { describeGrants } from "../permissions/in_effect.ts";
import { stripTerminalEscapes } from "../terminal.ts";
import { abridge, wrapWords } from "../text.ts";
import { VERSION } from "../version.ts";
import {
  formatPrompts,
  formatResourceContents,
  formatResources,
  formatTools,
  promptPreview,
  promptText,
  unmatchedLines,
  withheldLines,
} from "../ui/listing.ts";
import {
  parseJsonArgs,
  parseKeyValues,
  resolveNamed,
  resolveTool,
  resourceServer,
  serverPrefix,
} from "./resolve.ts";
import { describeChanges, reloadConfiguration } from "./reload.ts";
import { mcpCommand } from "./mcp_command.ts";
import type { ClientSession } from "./client_session.ts";
import { type SlashCommand, SlashRegistry } from "./slash.ts";
import { imageCommand } from "./image_command.ts";
import { contextStatus } from "./context_status.ts";
import { formatDuration } from "../ui/terminal_ui.ts";
import { showName } from "../names.ts";
import { traceCommand, traceStatus } from "./trace_command.ts";
import { unknownServer as unknownServerNamed } from "./unknown_server.ts";

type Command = SlashCommand<ClientSession>;

const out = (s: ClientSession, text: string) => s.output.out(`${text}\n`);
const clean = (text: unknown) => stripTerminalEscapes(String(text ?? ""));

/** Builds the registry; the session's `renderServers` draws `/connections`. */
export function slashCommands(): SlashRegistry<ClientSession> {
  const registry = new SlashRegistry<ClientSession>();
  const commands: Command[] = [
    {
      name: "help",
      summary: "list the commands",
      run(s) {
        out(s, "Commands:");
        const columns = helpColumns();
        out(s, registry.help(columns, HELP_FORMS).join("\n"));
        for (
          const line of [
            'Anything else is sent to the model. End a line with \\ to continue it, or wrap several lines in """.',
            "Ctrl+C cancels a running answer; Ctrl+C twice or Ctrl+D exits.",
          ]
        ) out(s, s.style.dim(wrapWords(line, columns).join("\n")));
        return Promise.resolve();
      },
    },
    {
      name: "debug",
      summary: "toggle verbose logging (mirrored here) and say which state it is in",
      run(s) {
        const logger = s.runtime.logger;
        logger.setDebug(!logger.debugMode);
        s.manager.setLoggingLevel(logger.debugMode ? "debug" : "info");
        out(
          s,
          `Debug logging ${logger.debugMode ? "on" : "off"}${
            logger.path ? ` (log file ${logger.path})` : ""
          }`,
        );
        return Promise.resolve();
      },
    },
    {
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
          out(s, formatTools(tools, s.style).join("\n"));
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
    },
    {
      name: "memory",
      summary: "toggle saving the conversation; says on/off and where memory lives",
      async run(s) {
        const status = await s.memory.setEnabled(!s.memory.enabled);
        out(s, status.text);
        // An error, formatted for stderr: it goes there. Not when memory was just switched
        // off: its remedy ("turn persistence off with /memory") is what was just done.
        if (status.problem && status.enabled) s.output.err(`${s.presentError(status.problem)}\n`);
      },
    },
    {
      name: "api_stats",
      summary: "requests, tokens per model, tool calls per server, and the limits left",
      run(s) {
        out(s, s.model ? s.model.formatStats() : `No model requests: ${s.modelError?.message}`);
        return Promise.resolve();
      },
    },
    {
      name: "status",
      summary: "model, servers, memory, limits, log file, version and uptime",
      run(s) {
        const { config, logger } = s.runtime;
        const states = s.manager.states().filter((st) => !st.disabled);
        const connected = states.filter((st) => st.state === "connected").length;
        const failed = states.filter((st) => st.state === "failed").length;
        const snapshot = s.model?.stats.snapshot();
        // Without a usable model nothing is spent, but the configured limits still hold.
        const spent = snapshot?.limits ?? [
          { name: "request_limit", used: 0, limit: config.agent.requestLimit },
          { name: "total_tokens_limit", used: 0, limit: config.agent.totalTokensLimit },
          { name: "sampling_request_limit", used: 0, limit: config.agent.samplingRequestLimit },
        ];
        const limits = spent.map((l) => `${l.name} ${l.used}/${l.limit ?? "unlimited"}`).join(", ");
        const rows: [string, string][] = [
          ["Version", `patchbay ${VERSION}`],
          [
            "Model",
            `${config.llm.provider} / ${config.llm.model}${
              s.modelError ? ` (unusable: ${s.modelError.message})` : ""
            }`,
          ],
          [
            "Servers",
            `${connected} connected, ${failed} failed, ${
              states.length - connected - failed
            } other, of ${states.length}`,
          ],
          ["Memory", s.memory.status().text],
          [
            "Requests",
            snapshot
              ? `${snapshot.session.requests} (${snapshot.session.totalTokens} tokens)`
              : "0",
          ],
          [
            "Limits",
            `${limits}, max_steps ${config.agent.maxSteps}, tool_call_timeout ${config.agent.toolCallTimeoutSeconds} s`,
          ],
          ["Context", contextStatus(s)],
          ["Trace", traceStatus()],
          ["Debug", logger.debugMode ? "on" : "off"],
          ["Log file", logger.path ?? "none (not writable)"],
          ["Config", s.runtime.configPath],
          ["Grants", grantsRow(s)],
          ["Uptime", formatDuration(Date.now() - s.startedAt)],
        ];
        for (const [label, value] of rows) out(s, `${s.style.bold(label.padEnd(9))} ${value}`);
        return Promise.resolve();
      },
    },
    {
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
        }
        return Promise.resolve();
      },
    },
    {
      name: "refresh",
      usage: "[server]",
      summary: "reconnect servers and list their tools, prompts and resources again",
      complete: (s) => serverNames(s),
      async run(s, args) {
        if (args && !serverNames(s).includes(args)) throw unknownServer(s, args);
        const off = args && s.manager.status(args)?.disabled
          ? s.manager.unavailable(args)
          : undefined;
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
    },
    {
      name: "prompts",
      summary: "list the servers' prompts and their arguments",
      run(s) {
        const prompts = s.manager.prompts();
        if (prompts.length === 0) out(s, "No prompts: no connected server offers any.");
        else out(s, formatPrompts(prompts, s.style).join("\n"));
        return Promise.resolve();
      },
    },
    {
      name: "prompt",
      usage: "<name> [k=v ...]",
      summary: "fill in a server's prompt and send it to the model",
      complete: (s, partial) => completePrompt(s, partial),
      async run(s, args) {
        const [spec, ...rest] = args.split(/\s+/);
        if (!spec) throw usage("/prompt <name> [k=v ...]", "see the names with /prompts");
        const prompt = resolveNamed("prompt", spec, s.manager.prompts());
        const values = parseKeyValues(rest.join(" "));
        const missing = (prompt.arguments ?? []).filter((a) => a.required && !(a.name in values));
        if (missing.length > 0) {
          throw usage(
            `/prompt ${spec} ${missing.map((m) => `${m.name}=…`).join(" ")}`,
            `required: ${missing.map((m) => m.name).join(", ")}`,
          );
        }
        const result = await s.request(
          `getting ${prompt.name}…`,
          (signal) => s.manager.getPrompt(prompt.server, prompt.name, values, { signal }),
        );
        const text = promptText(result);
        out(s, promptPreview(text, s.style));
        await s.runTurn(text);
      },
    },
    {
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
    },
    {
      name: "resource",
      usage: "[server] <uri>",
      summary: "read a resource and show it exactly as the server sent it",
      complete: (s) => s.manager.resources().map((r) => r.uri),
      async run(s, args) {
        const words = args.split(/\s+/).filter(Boolean);
        if (words.length === 0) {
          throw usage("/resource [server] <uri>", "see the URIs with /resources");
        }
        const uri = words.at(-1)!;
        const server = words.length > 1
          ? words[0]
          : resourceServer(uri, s.manager.resources(), s.manager.resourceTemplates());
        const result = await s.request(
          `reading ${uri}…`,
          (signal) => s.manager.readResource(server, uri, { signal }),
        );
        out(s, formatResourceContents(result, s.style).join("\n"));
      },
    },
    {
      name: "call",
      usage: "<tool> <json-args>",
      summary: "call a tool directly, without the model, and show its result",
      complete: (s) => s.manager.tools().map((t) => `${t.server}.${t.originalName}`),
      async run(s, args) {
        const space = args.search(/\s/);
        const spec = space < 0 ? args : args.slice(0, space);
        const json = space < 0 ? "" : args.slice(space + 1).trim();
        if (!spec) {
          throw usage("/call <tool> <json-args>", 'e.g. /call everything.echo {"message": "hi"}');
        }
        const tool = resolveCallTool(s, spec);
        const toolArgs = parseJsonArgs(json);
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
        header(!result.isError);
        if (result.isError) {
          const text = clean(convertToolResult(result, Number.MAX_SAFE_INTEGER).text);
          throw errorResultFailure(tool, text, "repl").error;
        }
        out(s, clean(convertToolResult(result, Number.MAX_SAFE_INTEGER).text));
      },
    },
    {
      name: "clear",
      summary: "start a new conversation (the old one stays in memory)",
      run(s) {
        s.agent?.clear();
        const session = s.memory.newSession();
        out(s, `New conversation ${session.id}.`);
        return Promise.resolve();
      },
    },
    {
      name: "history",
      summary: "show this conversation so far",
      run(s) {
        const messages = s.agent?.history ?? s.memory.session.messages;
        if (messages.length === 0) out(s, "Nothing said yet.");
        for (const m of messages) {
          if (m.role === "system") continue;
          const who = m.role === "user"
            ? s.style.bold("you")
            : m.role === "assistant"
            ? s.style.cyan("model")
            : s.style.dim("tool");
          if (m.role === "assistant" && m.toolCalls?.length) {
            for (const call of m.toolCalls) {
              out(s, `${who}  → ${clean(call.name)}(${abridge(clean(call.arguments), 80)})`);
            }
          }
          if (m.content) {
            const label = m.role === "tool"
              ? `${who}  ${clean(m.server)} › ${clean(m.tool)}:`
              : `${who} `;
            out(s, `${label} ${abridge(clean(m.content).replace(/\s+/g, " "), 160)}`);
          }
          for (const a of m.attachments ?? []) out(s, s.style.dim(`      ${attachmentLine(a)}`));
        }
        out(s, s.style.dim(`conversation ${s.memory.session.id}`));
        return Promise.resolve();
      },
    },
    {
      name: "exit",
      aliases: ["quit"],
      summary: "close the servers and memory, and leave (also /quit, Ctrl+D)",
      run: () => Promise.resolve("exit" as const),
    },
  ];
  for (const command of commands) registry.add(command);
  registry.add(mcpCommand);
  registry.add(imageCommand);
  registry.add(traceCommand);
  return registry;
}

/** A server whose tools are missing from /tools, and why: still connecting, lost, failed. */
/** The Deno permissions in effect, in yellow when broader than the plan. */
function grantsRow(s: ClientSession): string {
  const { memory } = s.runtime.config;
  const redis = memory.backend === "redis" ||
    (memory.backend !== "file" && redisConfigured(memory, s.runtime.env));
  const grants = describeGrants({ redis });
  return grants.broader ? s.style.yellow(grants.text) : grants.text;
}

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
 * What a line can hold besides the commands, listed by /help with them: a server's prompt
 * run by name (`repl/server_prompts.ts`) and a resource mention (`agent/mentions.ts`).
 */
const HELP_FORMS = [
  ["/<server>:<prompt> [k=v ...]", "run a server's prompt and send it to the model"],
  ["@<server>:<uri>", "in a message: attach that resource to it (Tab completes both)"],
] as const;

/** The terminal's width for /help; unbounded when the output is not a terminal. */
function helpColumns(): number {
  try {
    return Deno.stdout.isTerminal() ? Deno.consoleSize().columns : Infinity;
  } catch {
    return Infinity;
  }
}

function serverNames(s: ClientSession): string[] {
  return s.manager.states().map((st) => st.name);
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

/** One attachment in `/history`: where it came from, what it is, where an image was saved. */
function attachmentLine(a: StoredAttachment): string {
  const what = a.kind === "text"
    ? `text, ${clean(a.text ?? "").length.toLocaleString("en-US")} characters`
    : `${showName(a.mimeType ?? a.kind)}, ${formatBytes(a.bytes ?? 0)}`;
  // A URI and a type are the server's own: on one line, with their controls shown.
  const source = a.uri ? `${showName(a.server)}:${showName(a.uri)}` : showName(a.server);
  return `attached ${source} (${what})${a.path ? ` saved to ${clean(a.path)}` : ""}`;
}

function unknownServer(s: ClientSession, name: string): PatchbayError {
  return unknownServerNamed(name, serverNames(s));
}

function usage(synopsis: string, remedy: string): PatchbayError {
  return new PatchbayError("usage", `Usage: ${synopsis}`, {
    reason: "an argument is missing",
    remedy,
  });
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
