/**
 * What an OAuth login needs on this machine (docs/troubleshooting.md): port 3000 free for
 * the callback, localhost reachable on it, and a browser to open.
 *
 * The port is checked by starting the client's own callback listener for a moment, so a
 * busy port is reported exactly as a login would report it, naming the process holding it.
 *
 * @module
 */

import type { Config } from "../config/types.ts";
import type { Environment } from "../env.ts";
import { OAuthFailedError } from "../errors.ts";
import { browserCommands } from "../oauth/browser.ts";
import { CallbackListener } from "../oauth/callback.ts";
import { usesOAuth } from "../oauth/mod.ts";
import { resolveCommandPath } from "../permissions/command_path.ts";
import { type CheckResult, failure, pass, skip, timeoutSignal, warn } from "./check.ts";
import { DOCTOR_STEPS } from "../errors/doctor_steps.ts";

/** How long the loopback request to the listener may take. */
const LOOPBACK_PROBE_MS = 2000;

/** Options of {@linkcode checkCallbackPort}. */
export interface CallbackCheckOptions {
  /** Tests only: the contract fixes the port at 3000. */
  port?: number;
  signal?: AbortSignal;
}

/**
 * The servers of the configuration that log in in the browser, by name (the
 * client_credentials grant needs no callback).
 */
function oauthServers(config: Config): string[] {
  return config.servers.filter((s) =>
    !s.disabled && usesOAuth(s) && (s.auth.grant ?? "authorization_code") === "authorization_code"
  ).map((s) => s.name);
}

/** Why no browser login is needed: no OAuth at all, or only the client_credentials grant. */
function noBrowserLogin(config: Config): string {
  return config.servers.some((s) => !s.disabled && usesOAuth(s))
    ? "no server logs in in the browser (only grants without one)"
    : "no server uses OAuth";
}

/**
 * Binds the callback port as a login would, then asks `http://localhost:<port>/` through
 * it: the answer proves nothing (a firewall, a hosts file) stands between the browser and
 * patchbay on this machine.
 */
export async function checkCallbackPort(
  config: Config,
  options: CallbackCheckOptions = {},
): Promise<CheckResult> {
  const name = "oauth_port";
  const servers = oauthServers(config);
  if (servers.length === 0) {
    return skip(name, `${noBrowserLogin(config)}; nothing listens on port 3000`);
  }
  const listener = new CallbackListener({ port: options.port });
  try {
    await listener.start(servers[0]);
  } catch (error) {
    return failure(name, error);
  }
  try {
    const url = `http://localhost:${listener.port}/`;
    const signal = timeoutSignal(LOOPBACK_PROBE_MS, options.signal);
    let reached = false;
    let problem = "";
    try {
      const response = await fetch(url, { signal });
      const body = await response.text();
      reached = body.includes("patchbay");
      if (!reached) problem = `something else answered (HTTP ${response.status})`;
    } catch (error) {
      problem = (error as Error).message;
    }
    if (!reached) {
      return failure(
        name,
        new OAuthFailedError(servers[0], {
          reason: `port ${listener.port} is free, but a request to ${url} did not reach ` +
            `patchbay's listener (${problem}); a browser's redirect would not either`,
          remedy: DOCTOR_STEPS.localhostBlocked(listener.port),
        }),
      );
    }
    return pass(
      name,
      `port ${listener.port} is free, and localhost reaches patchbay's callback listener ` +
        `there (for ${servers.map((s) => `'${s}'`).join(", ")})`,
    );
  } finally {
    await listener.close();
  }
}

/** Whether a browser can be opened for the authorization page. */
export function checkBrowser(
  config: Config,
  env: Environment,
  os: typeof Deno.build.os = Deno.build.os,
): CheckResult {
  const name = "browser";
  if (oauthServers(config).length === 0) return skip(name, noBrowserLogin(config));
  const variable = env.get("BROWSER");
  const commands = browserCommands("https://example.invalid/", variable, os);
  const programs = commands.map((argv) => argv[0]);
  const found = programs.find((program) => {
    const path = resolveCommandPath(program, env.get("PATH"), Deno.cwd(), os);
    // The bare name back means this process may not look in the PATH folders (the narrow
    // plan): the launcher, which may, granted the opener only where it found it.
    if (path === program && !program.includes("/")) return runGranted(program);
    return path !== undefined;
  });
  const source = variable ? "$BROWSER" : "the platform's opener";
  if (found) return pass(name, `the authorization page opens with ${found} (${source})`);
  return warn(
    name,
    `no browser can be opened: ${programs.join(", ")} (${source}) not found on PATH; ` +
      "OAuth authentication failed is likely unless the URL is opened by hand",
    DOCTOR_STEPS.browser,
  );
}

/** Whether Deno would let this process run `program` (resolved on PATH by Deno itself). */
function runGranted(program: string): boolean {
  try {
    return Deno.permissions.querySync({ name: "run", command: program }).state === "granted";
  } catch {
    return false;
  }
}
