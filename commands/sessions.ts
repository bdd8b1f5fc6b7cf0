/**
 * `patchbay sessions`: the stored conversations, most recent first; `sessions show <id>`
 * prints one, `sessions delete <id>` removes it. Every form takes `--json`.
 *
 * @module
 */

import { EXIT } from "../lib/errors.ts";
import type { Memory } from "../lib/memory/memory.ts";
import { openMemory } from "../lib/memory/open.ts";
import type { SessionSummary, StoredMessage } from "../lib/memory/types.ts";
import { type GlobalOptions, type Runtime, startUp } from "../lib/cli/startup.ts";
import { stdoutStyle, type Style } from "../lib/terminal/style.ts";
import { stripTerminalEscapes } from "../lib/terminal/terminal.ts";
import { abridge, plural } from "../lib/text/text.ts";
import { DEFAULT_SESSION_LIMIT } from "./_limit.ts";

/** Options of the `sessions` commands. */
export interface SessionsOptions extends GlobalOptions {
  /** Print JSON instead of text. @default false */
  json?: boolean;
  /** Most recent sessions listed. @default DEFAULT_SESSION_LIMIT */
  limit?: number;
  /** List every session, of every folder (overrides `limit`). @default false */
  all?: boolean;
}

/** Lists sessions, most recent first. */
export function sessionsList(options: SessionsOptions): Promise<number> {
  return withMemory(options, async (memory, runtime) => {
    const limit = options.all ? undefined : options.limit ?? DEFAULT_SESSION_LIMIT;
    // This folder's conversations (and those stored without a folder, which may be anyone's).
    const folder = Deno.cwd();
    const stored = await memory.sessions({});
    const here = options.all
      ? stored
      : stored.filter((s) => s.folder === undefined || s.folder === folder);
    const sessions = limit === undefined ? here : here.slice(0, limit);
    const elsewhere = stored.length - here.length;
    const status = memory.status();
    if (options.json) {
      printJson({ store: storeJson(memory), sessions });
      return EXIT.ok;
    }
    const style = stdoutStyle();
    if (runtime.config.memory.backend === "off") {
      console.error(
        'Memory is off (Memory.backend "off"): new conversations are not saved. ' +
          `Showing what ${status.location} holds.`,
      );
    }
    const others = elsewhere > 0
      ? `${plural(elsewhere, "conversation")} of other folders not shown: --all lists them.`
      : "";
    if (sessions.length === 0) {
      console.log(
        elsewhere > 0
          ? `No stored sessions for ${folder} in ${status.location}; ${others}`
          : `No stored sessions in ${status.location}.`,
      );
      return EXIT.ok;
    }
    const more = limit !== undefined && sessions.length === limit
      ? ` (the ${limit} most recent; --limit N or --all for more)`
      : "";
    console.log(`${style.bold("Sessions")} in ${status.location}${more}\n`);
    console.log(formatTable(sessions, style, { folders: options.all }));
    console.log(`\n${style.dim("patchbay --resume <id> continues one; an id prefix is enough.")}`);
    if (others) console.log(style.dim(others));
    return EXIT.ok;
  });
}

/** Prints one session's messages. */
export function sessionsShow(id: string, options: SessionsOptions): Promise<number> {
  return withMemory(options, async (memory) => {
    const { summary, messages } = await memory.load(id);
    if (options.json) {
      printJson({ store: storeJson(memory), session: summary, messages });
      return EXIT.ok;
    }
    const style = stdoutStyle();
    console.log(describeSession(summary, memory.status().location, style));
    for (const message of messages) console.log(`\n${formatMessage(message, style)}`);
    return EXIT.ok;
  });
}

/** Deletes one session. */
export function sessionsDelete(id: string, options: SessionsOptions): Promise<number> {
  return withMemory(options, async (memory) => {
    const summary = await memory.delete(id);
    if (options.json) {
      printJson({ store: storeJson(memory), deleted: summary });
      return EXIT.ok;
    }
    console.log(
      `Deleted session ${summary.id} (${plural(summary.turns, "turn")}, last message ` +
        `${formatTime(summary.lastMessageAt)}) from ${memory.status().location}.`,
    );
    return EXIT.ok;
  });
}

