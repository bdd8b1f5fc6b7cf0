/**
 * Slash commands: parsing what was typed, finding the command (with a did-you-mean for
 * typos), listing them for /help, and completing their names and arguments.
 *
 * Input is never altered: the arguments reach the command exactly as typed.
 *
 * @module
 */

import { didYouMean, wrapWords } from "../text/text.ts";

/** One slash command, generic over the session it acts on. */
export interface SlashCommand<S> {
  /** Without the slash: `tools`. */
  name: string;
  /** Argument synopsis for help: `[server]`, `<tool> <json-args>`. */
  usage?: string;
  /** One line for /help. */
  summary: string;
  aliases?: readonly string[];
  /** Runs the command; returning `"exit"` ends the session. */
  run(session: S, args: string): Promise<void | "exit">;
  /** Completions for the argument being typed. */
  complete?(session: S, partial: string): Promise<string[]> | string[];
}

/** `/name args` split apart; `undefined` for input that is not a slash command. */
export function parseSlash(input: string): { name: string; args: string } | undefined {
  const match = /^\/([A-Za-z_][\w-]*)(?:\s+([\s\S]*))?$/.exec(input.trim());
  if (!match) return undefined;
  return { name: match[1], args: (match[2] ?? "").trim() };
}

/** The set of commands a session offers. */
export class SlashRegistry<S> {
  readonly #commands: SlashCommand<S>[] = [];

  constructor(commands: readonly SlashCommand<S>[] = []) {
    for (const command of commands) this.add(command);
  }

  add(command: SlashCommand<S>): void {
    this.#commands.push(command);
  }

  /** The command named (or aliased) `name`; case-sensitive, like the input. */
  find(name: string): SlashCommand<S> | undefined {
    return this.#commands.find((c) => c.name === name || c.aliases?.includes(name));
  }

  /** The closest command name to a typo. */
  suggest(name: string): string | undefined {
    const names = this.#commands.flatMap((c) => [c.name, ...(c.aliases ?? [])]);
    const hit = didYouMean(name, names);
    return hit && (this.find(hit)?.name ?? hit);
  }

  list(): readonly SlashCommand<S>[] {
    return this.#commands;
  }

  /**
   * The /help text: one line per command, descriptions aligned, fitted to `columns`. A usage
   * much longer than the others gets its description on the next line, so one long synopsis
   * does not push every description right; on a terminal too narrow for two columns each
   * description goes under its command. Descriptions wrap between words. `extra` rows (usage,
   * description) follow the commands: forms that are not commands of the registry.
   */
  help(columns = Infinity, extra: readonly (readonly [string, string])[] = []): string[] {
    const rows = [
      ...this.#commands.map((c) => [`/${c.name}${c.usage ? ` ${c.usage}` : ""}`, c.summary]),
      ...extra,
    ];
    const fitting = rows.map(([left]) => left.length).filter((n) => n <= HELP_USAGE_COLUMNS);
    const width = Math.max(0, ...fitting);
    const indent = 2 + width + 2;
    const stacked = columns - indent < HELP_MIN_DESCRIPTION;
    return rows.flatMap(([left, right]) => {
      if (stacked) return [`  ${left}`, ...wrapWords(right, columns - 6).map((l) => `      ${l}`)];
      const [first, ...more] = wrapWords(right, columns - indent);
      const rest = more.map((line) => `${" ".repeat(indent)}${line}`);
      if (left.length > width) return [`  ${left}`, `${" ".repeat(indent)}${first}`, ...rest];
      return [`  ${left.padEnd(width)}  ${first}`, ...rest];
    });
  }

  /**
   * Completions for a whole input line: command names after `/`, then the command's
   * own argument completions. Returns candidates and the part of the line they replace.
   */
  async complete(session: S, line: string): Promise<{ candidates: string[]; replace: string }> {
    if (!line.startsWith("/")) return { candidates: [], replace: line };
    const space = line.indexOf(" ");
    if (space < 0) {
      const names = this.#commands.map((c) => `/${c.name}`).filter((n) => n.startsWith(line));
      return { candidates: names.map((n) => names.length === 1 ? `${n} ` : n), replace: line };
    }
    const command = this.find(line.slice(1, space));
    if (!command?.complete) return { candidates: [], replace: line };
    const rest = line.slice(space + 1);
    const partial = rest.split(/\s+/).at(-1) ?? "";
    const options = await command.complete(session, rest);
    return { candidates: options.filter((o) => o.startsWith(partial)), replace: partial };
  }
}

/** Usages longer than this get their description on the next line in /help. */
const HELP_USAGE_COLUMNS = 32;

/** Fewer columns than this left for descriptions, and /help puts each under its command. */
const HELP_MIN_DESCRIPTION = 30;
