/**
 * Which configuration file to read: `--config`, else ./servers_config.json, else the
 * user's own (`~/.config/patchbay/servers_config.json`, what `patchbay mcp add --scope
 * user` writes), else the project's example configuration.
 *
 * @module
 */

import { join } from "node:path";
import { DEFAULTS } from "../defaults.ts";
import { configDir } from "../paths.ts";

/** Where the configuration comes from. */
export interface ConfigLocation {
  path: string;
  /** The example configuration stood in for a missing ./servers_config.json. */
  usedExample: boolean;
  /** The user's own configuration stood in for a missing ./servers_config.json. */
  userScope?: boolean;
}

/**
 * Picks the file to read: the explicit `--config`, else ./servers_config.json, else the
 * user's own, else the project's example configuration (so a fresh clone runs), else the default path (whose
 * absence the reader then reports).
 */
export function locateConfig(explicit: string | undefined, projectDir: string): ConfigLocation {
  if (explicit) return { path: explicit, usedExample: false };
  if (exists(DEFAULTS.configFile)) return { path: DEFAULTS.configFile, usedExample: false };
  const user = join(configDir(), DEFAULTS.configFile);
  if (exists(user)) return { path: user, usedExample: false, userScope: true };
  const example = join(projectDir, DEFAULTS.exampleConfigFile);
  if (exists(example)) return { path: example, usedExample: true };
  return { path: DEFAULTS.configFile, usedExample: false };
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
