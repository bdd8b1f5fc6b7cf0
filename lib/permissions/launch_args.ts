/**
 * What the launcher needs from patchbay's command line: the files the plan is computed
 * for (`--config`, `--env-file`, `--log-file`), whether the person asked for the broad
 * flags (`--unrestricted`, the launcher's own option), and whether the command needs no
 * permission at all (`--version`, `--help`). No npm imports: the launcher must stay cheap.
 *
 * @module
 */

import { fileOptions } from "../cli/root_options.ts";

/** The `mcp` subcommands that write the configuration. */
export const EDITING_SUBCOMMANDS: ReadonlySet<string> = new Set([
  "add",
  "add-json",
  "remove",
  "rm",
  "enable",
  "disable",
  "import",
]);

/** The launcher's own option: run the client under the broad flags. */
export const UNRESTRICTED_OPTION = "--unrestricted";

/**
 * The global options whose values the plan depends on, with their short forms: those the
 * root declaration marks as files (`--config`, `--env-file`, `--log-file`, `--trace`).
 */
const FILE_OPTIONS = fileOptions() as Readonly<
  Record<string, keyof LaunchArgs["files"]>
>;

/**
 * `read --output FILE`: the one file a command writes where the person says; the client
 * is granted writing it, and only it.
 */
const OUTPUT_OPTION = "--output";

/** The command line as the launcher reads it. */
export interface LaunchArgs {
  /** The arguments for the client, without the launcher's own options. */
  clientArgs: string[];
  /** `--unrestricted` was given. */
  unrestricted: boolean;
  /** The command prints the version or help only, and needs no permission. */
  informational: boolean;
  /**
   * The command is `permissions`, which computes the plan: it looks for commands on PATH
   * and reads stored logins wherever they are, so it runs under the broad flags.
   */
  planning: boolean;
  /**
   * The command edits the configuration (`mcp add`, `mcp remove`, ...): it runs under the
   * editor's flags (`editor_flags.ts`) rather than the plan of the servers.
   */
  editing: boolean;
  /** The values of `--config`, `--env-file`, `--log-file`, `--trace`, as given. */
  files: { config?: string; envFile?: string; logFile?: string; trace?: string };
  /** The value of `--output` (`read` writes a resource there), as given. */
  output?: string;
  /**
   * `trace show FILE` / `trace stats FILE`: the trace file to read. The command reads that
   * file and nothing else (no configuration, no server, no network).
   */
  traceReading?: string;
  /**
   * `config check`: it reads the configuration and looks at what it names (the roots'
   * folders, wherever they are) and starts nothing, so it reads everywhere and runs nothing.
   */
  configChecking?: true;
}

/** Reads `args`; everything after `--` is left alone (it belongs to a prompt or a tool). */
export function parseLaunchArgs(args: readonly string[]): LaunchArgs {
  const clientArgs: string[] = [];
  const files: LaunchArgs["files"] = {};
  let unrestricted = false;
  let words = 0;
  let informational = false;
  let planning = false;
  let editing = false;
  let command: string | undefined;
  let output: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      clientArgs.push(...args.slice(i));
      break;
    }
    if (arg === UNRESTRICTED_OPTION) {
      unrestricted = true;
      continue;
    }
    clientArgs.push(arg);
    const equals = arg.indexOf("=");
    const name = arg.startsWith("--") && equals > 0 ? arg.slice(0, equals) : arg;
    if (name === OUTPUT_OPTION) {
      if (name !== arg) output = arg.slice(equals + 1);
      else if (i + 1 < args.length) {
        output = args[i + 1];
        clientArgs.push(args[++i]);
      }
      continue;
    }
    const field = FILE_OPTIONS[name];
    if (field) {
      if (name !== arg) files[field] = arg.slice(equals + 1);
      else if (i + 1 < args.length) {
        files[field] = args[i + 1];
        clientArgs.push(args[++i]);
      }
      continue;
    }
    if (arg.startsWith("-c") && arg.length > 2 && !arg.startsWith("--")) {
      files.config = arg.slice(2);
      continue;
    }
    if (!arg.startsWith("-")) words++;
    if (words === 1 && !arg.startsWith("-")) command = arg;
    if (words === 2 && !arg.startsWith("-") && command === "mcp") {
      editing = EDITING_SUBCOMMANDS.has(arg);
    }
    if (words === 1 && !arg.startsWith("-") && arg === "permissions") planning = true;
    // `patchbay --version` or `patchbay --help` before any command word: nothing to plan.
    if (words === 0 && ["-v", "--version", "-h", "--help"].includes(arg)) informational = true;
    if (words === 1 && arg === "help") informational = true;
    // `patchbay tools --help`, `patchbay mcp list -h`: help of a command starts nothing.
    if (arg === "-h" || arg === "--help") informational = true;
  }
  // `patchbay mcp` alone prints its help.
  if (command === "mcp" && words === 1) informational = true;
  return {
    clientArgs,
    unrestricted,
    informational,
    planning,
    editing,
    files,
    output,
    ...traceReading(clientArgs),
    ...(commandWords(clientArgs).slice(0, 2).join(" ") === "config check"
      ? { configChecking: true as const }
      : {}),
  };
}

/** The words of a command line that are not options or their values. */
function commandWords(args: readonly string[]): string[] {
  const words: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") break;
    if (FILE_OPTIONS[arg] || ["--server", "--method", "-n", "--last"].includes(arg)) {
      i++; // its value
      continue;
    }
    if (!arg.startsWith("-")) words.push(arg);
  }
  return words;
}

/** The file of `trace show FILE` or `trace stats FILE` (options before or after it). */
function traceReading(args: readonly string[]): { traceReading?: string } {
  const words = commandWords(args);
  return words[0] === "trace" && (words[1] === "show" || words[1] === "stats") && words[2]
    ? { traceReading: words[2] }
    : {};
}
