/**
 * The interactive session's command line read without commander (issue 16): the default
 * command is the one that stays running, and commander's parser is 3 MB of its resident
 * memory. Only the plain forms of the root flags are read here (`-c path`, `--debug`,
 * `-r id`, ...); anything else (a command, `--help`, `--config=path`, `-dy`, an unknown
 * flag, a value that looks like a flag) returns `undefined`, and the caller parses the
 * line with commander as always. `tests/startup_args_test.ts` checks that both agree.
 *
 * @module
 */

/** The root flags the interactive session takes (the keys commander gives them). */
export interface ChatFlags {
  config?: string;
  envFile?: string;
  logFile?: string;
  debug?: true;
  yes?: true;
  acceptFormDefaults?: true;
  resume?: true | string;
}

/** Flags that take a value, by spelling. */
const VALUED: Readonly<Record<string, "config" | "envFile" | "logFile">> = {
  "-c": "config",
  "--config": "config",
  "--env-file": "envFile",
  "--log-file": "logFile",
};

/** Flags without a value, by spelling. */
const SWITCHES: Readonly<Record<string, "debug" | "yes" | "acceptFormDefaults">> = {
  "-d": "debug",
  "--debug": "debug",
  "-y": "yes",
  "--yes": "yes",
  "--accept-form-defaults": "acceptFormDefaults",
};

/** Starts like a flag (commander's test): a lone `-` is a value. */
const flagLike = (word: string) => word.length > 1 && word.startsWith("-");

/**
 * The interactive session's flags when `args` holds nothing but plain root flags, else
 * `undefined` (commander then parses `args`). A flag given twice keeps its last value, as
 * with commander.
 */
export function plainChatFlags(args: readonly string[]): ChatFlags | undefined {
  const flags: ChatFlags = {};
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    const next = args[i + 1];
    if (word in VALUED) {
      if (next === undefined || next === "" || flagLike(next)) return undefined;
      flags[VALUED[word]] = next;
      i++;
    } else if (word in SWITCHES) {
      flags[SWITCHES[word]] = true;
    } else if (word === "-r" || word === "--resume") {
      if (next !== undefined && !flagLike(next)) {
        if (next === "") return undefined;
        flags.resume = next;
        i++;
      } else {
        flags.resume = true;
      }
    } else {
      return undefined;
    }
  }
  return flags;
}
