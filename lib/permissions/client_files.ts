/**
 * The files the client reads and trusts, as the launcher sees them before it starts the
 * client: the configurations and .env files it may read (lib/config/locate.ts,
 * lib/env.ts `chooseEnvFile`), which the remembered plan is checked against, and the
 * refusal of any of them, or of patchbay's own folders, that others may write. No npm
 * imports: the launcher runs before every command.
 *
 * @module
 */

import { dirname, join, resolve } from "node:path";
import { SharedWritableError } from "../errors.ts";
import { configDir, stateDir } from "../paths.ts";
import { refuseSharedWritable } from "../files/shared_writable.ts";
import type { LaunchArgs } from "./launch_args.ts";

/**
 * The configurations and .env files the client may read: `--config`'s; else the project's
 * and the user's (both read) and, last, the example standing in for neither (`project`:
 * patchbay's checkout, when it runs from one).
 */
export function clientFiles(
  parsed: LaunchArgs,
  cwd: string,
  project: string | undefined,
): { configs: string[]; envFiles: string[] } {
  const explicit = parsed.files.config;
  const configs = explicit !== undefined ? [resolve(cwd, explicit)] : [
    join(cwd, "servers_config.json"),
    join(configDir(), "servers_config.json"),
    ...(project !== undefined ? [join(project, "servers_config.example.json")] : []),
  ];
  // The .env files the client will read: the named one; else the working directory's over
  // the user's; with --config, the working directory's, else the one beside that file.
  const envFiles = parsed.files.envFile !== undefined ? [resolve(cwd, parsed.files.envFile)] : [
    join(cwd, ".env"),
    ...(explicit !== undefined
      ? [join(dirname(resolve(cwd, explicit)), ".env")]
      : [join(configDir(), ".env")]),
  ];
  return { configs, envFiles: [...new Set(envFiles)] };
}

/**
 * The refusal of a file or folder others may write among those the client will trust: the
 * state folder and the launcher's remembered plans (`plans`), and every configuration and
 * .env file the client will read. (The administrator's policy is the client's to judge: it
 * refuses to start on one others may write, saying so in the policy's own words.)
 */
export function sharedInputs(
  parsed: LaunchArgs,
  cwd: string,
  plans: string,
  project?: string,
): SharedWritableError | undefined {
  const { configs, envFiles } = clientFiles(parsed, cwd, project);
  // The user's and the project's are both read; the example only without either.
  const read = configs.length > 1 ? configs.slice(0, 2).filter(isFile) : configs;
  const checks: [string | undefined, string, boolean][] = [
    [stateDir(), "the state folder", true],
    [plans, "the folder of remembered permission plans", true],
    ...(read.length > 0 ? read : [configs.find(isFile)]).map((path) =>
      [path, "the configuration file", false] as [string | undefined, string, boolean]
    ),
    ...envFiles.filter(isFile).map((path) =>
      [path, "the environment file", false] as [string, string, boolean]
    ),
  ];
  try {
    for (const [path, what, ownFolder] of checks) {
      if (path !== undefined) refuseSharedWritable(path, what, { ownFolder });
    }
  } catch (error) {
    if (error instanceof SharedWritableError) return error;
    throw error;
  }
  return undefined;
}

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}
