/**
 * The permissions of `patchbay config check`: it reads the configuration and .env and
 * looks at the folders they name (`roots`, wherever they are: under the servers' plan it
 * may not look there, and could not say whether one exists); it starts nothing, so it gets
 * no network and no commands, and writes only patchbay's own folders (the log). No npm
 * imports: the launcher computes them.
 *
 * @module
 */

import { resolve } from "node:path";
import { configDir, dataDir, stateDir } from "../paths.ts";
import type { LaunchArgs } from "./launch_args.ts";

/** The flags `config check` runs under, for the files of `parsed` in `cwd`. */
export function configCheckFlags(parsed: LaunchArgs, cwd: string): string[] {
  const own = [stateDir(), dataDir(), configDir()];
  const logFile = parsed.files.logFile !== undefined ? [resolve(cwd, parsed.files.logFile)] : [];
  return [
    "--no-prompt",
    "--allow-env",
    "--allow-read",
    `--allow-write=${[...own, ...logFile].join(",")}`,
  ];
}
