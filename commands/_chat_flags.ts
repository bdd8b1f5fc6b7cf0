/**
 * The interactive session's command line read without commander (start-up cost): the default
 * command is the one that stays running, and commander's parser is 3 MB of its resident
 * memory. Only the plain forms of the root flags are read here (`-c path`, `--debug`,
 * `-r id`, ...); anything else (a command, `--help`, `--config=path`, `-dy`, an unknown
 * flag, a value that looks like a flag) returns `undefined`, and the caller parses the
 * line with commander as always. `tests/cli/startup_args_test.ts` checks that both agree.
 *
 * @module
 */

import { type CommandDeclaration, ROOT } from "./_declarations.ts";
import { readRootFlags, type RootFlags, spellings } from "../lib/cli/root_flags.ts";

/** The root flags the interactive session takes (the keys commander gives them). */
export type ChatFlags = RootFlags;

/**
 * The interactive session's flags when `args` holds nothing but plain root flags, else
 * `undefined` (commander then parses `args`).
 */
export function plainChatFlags(args: readonly string[]): ChatFlags | undefined {
  const read = readRootFlags(args);
  return read && read.rest.length === 0 ? read.flags : undefined;
}

/** A command that touches no server, named by its words: `config check`, `sessions list`. */
export type QuickCommand = string;

/** A quick command's words (its group's alone too, for a default command) and switches. */
interface QuickForm {
  words: readonly string[];
  command: QuickCommand;
  /** Its switches by spelling, with their keys (every other word leaves it to commander). */
  switches: ReadonlyMap<string, string>;
}

/** The quick commands of the declarations, the longest words first. */
function quickForms(): QuickForm[] {
  const forms: QuickForm[] = [];
  const walk = (command: CommandDeclaration, path: readonly string[]) => {
    for (const sub of command.commands ?? []) {
      const words = [...path, sub.name];
      if (sub.quick) {
        const switches = new Map<string, string>();
        for (const [spelling, { key, value }] of spellings(sub.options ?? [])) {
          if (value === "none") switches.set(spelling, key);
        }
        const form = { command: words.join(" "), switches };
        forms.push({ words, ...form });
        if (sub.default) forms.push({ words: path, ...form });
      }
      walk(sub, words);
    }
  };
  walk(ROOT, []);
  return forms.sort((a, b) => b.words.length - a.words.length);
}

/** Read once, on the first quick line. */
let quick: QuickForm[] | undefined;

/**
 * A command that touches no server (`config check`, `sessions`, `permissions`, which the
 * launcher runs at a first start) in its plain form: plain root flags, the command's words,
 * then only its own switches. Its options as its action receives them (the root flags and
 * its switches), else `undefined`: commander then parses `args`. These commands answer in
 * about 0.1 s, a third of which was loading commander.
 */
export function plainCommand(
  args: readonly string[],
): { command: QuickCommand; options: ChatFlags & Record<string, unknown> } | undefined {
  const read = readRootFlags(args);
  if (!read) return undefined;
  for (const { words, command, switches } of quick ??= quickForms()) {
    if (!words.every((word, i) => read.rest[i] === word)) continue;
    const options: ChatFlags & Record<string, unknown> = { ...read.flags };
    for (const word of read.rest.slice(words.length)) {
      const key = switches.get(word);
      if (!key) return undefined;
      options[key] = true;
    }
    return { command, options };
  }
  return undefined;
}
