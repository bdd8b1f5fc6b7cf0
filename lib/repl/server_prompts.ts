/**
 * A server's prompts as commands: `/server:prompt arg=value …` fills in that server's
 * prompt and sends it to the model, like `/prompt` but named the way Claude Code names
 * them, with completion of prompt names and argument values (the server's completions).
 *
 * Only a configured server's name before the `:` makes such a command; anything else
 * starting with `/` is left to the slash commands.
 *
 * @module
 */

import type { CataloguePrompt } from "../connections/manager.ts";
import { PatchbayError } from "../errors.ts";
import { REPL_STEPS } from "../errors/repl_steps.ts";
import { didYouMean } from "../text/text.ts";
import type { ClientSession } from "../session/client_session.ts";
import { promptPreview } from "../ui/listing.ts";
import { promptMessage } from "./prompt_message.ts";
import { announceAttachments, attachmentOptions } from "../session/turn_setup.ts";
import { missingArguments, parseKeyValues } from "../session/resolve.ts";

/** `/server:prompt args` taken apart. */
export interface ServerPromptLine {
  server: string;
  prompt: string;
  args: string;
}

/** The server prompt a line names, or `undefined` when it names no configured server. */
export function parseServerPrompt(
  line: string,
  servers: readonly string[],
): ServerPromptLine | undefined {
  const match = /^\/(\S+?):(\S+)(?:\s+([\s\S]*))?$/.exec(line.trim());
  if (!match || !servers.includes(match[1])) return undefined;
  return { server: match[1], prompt: match[2], args: (match[3] ?? "").trim() };
}

/** The names of the configured servers. */
export function configuredServers(s: ClientSession): string[] {
  return s.runtime.config.servers.map((server) => server.name);
}

/** Fills in the prompt and runs a turn with it; throws a usage error for what is missing. */
export async function runServerPrompt(s: ClientSession, line: ServerPromptLine): Promise<void> {
  const prompt = findPrompt(s, line);
  const values = parseKeyValues(line.args);
  const missing = missingArguments(prompt, values);
  if (missing.length > 0) {
    throw new PatchbayError(
      "usage",
      `Usage: /${line.server}:${line.prompt} ${missing.map((m) => `${m}=…`).join(" ")}`,
      {
        reason: `required: ${missing.join(", ")}`,
        remedy: REPL_STEPS.promptTab,
      },
    );
  }
  await sendPrompt(s, prompt, values);
}

/**
 * Gets `prompt` filled in with `values`, shows it, and sends it to the model. The prompt's
 * text is the server's: it is shown behind a gutter, its embedded resources are attached
 * as untrusted server content, and nothing in it is read as a mention.
 */
export async function sendPrompt(
  s: ClientSession,
  prompt: CataloguePrompt,
  values: Record<string, string>,
): Promise<void> {
  const result = await s.request(
    `getting ${prompt.name}…`,
    (signal) => s.manager.getPrompt(prompt.server, prompt.name, values, { signal }),
  );
  const message = await promptMessage(
    prompt.server,
    prompt.name,
    result,
    attachmentOptions(s.ui),
  );
  s.output.out(`${promptPreview(message.text, s.style)}\n`);
  announceAttachments(message.attachments ?? [], s.ui);
  await s.runTurn(message);
}

function findPrompt(s: ClientSession, line: ServerPromptLine): CataloguePrompt {
  const offered = s.manager.prompts().filter((p) => p.server === line.server);
  const prompt = offered.find((p) => p.name === line.prompt);
  if (prompt) return prompt;
  const status = s.manager.status(line.server);
  // A server that failed, is disabled or reconnecting: its own error says why and what to do.
  if (offered.length === 0) {
    const away = s.manager.unavailable(line.server);
    if (away) throw away;
  }
  const suggestion = didYouMean(line.prompt, offered.map((p) => p.name));
  throw new PatchbayError("usage", `Unknown prompt /${line.server}:${line.prompt}`, {
    reason: offered.length === 0
      ? `${line.server} offers no prompts${
        status && status.state !== "connected" ? ` (it is ${status.state})` : ""
      }`
      : `${line.server} offers no prompt named "${line.prompt}"`,
    remedy: suggestion ? REPL_STEPS.closePrompt(line.server, suggestion) : REPL_STEPS.listPrompts,
  });
}

/**
 * Completions of a line that starts a server prompt: `/server:name` while the first word
 * is typed, then `arg=` names and, after `=`, the server's completions of the value.
 * `undefined` when the line is not one.
 */
export async function completeServerPrompt(
  s: ClientSession,
  line: string,
): Promise<{ candidates: string[]; replace: string } | undefined> {
  if (!line.startsWith("/")) return undefined;
  const space = line.search(/\s/);
  const prompts = s.manager.prompts();
  if (space < 0) {
    const names = prompts.map((p) => `/${p.server}:${p.name}`).filter((n) => n.startsWith(line));
    return { candidates: names, replace: line };
  }
  const parsed = parseServerPrompt(line.slice(0, space), configuredServers(s));
  if (!parsed) return undefined;
  const prompt = prompts.find((p) => p.server === parsed.server && p.name === parsed.prompt);
  if (!prompt) return { candidates: [], replace: line };
  const words = line.slice(space + 1).split(/\s+/);
  const current = words.at(-1) ?? "";
  const eq = current.indexOf("=");
  if (eq < 0) {
    const names = (prompt.arguments ?? []).map((a) => `${a.name}=`);
    return { candidates: names.filter((n) => n.startsWith(current)), replace: current };
  }
  const name = current.slice(0, eq);
  const context = Object.fromEntries(
    words.slice(0, -1).map((w) => w.split("=")).filter((kv) => kv.length === 2),
  );
  const completion = await s.manager.complete(prompt.server, {
    ref: { type: "ref/prompt", name: prompt.name },
    argument: { name, value: current.slice(eq + 1) },
    ...(Object.keys(context).length > 0 ? { context: { arguments: context } } : {}),
  });
  const candidates = completion.values.map((v) => `${name}=${v}`);
  return { candidates: candidates.filter((c) => c.startsWith(current)), replace: current };
}
