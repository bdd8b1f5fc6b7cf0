/**
 * What to do about a permission Deno refused, worded for how patchbay was started: under
 * the launcher, the grant comes from the configuration at the next start; otherwise the
 * flag belongs on the `deno run` / `deno install` command line.
 *
 * @module
 */

import { restartFile } from "./restart.ts";

/** Whether the launcher (`launch.ts`) started this process under its plan. */
export function startedByLauncher(): boolean {
  try {
    return Deno.env.get("PATCHBAY_LAUNCHER") === "narrow";
  } catch {
    return false; // Not granted: not started by the launcher.
  }
}

/** The remedy for a refused `flag`. */
export function permissionRemedy(flag: string): string {
  return startedByLauncher()
    ? "/refresh in the interactive client, or restart patchbay: either grants what the " +
      "configuration and .env then in effect need (`patchbay permissions` lists it); or start " +
      "it with --unrestricted"
    : `add ${flag} to the deno run / deno install command ` +
      "(`patchbay permissions` prints the full set for your configuration)";
}

/**
 * The remedy for a refused request to an OAuth server's authorization server: where the
 * launcher can restart the client, it discovers that server and restarts under a plan that
 * includes it (a command at once, the interactive client at its next `/refresh`).
 */
export function authorizationServerRemedy(flag: string): string {
  return restartFile()
    ? "patchbay finds the authorization server and restarts under a plan that includes it: " +
      "a command at once, the interactive client at the next /refresh"
    : permissionRemedy(flag);
}
