/**
 * The shape of a command's declaration (`commands/_declarations.ts`): plain data from which
 * `main.ts` builds commander's tree and the quick reader reads the plain command lines.
 * Types only, and one helper: nothing here loads commander.
 *
 * @module
 */

import type { Command } from "commander";
import type { LaunchNeeds } from "./launch_needs.ts";
import type { OptionDeclaration } from "./root_options.ts";

export type { LaunchNeeds, OptionDeclaration };

/**
 * What a command does: `options` are the root flags merged with its own, `args` its
 * arguments in order, `program` the root of commander's tree (absent when the line was read
 * without commander, which only quick commands are).
 */
export type CommandRun = (
  options: object,
  args: readonly unknown[],
  program?: Command,
) => Promise<number | void>;

/** A command's argument, as commander declares it (`<required>`, `[optional]`, `[many...]`). */
export interface ArgumentDeclaration {
  name: string;
  /** The line of `--help`; without one, commander shows no Arguments section. */
  description?: string;
  /** The only values accepted (commander checks them, completions offer them). */
  choices?: readonly string[];
}

/** One command (or group of subcommands). */
export interface CommandDeclaration {
  name: string;
  aliases?: readonly string[];
  description: string;
  arguments?: readonly ArgumentDeclaration[];
  options?: readonly OptionDeclaration[];
  /** Runs when its group is given no subcommand (`sessions` is `sessions list`). */
  default?: true;
  /**
   * Words after its arguments name a mistyped command of its group (`sessions lsit`) rather
   * than arguments too many.
   */
  wordsAreCommands?: true;
  /**
   * Read without commander when its line is plain (plain root flags, its words, then only
   * its switches). It takes no arguments and touches no server.
   */
  quick?: true;
  /** Shown after `--help`. */
  helpAfter?: string;
  /** Shown (dimmed) after a usage error. */
  helpAfterError?: string;
  /**
   * The module the command word's work needs, loaded alongside commander rather than after
   * the parse (top-level words only). A literal specifier, so that `deno compile` and the
   * permission plan see it.
   */
  prefetch?: () => Promise<unknown>;
  /**
   * The permission plan it runs under (`lib/cli/launch_needs.ts`), read by the launcher:
   * every command that runs states it (a test checks); a group states none.
   */
  needs?: LaunchNeeds;
  run?: CommandRun;
  commands?: readonly CommandDeclaration[];
}

/** Types a command's work: its options and its arguments as commander gives them. */
export function action<O, A extends unknown[] = []>(
  work: (options: O, args: A, program?: Command) => Promise<number | void>,
): CommandRun {
  return (options, args, program) => work(options as O, args as A, program);
}
