/**
 * `patchbay help [command...]` and `patchbay <group> help [command...]`: the help of the
 * command named, as `<command...> --help` prints it. Read from the declarations before
 * commander parses the line, so that `help mcp add` reaches `mcp add` (commander's own help
 * command reads one word) and a word that names no command is a usage error like any other
 * (commander's prints the help and exits 1).
 *
 * Plain data only: this runs before commander is loaded.
 *
 * @module
 */

import { type CommandDeclaration, ROOT } from "./_declarations.ts";
import { optionSpelling } from "../lib/cli/root_options.ts";
import { UsageError } from "../lib/errors.ts";
import { didYouMean } from "../lib/text/text.ts";
import { NAME } from "../lib/version.ts";
import { USAGE_STEPS } from "../lib/errors/usage_steps.ts";

/** The help command's word, and how every help that lists commands shows it. */
export const HELP_WORD = "help";
export const HELP_USAGE = "help [command]";
export const HELP_DESCRIPTION = "show the help of a command";

/** Whether `word` is `declaration`'s name or one of its aliases. */
function named(declaration: CommandDeclaration, word: string): boolean {
  return declaration.name === word || (declaration.aliases ?? []).includes(word);
}

/** Whether `word`, an option of `declaration` or of the root, takes the next word as value. */
function takesValue(declaration: CommandDeclaration, word: string): boolean {
  if (word.includes("=")) return false;
  return [...(ROOT.options ?? []), ...(declaration.options ?? [])].some((option) => {
    const spelling = optionSpelling(option.flags);
    return (spelling.long === word || spelling.short === word) && spelling.value === "required";
  });
}

/**
 * `args` with a help word turned into `--help` for the command it names (`help mcp add` →
 * `mcp add --help`); `undefined` when `args` asks for no help that way (the word `help`
 * after a command that has no subcommands is that command's argument: `run help me`).
 * A help word followed by a word that names no command throws a {@linkcode UsageError}.
 */
export function helpRequest(args: readonly string[]): string[] | undefined {
  let at: CommandDeclaration = ROOT;
  const path: string[] = [];
  /** The options met on the way, with their values: kept, after the command named. */
  const options: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    if (word === "--") return undefined;
    if (word.startsWith("-")) {
      options.push(word);
      if (takesValue(at, word) && i + 1 < args.length) options.push(args[++i]);
      continue;
    }
    const commands = at.commands ?? [];
    if (commands.length === 0) return undefined;
    if (word !== HELP_WORD) {
      const next = commands.find((command) => named(command, word));
      if (!next) return undefined; // commander says what is wrong with it
      at = next;
      path.push(word);
      continue;
    }
    const target = [...path];
    let within = at;
    for (const asked of args.slice(i + 1).filter((w) => !w.startsWith("-"))) {
      const subs = within.commands ?? [];
      if (subs.length === 0) break;
      const next = subs.find((command) => named(command, asked));
      if (!next) throw unknownCommand(asked, within, target);
      within = next;
      target.push(asked);
    }
    return [...target, ...options, "--help"];
  }
  return undefined;
}

function unknownCommand(word: string, group: CommandDeclaration, path: string[]): UsageError {
  const names = (group.commands ?? []).map((command) => command.name);
  const close = didYouMean(word, names);
  const where = [NAME, ...path].join(" ");
  return new UsageError(
    `unknown command '${word}'${close ? ` (did you mean '${close}'?)` : ""}`,
    USAGE_STEPS.commandsOf(where, names.join(", ")),
  );
}
