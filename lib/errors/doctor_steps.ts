/**
 * The remedies of `patchbay doctor`'s findings (`lib/doctor/`): part of the failure table
 * (`lib/errors/failure_table.ts`), kept in a file of their own so the table stays within the
 * size of a file. The doctor is a command: they name commands, flags and fields, the same on
 * both surfaces; a function takes the values only known when the check runs.
 *
 * @module
 */

import { perSurface, type Remedy, type RemedyText, ROWS } from "./failure_table.ts";

/** Steps of the remedies of the doctor's findings. */
export const DOCTOR_STEPS = {
  /** A check that met a condition patchbay does not recognise. */
  checkFailed: "run the doctor again with --debug and look at the log",
  /** The key variable `variable` set in the shell, and differently in .env. */
  keyOverridden: (variable: string): string =>
    `unset ${variable} in your shell (unset ${variable}) so that .env ` +
    "applies, or put the right key in the environment",
  /** LLM.model missing from the provider's list; `suggestion`: the closest model, if any. */
  unknownModel: (suggestion: string | undefined): string =>
    "set LLM.model to a model the provider offers" +
    (suggestion ? ` (did you mean "${suggestion}"?)` : ""),
  /** A provider without a model list, so the key was not verified. */
  noModelList: "nothing to do if chat requests work; otherwise check LLM.base_url (it usually " +
    "ends in /v1)",
  /** stdio servers that download through a proxy at `url` they do not get. */
  proxyForServers: (url: string): string =>
    `add "env": {"HTTPS_PROXY": "${url}"} to those server entries (a first \`npx -y\` ` +
    "run downloads the server)",
  /** A proxy variable for the other scheme only; `variable`: the one the model's needs. */
  strayProxy: (variable: string): string => `if a proxy is needed, set ${variable} as well`,
  /** A host name that does not resolve; `proxyVariable`: the proxy's variable, if one applies. */
  checkHost: (proxyVariable: string | undefined): string =>
    proxyVariable ? `check ${proxyVariable}` : "check the address (LLM.base_url or the provider)",
  /** A host name with no DNS record, reached without a proxy: `remedy`, and the network row's. */
  unresolved: (remedy: RemedyText): Remedy => perSurface`${remedy}; ${ROWS.network.remedy}`,
  /** A request to the OAuth callback listener on `port` that did not reach it. */
  localhostBlocked: (port: number): string =>
    `allow connections to localhost:${port} (local firewall, a proxy ` +
    "for localhost, or a hosts file that does not map localhost to 127.0.0.1/::1)",
  /** No browser can be opened for an OAuth login. */
  browser: "set BROWSER to a browser command (e.g. BROWSER=firefox), or open the authorization " +
    "URL patchbay prints in any browser that can reach localhost:3000 on this machine " +
    "(over SSH: ssh -L 3000:localhost:3000)",
  /** A server that did not connect, for no reason recorded. */
  serverLog: "run `patchbay --debug tools` and read the log for this server",
  /** Lines of the environment file that could not be read. */
  envLines: "write each line as NAME=value (quote values with spaces or #), then restart " +
    "patchbay",
  /** The example configuration in use; `example`: its path, `file`: the configuration's name. */
  copyExample: (example: string, file: string): string =>
    `copy ${example} to ./${file} and make it your own, or pass --config`,
  /** A configuration with warnings, listed below the finding. */
  seeWarnings: "see each warning below",
  /** A log file that cannot be written. */
  logFile: "fix the permissions of the file and its folder, or pass --log-file with a " +
    "writable path (patchbay keeps running without a log, but says so at every start)",
} as const;
