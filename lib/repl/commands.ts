/**
 * The slash commands of the interactive session (CONTRACT.md section 4 and more). Each
 * has a one-line summary for /help; arguments are passed on exactly as typed.
 *
 * @module
 */

import type {
  CallToolResult,
  GetPromptResult,
  ReadResourceResult,
} from "@modelcontextprotocol/client";
import { convertToolResult } from "../agent/content.ts";
import { PatchbayError } from "../errors.ts";
import { stripTerminalEscapes } from "../terminal.ts";
import { abridge, plural } from "../text.ts";
import { VERSION } from "../version.ts";
import { parseKeyValues, resolveNamed, resolveTool } from "./resolve.ts";
import type { InteractiveSession } from "./session.ts";
import { type SlashCommand, SlashRegistry } from "./slash.ts";
import { formatDuration } from "./terminal_ui.ts";

type Command = SlashCommand<InteractiveSession>;

/** Renders the server list; injected so lib/ does not depend on the command layer. */
export type StatusRenderer = (session: InteractiveSession) => string;

const out = (s: InteractiveSession, text: string) => s.output.out(`${text}\n`);
const clean = (text: unknown) => stripTerminalEscapes(String(text ?? ""));

/** Builds the registry; `renderServers` draws `/connections`. */
export function slashCommands(renderServers: StatusRenderer): SlashRegistry<InteractiveSession> {
  const registry = new SlashRegistry<InteractiveSession>();
  const commands: Command[] = [
    {
      name: "help",
      summary: "list the commands",
      run(s) {
        out(s, "Commands:");
        out(s, registry.help().join("\n"));
        out(
          s,
          s.style.dim(
            'Anything else is sent to the model. End a line with \\ to continue it, or wrap several lines in """.',
          ),
        );
        out(s, s.style.dim("Ctrl+C cancels a running answer; Ctrl+C twice or Ctrl+D exits."));
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
        if (tools.length === 0) {
          out(
            s,
            args
              ? `${args} offers no tools.`
              : "No tools: no connected server offers any (see /connections).",
          );
          return Promise.resolve();
        }
        for (const [server, group] of groupBy(tools, (t) => t.server)) {
          out(s, s.style.bold(`${clean(server)} (${plural(group.length, "tool")})`));
          for (const tool of group) {
            const schema = tool.inputSchema as {
              properties?: Record<string, unknown>;
              required?: string[];
            };
            const required = schema.required ?? [];
            const optional = Object.keys(schema.properties ?? {}).filter((k) =>
              !required.includes(k)
            );
            const signature = [...required, ...optional.map((o) => `${o}?`)].join(", ");
            const alias = tool.name !== `${tool.server}__${tool.originalName}`
              ? s.style.dim(` [${tool.name}]`)
              : "";
            out(s, `  ${s.style.cyan(clean(tool.originalName))}(${clean(signature)})${alias}`);
            if (tool.description) {
              out(
                s,
                `    ${s.style.dim(abridge(clean(tool.description).replace(/\s+/g, " "), 110))}`,
              );
            }
          }
        }
        return Promise.resolve();
      },
    },
    {
      name: "memory",
      summary: "toggle saving the conversation; says on/off and where memory lives",
      async run(s) {
        const status = await s.memory.setEnabled(!s.memory.enabled);
        out(s, status.text);
        if (status.problem) out(s, s.presentError(status.problem));
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
        const limits =
          snapshot?.limits.map((l) => `${l.name} ${l.used}/${l.limit ?? "unlimited"}`).join(", ") ??
            "";
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
            limits
              ? `${limits}, max_steps ${config.agent.maxSteps}, tool_call_timeout ${config.agent.toolCallTimeoutSeconds} s`
              : "-",
          ],
          ["Debug", logger.debugMode ? "on" : "off"],
          ["Log file", logger.path ?? "none (not writable)"],
          ["Config", s.runtime.configPath],
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
        out(s, renderServers(s));
        for (const status of s.manager.states()) {
          const info = status.serverInfo
            ? `${clean(status.serverInfo.name)} ${clean(status.serverInfo.version)}`
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
        s.output.spin(args ? `refreshing ${args}…` : "refreshing every server…");
        try {
          await s.manager.refresh(args || undefined, { force: true });
        } finally {
          s.output.stopSpinner();
        }
        out(s, renderServers(s));
      },
    },
    {
      name: "prompts",
      summary: "list the servers' prompts and their arguments",
      run(s) {
        const prompts = s.manager.prompts();
        if (prompts.length === 0) out(s, "No prompts: no connected server offers any.");
        for (const [server, group] of groupBy(prompts, (p) => p.server)) {
          out(s, s.style.bold(`${clean(server)} (${plural(group.length, "prompt")})`));
          for (const prompt of group) {
            const args = (prompt.arguments ?? []).map((a) => `${a.name}${a.required ? "" : "?"}`)
              .join(" ");
            out(s, `  ${s.style.cyan(clean(prompt.name))}${args ? ` ${clean(args)}` : ""}`);
            if (prompt.description) {
              out(s, `    ${s.style.dim(abridge(clean(prompt.description), 110))}`);
            }
          }
        }
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
        const result = await s.manager.getPrompt(prompt.server, prompt.name, values);
        const text = promptText(result);
        out(s, s.style.dim(abridge(text, 600)));
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
        }
        for (const [server, group] of groupBy(resources, (r) => r.server)) {
          out(s, s.style.bold(`${clean(server)} (${plural(group.length, "resource")})`));
          for (const r of group) {
            out(
              s,
              `  ${s.style.cyan(clean(r.uri))}  ${s.style.dim(clean(r.name))}${
                r.mimeType ? s.style.dim(` (${clean(r.mimeType)})`) : ""
              }`,
            );
          }
        }
        for (const [server, group] of groupBy(templates, (t) => t.server)) {
          out(s, s.style.bold(`${clean(server)} templates`));
          for (const t of group) {
            out(s, `  ${s.style.cyan(clean(t.uriTemplate))}  ${s.style.dim(clean(t.name))}`);
          }
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
        const server = words.length > 1 ? words[0] : serverForUri(s, uri);
        const result = await s.manager.readResource(server, uri);
        printResource(s, result);
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
        const tool = resolveTool(spec, s.manager.tools());
        const toolArgs = parseJsonArgs(json);
        const started = performance.now();
        s.output.spin(`running ${tool.server} › ${tool.originalName}…`);
        const controller = new AbortController();
        let result: CallToolResult;
        try {
          result = await s.editor.whileBusy(
            () =>
              s.manager.callTool(tool.name, toolArgs, {
                signal: controller.signal,
                timeoutSeconds: s.runtime.config.agent.toolCallTimeoutSeconds,
                onProgress: (p) =>
                  s.output.spin(
                    `${tool.originalName} ${p.progress}${p.total ? `/${p.total}` : ""}${
                      p.message ? ` ${clean(p.message)}` : ""
                    }`,
                  ),
              }),
            () => controller.abort(),
          );
        } finally {
          s.output.stopSpinner();
        }
        const mark = result.isError ? s.style.red("✗ error") : s.style.green("✓");
        out(
          s,
          `${mark} ${clean(tool.server)} › ${clean(tool.originalName)} ${
            s.style.dim(formatDuration(performance.now() - started))
          }`,
        );
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
  return registry;
}

function serverNames(s: InteractiveSession): string[] {
  return s.manager.states().map((st) => st.name);
}

function unknownServer(s: InteractiveSession, name: string): PatchbayError {
  return new PatchbayError("usage", `Unknown server: ${name}`, {
    reason: `servers_config.json has no server named "${name}"`,
    remedy: `servers: ${serverNames(s).join(", ") || "none"}`,
  });
}

function usage(synopsis: string, remedy: string): PatchbayError {
  return new PatchbayError("usage", `Usage: ${synopsis}`, {
    reason: "an argument is missing",
    remedy,
  });
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

function parseJsonArgs(json: string): Record<string, unknown> {
  if (json === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new PatchbayError("usage", "Tool arguments are not valid JSON", {
      reason: (error as Error).message,
      remedy: 'write them as a JSON object, e.g. {"message": "hi"}',
    });
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new PatchbayError("usage", "Tool arguments must be a JSON object", {
      reason: `got ${Array.isArray(value) ? "an array" : typeof value}`,
      remedy: 'wrap them in braces, e.g. {"message": "hi"}',
    });
  }
  return value as Record<string, unknown>;
}

/** The server that lists `uri`, or whose template matches it, or the only one with resources. */
function serverForUri(s: InteractiveSession, uri: string): string {
  const listed = s.manager.resources().find((r) => r.uri === uri);
  if (listed) return listed.server;
  const templated = s.manager.resourceTemplates().filter((t) =>
    templateMatches(t.uriTemplate, uri)
  );
  const servers = new Set([...templated.map((t) => t.server)]);
  if (servers.size === 1) return [...servers][0];
  const offering = new Set(
    [...s.manager.resources(), ...s.manager.resourceTemplates()].map((r) => r.server),
  );
  if (offering.size === 1 && servers.size === 0) return [...offering][0];
  throw new PatchbayError("usage", `Which server has ${uri}?`, {
    reason: servers.size > 1
      ? `the templates of ${[...servers].join(" and ")} all match it`
      : "no connected server lists it or has a template that matches it",
    remedy: "name the server first: /resource <server> <uri>",
  });
}

/** Whether `uri` fits an RFC 6570 template (each `{…}` matching one or more characters). */
export function templateMatches(template: string, uri: string): boolean {
  const pattern = template.split(/\{[^}]*\}/).map((part) =>
    part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  )
    .join(".+");
  return new RegExp(`^${pattern}$`).test(uri);
}

function printResource(s: InteractiveSession, result: ReadResourceResult): void {
  for (const content of result.contents) {
    const header = `${clean(content.uri)}${
      content.mimeType ? ` (${clean(content.mimeType)})` : ""
    }`;
    out(s, s.style.dim(header));
    if ("text" in content && typeof content.text === "string") {
      out(s, clean(content.text));
    } else if ("blob" in content && typeof content.blob === "string") {
      const bytes = Math.floor(content.blob.length * 3 / 4);
      out(
        s,
        `[binary content, ${bytes} bytes, base64: ${content.blob.slice(0, 60)}${
          content.blob.length > 60 ? "…" : ""
        }]`,
      );
    }
  }
}

/** A prompt's messages as the text of one user turn. */
export function promptText(result: GetPromptResult): string {
  const parts = result.messages.map((message) => {
    const content = message.content as {
      type: string;
      text?: string;
      resource?: { uri: string; text?: string };
    };
    const text = content.type === "text"
      ? content.text ?? ""
      : content.type === "resource" && content.resource
      ? `[resource ${content.resource.uri}]\n${content.resource.text ?? ""}`
      : `[${content.type} content]`;
    return result.messages.length === 1 ? text : `${message.role}: ${text}`;
  });
  return parts.join("\n\n");
}

async function completePrompt(s: InteractiveSession, partial: string): Promise<string[]> {
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
