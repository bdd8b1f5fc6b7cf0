/**
 * patchbay's root flags, declared once: commander's tree (`main.ts`), the quick reader of the
 * interactive session's plain flags (`commands/_chat_flags.ts`) and the launcher's reading of
 * the files the permission plan depends on (`lib/permissions/launch_args.ts`) all read this
 * list. No imports at all: the launcher loads it before every command.
 *
 * @module
 */

/** One option as commander declares it, with what the readers without commander need. */
export interface OptionDeclaration {
  /** commander's spelling: `-c, --config <path>`, `--debug`, `-r, --resume [id]`. */
  flags: string;
  /** The line of `--help`. */
  description: string;
  /**
   * The value's parser (commander's custom option processing): `previous` is what earlier
   * occurrences gave; `fail(message)` is the error commander reports as usage.
   */
  parse?: (value: string, previous: unknown, fail: (message: string) => Error) => unknown;
  /** The value names a file the permission plan grants (read or written). */
  file?: true;
  /**
   * The value names the one file the command writes where the person says (`read
   * --output`): the launcher grants writing it, and only it.
   */
  writes?: true;
}

/** An option's spellings, its key in the options object, and whether it takes a value. */
export interface OptionSpelling {
  /** `-c`, when it has a short form. */
  short?: string;
  /** `--config`. */
  long: string;
  /** commander's attribute name: `--env-file` is `envFile`. */
  key: string;
  /** `required` for `<value>`, `optional` for `[value]`, `none` for a switch. */
  value: "required" | "optional" | "none";
}

/** Reads `flags` as commander does for the forms declared here (`-s, --long <value>`). */
export function optionSpelling(flags: string): OptionSpelling {
  const words = flags.split(/[ ,|]+/).filter((word) => word.length > 0);
  const short = words.find((word) => /^-[^-]/.test(word));
  const long = words.find((word) => word.startsWith("--"));
  if (!long) throw new Error(`option '${flags}' has no long form`);
  const argument = words.find((word) => /^[<[]/.test(word));
  return {
    ...(short ? { short } : {}),
    long,
    key: long.slice(2).replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase()),
    value: argument?.startsWith("<") ? "required" : argument ? "optional" : "none",
  };
}

/** The flags every command takes, in `--help`'s order (`--version` and `--help` aside). */
export const ROOT_OPTIONS: readonly OptionDeclaration[] = [
  {
    flags: "-c, --config <path>",
    description:
      "configuration file (default: ./servers_config.json, else the example configuration)",
    file: true,
  },
  { flags: "--env-file <path>", description: "environment file (default: ./.env)", file: true },
  {
    flags: "--log-file <path>",
    description: "log file (default: ~/.local/state/patchbay/patchbay.log)",
    file: true,
  },
  { flags: "-d, --debug", description: "verbose logging, mirrored to stderr" },
  { flags: "-y, --yes", description: "run tool calls and sampling requests without asking" },
  {
    flags: "--accept-form-defaults",
    description: "answer servers' forms with their defaults when every required field has one " +
      "(decline otherwise) instead of asking",
  },
  {
    flags: "-r, --resume [id]",
    description:
      "continue the most recent conversation, or the one with this id (a prefix is enough)",
  },
  {
    flags: "--trace <file>",
    description:
      "record every JSON-RPC message to and from every server in this file (docs/trace.md)",
    file: true,
  },
  {
    flags: "--trace-model",
    description: "include model requests in the trace (method, model, tokens)",
  },
];
