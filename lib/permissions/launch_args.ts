/**
 * What the launcher needs from patchbay's command line: the files the plan is computed
 * for (`--config`, `--env-file`, `--log-file`, `--trace`), whether the person asked for the
 * broad flags (`--unrestricted`, the launcher's own option), whether the command needs no
 * permission at all (`--version`, `--help`), and the plan the command runs under. That plan
 * and the options' meanings are read from the commands' one declaration
 * (`commands/_declarations*.ts`, given by `launch.ts`): which command the words name, its
 * `needs`, the options that take a value, name a file (`file`) or a file it writes
 * (`writes`). No npm imports: the launcher must stay cheap.
 *
 * @module
 */

import type { CommandGrammar, LaunchNeeds } from "../cli/launch_needs.ts";
import { type OptionDeclaration, optionSpelling } from "../cli/root_options.ts";

export type { CommandGrammar, LaunchNeeds };

/** The launcher's own option: run the client under the broad flags. */
export const UNRESTRICTED_OPTION = "--unrestricted";

/** The command line as the launcher reads it. */
export interface LaunchArgs {
  /** The arguments for the client, without the launcher's own options. */
  clientArgs: string[];
  /** `--unrestricted` was given. */
  unrestricted: boolean;
  /** The command prints the version or help only, and needs no permission. */
  informational: boolean;
  /**
   * The plan the command runs under, as its declaration states it (`servers` for a word
   * that names no declared command: the client reports it).
   */
  needs: LaunchNeeds;
  /**
   * The command needs the `broad` flags (`permissions`, which computes the plan: it looks
   * for commands on PATH and reads stored logins wherever they are).
   */
  planning: boolean;
  /**
   * The command edits the configuration (`mcp add`, `mcp remove`, ...): it runs under the
   * editor's flags (`editor_flags.ts`) rather than the plan of the servers.
   */
  editing: boolean;
  /** The values of `--config`, `--env-file`, `--log-file`, `--trace`, as given. */
  files: { config?: string; envFile?: string; logFile?: string; trace?: string };
  /** The value of an option declared `writes` (`read --output`), as given. */
  output?: string;
  /**
   * `trace show FILE` / `trace stats FILE` (`needs: "trace-file"`): the file to read. The
   * command reads that file and nothing else (no configuration, no server, no network).
   */
  traceReading?: string;
  /**
   * `config check`: it reads the configuration and looks at what it names (the roots'
   * folders, wherever they are) and starts nothing, so it reads everywhere and runs nothing.
   */
  configChecking?: true;
}

/** An option of the command line: its declaration and whether it takes a value. */
interface KnownOption {
  declaration: OptionDeclaration;
  key: string;
  value: "required" | "optional" | "none";
}

/** The spellings (`-c`, `--config`) of `options`, each with what it is. */
function spellings(options: readonly OptionDeclaration[]): Map<string, KnownOption> {
  const known = new Map<string, KnownOption>();
  for (const declaration of options) {
    const { short, long, key, value } = optionSpelling(declaration.flags);
    const option = { declaration, key, value };
    if (short) known.set(short, option);
    known.set(long, option);
  }
  return known;
}

/** The subcommand of `group` that `word` names (by name or alias). */
function subcommand(group: CommandGrammar, word: string): CommandGrammar | undefined {
  return group.commands?.find((c) => c.name === word || c.aliases?.includes(word));
}

/**
 * Reads `args` against the declared commands under `root`; everything after `--` is left
 * alone (it belongs to a prompt or a tool).
 */
export function parseLaunchArgs(args: readonly string[], root: CommandGrammar): LaunchArgs {
  const clientArgs: string[] = [];
  const files: LaunchArgs["files"] = {};
  let unrestricted = false;
  let informational = false;
  let output: string | undefined;
  let command = root;
  let known = spellings(root.options ?? []);
  const path: string[] = [];
  const positionals: string[] = [];
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
    if (arg.startsWith("-") && arg.length > 1) {
      // `patchbay --version` or `patchbay --help` before any command word: nothing to plan;
      // `patchbay tools --help`, `patchbay mcp list -h`: help of a command starts nothing.
      if (arg === "-h" || arg === "--help") informational = true;
      if (path.length === 0 && positionals.length === 0 && (arg === "-v" || arg === "--version")) {
        informational = true;
      }
      const equals = arg.startsWith("--") ? arg.indexOf("=") : -1;
      // `-cb.json`: a short option with its value attached.
      const attached = !arg.startsWith("--") && arg.length > 2;
      const name = equals > 0 ? arg.slice(0, equals) : attached ? arg.slice(0, 2) : arg;
      const option = known.get(name);
      if (!option || option.value === "none") continue;
      let value: string | undefined;
      if (equals > 0) value = arg.slice(equals + 1);
      else if (attached) value = arg.slice(2);
      else if (
        i + 1 < args.length && args[i + 1] !== "--" &&
        (option.value === "required" || !args[i + 1].startsWith("-"))
      ) {
        value = args[++i];
        clientArgs.push(value);
      }
      if (value === undefined) continue;
      if (option.declaration.file) files[option.key as keyof LaunchArgs["files"]] = value;
      if (option.declaration.writes) output = value;
      continue;
    }
    const next = positionals.length === 0 ? subcommand(command, arg) : undefined;
    if (next) {
      command = next;
      path.push(arg);
      known = new Map([...known, ...spellings(next.options ?? [])]);
    } else {
      positionals.push(arg);
      // `patchbay help`: commander's own command, help only.
      if (path.length === 0 && positionals.length === 1 && arg === "help") informational = true;
    }
  }
  // A group given no subcommand runs its default one, or prints its help (`patchbay mcp`).
  if (!command.run && command.commands && positionals.length === 0) {
    const fallback = command.commands.find((c) => c.default);
    if (fallback) command = fallback;
    else informational = true;
  }
  // A word that names no command: the client says so (as the interactive session would).
  const needs: LaunchNeeds = command.needs ?? "servers";
  return {
    clientArgs,
    unrestricted,
    informational,
    needs,
    planning: needs === "broad",
    editing: needs === "config-edit",
    files,
    output,
    ...(needs === "trace-file" && positionals[0] !== undefined
      ? { traceReading: positionals[0] }
      : {}),
    ...(needs === "config-check" ? { configChecking: true as const } : {}),
  };
}
