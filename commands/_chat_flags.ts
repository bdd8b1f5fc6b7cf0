/**
 * The interactive session's command line read without commander (start-up cost): the default
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
  trace?: string;
  traceModel?: true;
}

/** Flags that take a value, by spelling. */
const VALUED: Readonly<Record<string, "config" | "envFile" | "logFile" | "trace">> = {
  "-c": "config",
  "--config": "config",
  "--env-file": "envFile",
  "--log-file": "logFile",
  "--trace": "trace",
};

/** Flags without a value, by spelling. */
const SWITCHES: Readonly<
  Record<string, "debug" | "yes" | "acceptFormDefaults" | "traceModel">
> = {
  "-d": "debug",
  "--debug": "debug",
  "-y": "yes",
  "--yes": "yes",
  "--accept-form-defaults": "acceptFormDefaults",
  "--trace-model": "traceModel",
};

/** Starts like a flag (commander's test): a lone `-` is a value. */
const flagLike = (word: string) => word.length > 1 && word.startsWith("-");

/**
 * The plain root flags at the start of `args`, and the words after them (from the first word
 * that is not a root flag); `undefined` when a root flag is not in its plain form. A flag
 * given twice keeps its last value, as with commander.
 */
function readRootFlags(
  args: readonly string[],
): { flags: ChatFlags; rest: readonly string[] } | undefined {
  const flags: ChatFlags = {};
  let i = 0;
  for (; i < args.length; i++) {
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
      break;
    }
  }
  return { flags, rest: args.slice(i) };
}

/**
 * The interactive session's flags when `args` holds nothing but plain root flags, else
 * `undefined` (commander then parses `args`).
 */
export function plainChatFlags(args: readonly string[]): ChatFlags | undefined {
  const read = readRootFlags(args);
  return read && read.rest.length === 0 ? read.flags : undefined;
}

/** The commands that touch no server, read without commander in their plain forms. */
export type QuickCommand = "config check" | "sessions list" | "permissions";

/** The switches each quick command takes (every other word leaves the line to commander). */
const QUICK_SWITCHES: Readonly<Record<QuickCommand, Readonly<Record<string, string>>>> = {
  "config check": { "--json": "json" },
  "sessions list": { "--json": "json", "-a": "all", "--all": "all" },
  "permissions": { "--json": "json", "--discover": "discover" },
};

/** The words that name each quick command. */
const QUICK_WORDS: readonly [readonly string[], QuickCommand][] = [
  [["config", "check"], "config check"],
  [["sessions", "list"], "sessions list"],
  [["sessions"], "sessions list"],
  [["permissions"], "permissions"],
];

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
  for (const [words, command] of QUICK_WORDS) {
    if (!words.every((word, i) => read.rest[i] === word)) continue;
    const options: ChatFlags & Record<string, unknown> = { ...read.flags };
    for (const word of read.rest.slice(words.length)) {
      const key = QUICK_SWITCHES[command][word];
      if (!key) return undefined;
      options[key] = true;
    }
    return { command, options };
  }
  return undefined;
}
