/**
 * Where patchbay keeps its files, following the XDG base directory convention (macOS
 * included, as command-line tools there usually do) and the platform's own places on Windows.
 *
 * The `start` task grants write access to exactly the Linux defaults below; a user who
 * moves them with XDG_* variables gets a permission message naming the flag to add.
 *
 * @module
 */

import { join } from "node:path";
import { DenoPermissionError } from "./errors/run.ts";

const APP = "patchbay";

/** Reads one variable, tolerating a sandbox that does not allow it. */
function env(name: string): string | undefined {
  try {
    return Deno.env.get(name) || undefined;
  } catch {
    return undefined;
  }
}

function home(): string {
  const found = env("HOME") ?? env("USERPROFILE");
  if (found) return found;
  // Without HOME the folders would land in the working directory: under a grant of named
  // variables that leaves HOME out, say which flag is missing instead.
  const variable = Deno.build.os === "windows" ? "USERPROFILE" : "HOME";
  if (Deno.permissions.querySync({ name: "env", variable }).state !== "granted") {
    throw new DenoPermissionError(`--allow-env=${variable}`, `reading ${variable}`);
  }
  return Deno.cwd();
}

function base(kind: "state" | "data" | "config"): string {
  if (Deno.build.os === "windows") {
    const local = env("LOCALAPPDATA") ?? join(home(), "AppData", "Local");
    const roaming = env("APPDATA") ?? join(home(), "AppData", "Roaming");
    return kind === "config" ? roaming : local;
  }
  const xdg = { state: "XDG_STATE_HOME", data: "XDG_DATA_HOME", config: "XDG_CONFIG_HOME" }[kind];
  const fallback = { state: ".local/state", data: ".local/share", config: ".config" }[kind];
  return env(xdg) ?? join(home(), fallback);
}

/** Logs and REPL history: `~/.local/state/patchbay`. */
export function stateDir(): string {
  return join(base("state"), APP);
}

/** The embedded conversation store: `~/.local/share/patchbay`. */
export function dataDir(): string {
  return join(base("data"), APP);
}

/** OAuth tokens and user settings: `~/.config/patchbay`. */
export function configDir(): string {
  return join(base("config"), APP);
}

/** The default log file. */
export function defaultLogFile(): string {
  return statePath("patchbay.log");
}

/** A file in the state directory, e.g. the REPL history. */
export function statePath(name: string): string {
  return join(stateDir(), name);
}