/** Opens memory strictly (an unreachable store is the command's error), runs, closes. */
async function withMemory(
  options: SessionsOptions,
  work: (memory: Memory, runtime: Runtime) => Promise<number>,
): Promise<number> {
  // Conversations need no value of the configuration: the keychain is not asked.
  const runtime = await startUp(options, { keychain: false });
  const { logger } = runtime;
  // The conversations are patchbay's own, whatever the folder's configuration: that the
  // example one stands in for a missing file says nothing about them.
  const notices = runtime.notices.filter((notice) => notice !== runtime.exampleNotice);
  if (!options.json) { for (const notice of notices) console.error(notice); }
  const memory = await openMemory(runtime.config.memory, runtime.env, {
    log: logger.child("memory"),
    redactor: logger.redactor,
    strict: true,
  });
  try {
    return await work(memory, runtime);
  } finally {
    await memory.close();
  }
}

function storeJson(memory: Memory): Record<string, unknown> {
  const status = memory.status();
  return { kind: status.kind, location: status.location, enabled: status.enabled };
}

function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

/**
 * The listing as aligned columns; with `folders` (the listing of every folder, `--all`), the
 * folder each conversation was held in (`~` for the home folder; `-` when none was stored).
 */
export function formatTable(
  sessions: readonly SessionSummary[],
  style: Style,
  { folders = false }: { folders?: boolean } = {},
): string {
  const rows = sessions.map((s) => [
    s.id,
    formatTime(s.lastMessageAt),
    formatTime(s.started),
    String(s.turns),
    s.model ?? "-",
    ...(folders ? [s.folder === undefined ? "-" : safe(homeShort(s.folder))] : []),
    safe(s.title ?? ""),
  ]);
  const header = [
    "ID",
    "LAST MESSAGE",
    "STARTED",
    "TURNS",
    "MODEL",
    ...(folders ? ["FOLDER"] : []),
    "TITLE",
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells.map((cell, i) =>
      i === cells.length - 1 ? cell : i === 3 ? cell.padStart(widths[i]) : cell.padEnd(widths[i])
    ).join("  ").trimEnd();
  return [style.bold(line(header)), ...rows.map(line)].join("\n");
}

/** `folder` with the home folder written `~`. */
function homeShort(folder: string): string {
  const home = Deno.env.get("HOME");
  if (!home || home === "/") return folder;
  return folder === home
    ? "~"
    : folder.startsWith(`${home}/`)
    ? `~${folder.slice(home.length)}`
    : folder;
}

function describeSession(summary: SessionSummary, location: string, style: Style): string {
  return [
    `${style.bold(`Session ${summary.id}`)}: ${plural(summary.turns, "turn")}, ` +
    `${plural(summary.messages, "message")}${summary.model ? `, ${summary.model}` : ""}`,
    `Started ${formatTime(summary.started)}, last message ${
      formatTime(summary.lastMessageAt)
    }, in ${location}`,
    style.dim(`Continue it with: patchbay --resume ${summary.id}`),
  ].join("\n");
}

/** One message for reading: who, when, then the content indented. */
export function formatMessage(message: StoredMessage, style: Style): string {
  const time = formatTime(message.timestamp);
  let who: string = message.role;
  if (message.role === "assistant" && message.model) who += ` (${message.model})`;
  if (message.role === "tool") {
    who += ` ${message.server ?? ""}${message.server && message.tool ? "/" : ""}${
      message.tool ?? ""
    }`;
    if (message.isError) who += " [error]";
  }
  const colour =
    { user: style.green, assistant: style.cyan, tool: style.magenta, system: style.dim }[
      message.role
    ];
  const lines = [`${style.dim(`[${time}]`)} ${colour(who.trimEnd())}`];
  if (message.content) lines.push(indent(safe(message.content)));
  for (const call of message.toolCalls ?? []) {
    lines.push(indent(`-> ${call.name} ${abridge(safe(call.arguments), 400)}`));
  }
  return lines.join("\n");
}

function indent(text: string): string {
  return text.split("\n").map((line) => `  ${line}`).join("\n");
}

/** Stored text came from models and tools: never let it drive the terminal. */
function safe(text: string): string {
  return stripTerminalEscapes(text);
}

/** `2025-01-05 14:03` in local time. */
export function formatTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}`;
}
