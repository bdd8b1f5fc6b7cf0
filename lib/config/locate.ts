/**
 * Which configuration files to read. `--config FILE` means exactly that file. Without it,
 * the user's own (`~/.config/patchbay/servers_config.json`, what `patchbay mcp add --scope
 * user` writes) and the project's (`./servers_config.json`) are both read, merged with the
 * project's winning (lib/config/merge.ts); with neither, the project's example
 * configuration stands in (so a fresh clone runs). The administrator's policy is read
 * besides, whatever these are (lib/policy/).
 *
 * @module
 */

import { join } from "node:path";
import { DEFAULTS } from "../defaults.ts";
import { configDir } from "../paths.ts";
import type { ConfigScope } from "./types.ts";

/** One configuration file to read, and its scope. */
export interface ScopeFile {
  scope: ConfigScope;
  path: string;
}

/** The configuration files to read. */
export interface ConfigSources {
  /** Lowest precedence first; at least one (a missing one is reported by the reader). */
  files: ScopeFile[];
  /** The example configuration stood in for a missing ./servers_config.json. */
  usedExample: boolean;
  /** The file messages call "the configuration": the project's, else the only one. */
  primary: string;
}

/** Where the configuration comes from (the file messages name; see {@linkcode locateSources}). */
export interface ConfigLocation {
  path: string;
  /** The example configuration stood in for a missing ./servers_config.json. */
  usedExample: boolean;
  /** Only the user's own configuration is read (the folder has none of its own). */
  userScope?: boolean;
}

/** The user scope's configuration file. */
export function userConfigPath(): string {
  return join(configDir(), DEFAULTS.configFile);
}

/**
 * The files to read: the explicit `--config` alone; else the user's and the project's,
 * those that exist; else the project's example configuration; else the project's path
 * (whose absence the reader then reports).
 */
export function locateSources(explicit: string | undefined, projectDir: string): ConfigSources {
  if (explicit) {
    return {
      files: [{ scope: "explicit", path: explicit }],
      usedExample: false,
      primary: explicit,
    };
  }
  const files: ScopeFile[] = [];
  if (exists(userConfigPath())) files.push({ scope: "user", path: userConfigPath() });
  if (exists(DEFAULTS.configFile)) files.push({ scope: "project", path: DEFAULTS.configFile });
  if (files.length > 0) return { files, usedExample: false, primary: files.at(-1)!.path };
  const example = join(projectDir, DEFAULTS.exampleConfigFile);
  if (exists(example)) {
    return { files: [{ scope: "example", path: example }], usedExample: true, primary: example };
  }
  const project = { scope: "project" as const, path: DEFAULTS.configFile };
  return { files: [project], usedExample: false, primary: project.path };
}

/** The file messages name for the configuration (see {@linkcode locateSources}). */
export function locateConfig(explicit: string | undefined, projectDir: string): ConfigLocation {
  const sources = locateSources(explicit, projectDir);
  const only = sources.files.length === 1 ? sources.files[0] : undefined;
  return {
    path: sources.primary,
    usedExample: sources.usedExample,
    ...(only?.scope === "user" ? { userScope: true } : {}),
  };
}

/**
 * Whether there is a file at `path`. A pipe or device there is found too: the reader then
 * refuses it, saying what it is, instead of another configuration being read silently.
 */
function exists(path: string): boolean {
  try {
    return !Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}
