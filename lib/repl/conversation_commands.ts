/**
 * The slash commands about the conversation and its memory: `/memory`, `/clear`, `/history`
 * and `/exit`.
 *
 * @module
 */

import { formatBytes } from "../agent/content.ts";
import type { StoredAttachment } from "../memory/types.ts";
import { abridge } from "../text/text.ts";
import { showName } from "../text/names.ts";
import type { ClientSession } from "../session/client_session.ts";
import type { SlashCommand } from "./slash.ts";
import { clean, out } from "./slash_helpers.ts";

type Command = SlashCommand<ClientSession>;

/** `/memory`: saving the conversation switched; says on/off and where memory lives. */
export const memoryCommand: Command = {
  name: "memory",
  summary: "toggle saving the conversation; says on/off and where memory lives",
  async run(s) {
    const status = await s.memory.setEnabled(!s.memory.enabled);
    out(s, status.text);
    // An error, formatted for stderr: it goes there. Not when memory was just switched
    // off: its remedy ("turn persistence off with /memory") is what was just done.
    if (status.problem && status.enabled) s.output.err(`${s.presentError(status.problem)}\n`);
  },
};

/** `/clear`: a new conversation (the old one stays in memory). */
export const clearCommand: Command = {
  name: "clear",
  summary: "start a new conversation (the old one stays in memory)",
  async run(s) {
    s.calledImages.length = 0;
    const session = await s.newConversation();
    out(s, `New conversation ${session.id}.`);
  },
};

/** `/history`: this conversation so far. */
export const historyCommand: Command = {
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
};

/** `/exit` (`/quit`): leave. */
export const exitCommand: Command = {
  name: "exit",
  aliases: ["quit"],
  summary: "close the servers and memory, and leave (also /quit, Ctrl+D)",
  run: () => Promise.resolve("exit" as const),
};

/** One attachment in `/history`: where it came from, what it is, where an image was saved. */
function attachmentLine(a: StoredAttachment): string {
  const what = a.kind === "text"
    ? `text, ${clean(a.text ?? "").length.toLocaleString("en-US")} characters`
    : `${showName(a.mimeType ?? a.kind)}, ${formatBytes(a.bytes ?? 0)}`;
  // A URI and a type are the server's own: on one line, with their controls shown.
  const source = a.uri ? `${showName(a.server)}:${showName(a.uri)}` : showName(a.server);
  return `attached ${source} (${what})${a.path ? ` saved to ${clean(a.path)}` : ""}`;
}
