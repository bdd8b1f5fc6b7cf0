/**
 * The permissions of the commands that edit the configuration (`patchbay mcp add`,
 * `remove`, `enable`, `disable`, `add-json`, `import`): they start no server and open no
 * connection, so they get no network and no commands; they read (another client's file
 * wherever it is, the configuration, .env) and write exactly the files an edit replaces:
 * servers_config.json and .env, each through a file beside it, and patchbay's own folders
 * (the user-scope configuration is in one). A file that is a symbolic link is edited where
 * it points, so that place is granted too. No npm imports: the launcher computes them.
 *
 * @module
 */

import { dirname, join, resolve } from "node:path";
import { configDir, dataDir, stateDir } from "../paths.ts";
import { EDIT_SUFFIX } from "../config/edit_suffix.ts";
import type { LaunchArgs } from "./launch_args.ts";

export { EDIT_SUFFIX };

/** The flags an editing command runs under, for the files of `parsed` in `cwd`. */
export function editorFlags(parsed: LaunchArgs, cwd: string): string[] {
  const { files } = parsed;
  const config = resolve(cwd, files.config ?? "servers_config.json");
  const envFiles = files.envFile !== undefined
    ? [resolve(cwd, files.envFile)]
    : [join(cwd, ".env"), ...(files.config !== undefined ? [join(dirname(config), ".env")] : [])];
  // The user scope's files are in configDir(), granted whole; a link among them is
  // written where it points.
  const linked = [
    config,
    ...envFiles,
    join(configDir(), "servers_config.json"),
    join(configDir(), ".env"),
  ]
    .map(realPathOf).filter((f) => f !== undefined);
  const replaced = [...new Set([config, ...envFiles, ...linked])]
    .flatMap((f) => [f, f + EDIT_SUFFIX]);
  const logFile = files.logFile !== undefined ? [resolve(cwd, files.logFile)] : [];
  return [
    "--no-prompt",
    "--allow-env",
    "--allow-read",
    `--allow-write=${[...replaced, stateDir(), dataDir(), configDir(), ...logFile].join(",")}`,
  ];
}

/** Where `path` leads when it is a symbolic link; `undefined` otherwise. */
function realPathOf(path: string): string | undefined {
  try {
    if (!Deno.lstatSync(path).isSymlink) return undefined;
    return Deno.realPathSync(path);
  } catch {
    return undefined; // Missing (a new file) or a dangling link: nothing more to grant.
  }
}
