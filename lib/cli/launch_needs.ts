/**
 * What a command needs from the launcher, stated in its declaration
 * (`commands/_declarations*.ts`): the permission plan it runs under. The launcher
 * (`lib/permissions/launch_args.ts`) walks the declared commands to find the one a command
 * line names and reads its needs there, so a new command states its needs where it is
 * declared. Types and one list, importing only a type: the launcher loads it before every
 * command.
 *
 * @module
 */

import type { OptionDeclaration } from "./root_options.ts";

/**
 * The plan a command runs under:
 * - `servers`: the plan of the configured servers (`patchbay permissions --json`);
 * - `config-edit`: it writes the configuration and starts no server
 *   (`lib/permissions/editor_flags.ts`);
 * - `config-check`: it reads the configuration and what it names, and starts nothing
 *   (`lib/permissions/check_flags.ts`);
 * - `broad`: it computes the plan itself (looks for commands on PATH, reads stored logins
 *   wherever they are), so it runs under the broad flags;
 * - `trace-file`: it reads the file its first argument names, and nothing else.
 */
export type LaunchNeeds = "servers" | "config-edit" | "config-check" | "broad" | "trace-file";

/** Every value of {@linkcode LaunchNeeds}. */
export const LAUNCH_NEEDS: readonly LaunchNeeds[] = [
  "servers",
  "config-edit",
  "config-check",
  "broad",
  "trace-file",
];

/**
 * The part of a command's declaration the launcher reads (a `CommandDeclaration` is one):
 * its words, its options (their values, the files they name) and its needs.
 */
export interface CommandGrammar {
  name: string;
  aliases?: readonly string[];
  options?: readonly OptionDeclaration[];
  /** Runs when its group is given no subcommand (`sessions` is `sessions list`). */
  default?: true;
  /**
   * The plan it runs under; every command that runs states it (a test checks). A group
   * states none: its subcommands do.
   */
  needs?: LaunchNeeds;
  /** Whether it runs (a group without one prints its help when given no subcommand). */
  run?: unknown;
  commands?: readonly CommandGrammar[];
}
