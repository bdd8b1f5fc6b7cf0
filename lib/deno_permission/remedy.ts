/**
 * What to do about a permission Deno refused, worded for how patchbay was started: under
 * the launcher, the grant comes from the configuration at the next start; in a compiled
 * binary, from the launcher or a new build; otherwise the flag belongs on the `deno run` /
 * `deno install` command line. Every refusal a person
 * reads takes its remedy from here, so the two kinds of start never get each other's
 * advice.
 *
 * A leaf: it imports nothing from lib/ but {@link ./launched.ts}.
 *
 * @module
 */

import { compiledBinary, restartFile, startedByLauncher } from "./launched.ts";

/** Options of {@linkcode denoPermissionRemedy}. */
export interface RemedyOptions {
  /**
   * Another way out, added after the grant (e.g. `set NAME in .env` for a variable).
   * @default none
   */
  otherwise?: string;
  /**
   * The refusal came on the way to an OAuth server's authorization server: where the
   * launcher can restart the client, it discovers that server itself.
   * @default false
   */
  authorizationServer?: boolean;
}

/** The remedy for a refused `flag` (`--allow-net=host:port`, `--allow-env=NAME`, …). */
export function denoPermissionRemedy(flag: string, options: RemedyOptions = {}): string {
  if (options.authorizationServer && restartFile()) {
    return "patchbay finds the authorization server and restarts under a plan that includes it: " +
      "a command at once, the interactive client at the next /refresh";
  }
  const remedy = compiledBinary()
    ? binaryRemedy(flag)
    : startedByLauncher()
    ? "/refresh in the interactive client, or restart patchbay: either grants what the " +
      "configuration and .env then in effect need (`patchbay permissions` lists it); or start " +
      "it with --unrestricted"
    : `add ${flag} to the deno run / deno install command ` +
      "(`patchbay permissions` prints the full set for your configuration)";
  return options.otherwise ? `${remedy}; or ${options.otherwise}` : remedy;
}

/** What a compiled binary's person can do about a permission it lacks. */
export function binaryRemedy(flag: string): string {
  return `this patchbay is a compiled binary, whose permissions were fixed when it was built: ` +
    "run patchbay through its launcher instead (`deno task start`, or the `patchbay` of " +
    "`deno task install`), which grants what the configuration needs, or build it again " +
    `with ${flag} added to the flags of scripts/compile.ts`;
}
