/**
 * The root flags at the start of a command line read without commander (start-up cost):
 * only their plain forms (`-c path`, `--debug`, `-r id`, ...). The interactive session's
 * and the quick commands' reader (`commands/_chat_flags.ts`) and the early start of the
 * servers (`lib/early_start.ts`) both read them here; `tests/cli/startup_args_test.ts`
 * checks that they mean what commander makes of them. Imports only the declarations.
 *
 * @module
 */

import {
  type OptionDeclaration,
  type OptionSpelling,
  optionSpelling,
  ROOT_OPTIONS,
} from "./root_options.ts";

/** The root flags (the keys commander gives them). */
export interface RootFlags {
  config?: string;
  envFile?: string;
  logFile?: string;
  debug?: true;
  yes?: true;
  acceptFormDefaults?: true;
  resume?: true | string;
  trace?: string;
  traceModel?: true;
}

/** `options` by spelling (`-c` and `--config` both). */
export function spellings(
  options: readonly OptionDeclaration[],
): ReadonlyMap<string, OptionSpelling> {
  const bySpelling = new Map<string, OptionSpelling>();
  for (const option of options) {
    const spelling = optionSpelling(option.flags);
    if (spelling.short) bySpelling.set(spelling.short, spelling);
    bySpelling.set(spelling.long, spelling);
  }
  return bySpelling;
}

/** Each root flag's spellings, with its key and whether it takes a value. */
let rootFlags: ReadonlyMap<string, OptionSpelling> | undefined;

/** Starts like a flag (commander's test): a lone `-` is a value. */
export const flagLike = (word: string): boolean => word.length > 1 && word.startsWith("-");

/**
 * The plain root flags at the start of `args`, and the words after them (from the first word
 * that is not a root flag); `undefined` when a root flag is not in its plain form. A flag
 * given twice keeps its last value, as with commander.
 */
export function readRootFlags(
  args: readonly string[],
): { flags: RootFlags; rest: readonly string[] } | undefined {
  rootFlags ??= spellings(ROOT_OPTIONS);
  const flags: RootFlags = {};
  let i = 0;
  // Keyed by the option's attribute, as commander's `opts()` is.
  const set = flags as Record<string, string | true>;
  for (; i < args.length; i++) {
    const word = args[i];
    const next = args[i + 1];
    const flag = rootFlags.get(word);
    if (!flag) break;
    if (flag.value === "required") {
      if (next === undefined || next === "" || flagLike(next)) return undefined;
      set[flag.key] = next;
      i++;
    } else if (flag.value === "optional") {
      if (next !== undefined && !flagLike(next)) {
        if (next === "") return undefined;
        set[flag.key] = next;
        i++;
      } else {
        set[flag.key] = true;
      }
    } else {
      set[flag.key] = true;
    }
  }
  return { flags, rest: args.slice(i) };
}
