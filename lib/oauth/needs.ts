/**
 * What OAuth logins need of the permission plan: the callback listener on port 3000, the
 * program that opens the authorization page, the program that names the port's holder,
 * and the authorization servers of stored logins (unknown before the first one: a note).
 *
 * @module
 */

import type { Config, HttpServerConfig } from "../config/types.ts";
import { DEFAULTS } from "../defaults.ts";
import type { MachineFacts, NeedsSink } from "../deno_permission/needs.ts";
import { browserCommands } from "./browser.ts";
import { usesOAuth } from "./uses_oauth.ts";

/** What {@linkcode oauthNeeds} reads of the plan's inputs. */
export interface OAuthNeedsInputs extends MachineFacts {
  config: Pick<Config, "servers">;
  /** Authorization-server addresses from stored OAuth logins, by server name. */
  oauthHosts?: ReadonlyMap<string, readonly string[]>;
}

/** The enabled HTTP servers that log in with OAuth. */
export function oauthServers(config: Pick<Config, "servers">): HttpServerConfig[] {
  return config.servers.filter((s): s is HttpServerConfig =>
    !s.disabled && s.transport !== "stdio" && usesOAuth(s)
  );
}

/** Adds what logging in needs, when an enabled server uses OAuth. */
export function oauthNeeds(plan: NeedsSink, inputs: OAuthNeedsInputs): void {
  const oauth = oauthServers(inputs.config);
  if (oauth.length === 0) return;
  const os = inputs.os ?? Deno.build.os;
  const port = DEFAULTS.oauthCallback.port;
  const why = `the OAuth callback listener (always http://localhost:${port})`;
  plan.add("net", `127.0.0.1:${port}`, why);
  plan.add("net", `[::1]:${port}`, why);
  plan.add("net", `localhost:${port}`, why);
  plan.add("env", "BROWSER", "the command that opens the authorization page");
  for (const argv of browserCommands("https://example.invalid/", inputs.env.get("BROWSER"), os)) {
    helperProgramNeeds(
      plan,
      inputs,
      argv[0],
      "opens the OAuth authorization page in the browser",
      "the authorization URL is printed to open by hand",
    );
  }
  // port_holder.ts: /proc needs --allow-all, so Linux names the holder with `ss`.
  const holderProgram = os === "darwin" ? "lsof" : os === "linux" ? "ss" : undefined;
  if (holderProgram) {
    helperProgramNeeds(
      plan,
      inputs,
      holderProgram,
      "names the process holding port 3000 when it is taken",
      "a taken port 3000 is reported without the name of its holder",
    );
  }
  const unknown: string[] = [];
  for (const server of oauth) {
    const hosts = inputs.oauthHosts?.get(server.name) ?? [];
    for (const host of hosts) {
      plan.add("net", host, `authorization server of '${server.name}' (from its stored login)`);
    }
    if (hosts.length === 0) unknown.push(server.name);
  }
  if (unknown.length > 0) {
    plan.note(
      `OAuth: the authorization server of ${unknown.map((n) => `'${n}'`).join(", ")} is ` +
        "known only after the first login, and may be on another host than the MCP server. " +
        "Log in once (`patchbay auth login <server>`), or run `patchbay doctor`, which " +
        "discovers it, then run `patchbay permissions` again to include it; or add its " +
        "host:port to --allow-net.",
    );
  }
}

/**
 * A program patchbay can do without (the browser opener, the port-3000 holder's namer):
 * granted by the file it resolves to on PATH. One that is not on PATH is left out with a
 * note: Deno cannot grant a name it cannot resolve (it says so on stderr at every start),
 * and starting it fails the same way granted or not.
 */
function helperProgramNeeds(
  plan: NeedsSink,
  inputs: MachineFacts,
  program: string,
  why: string,
  without: string,
): void {
  const path = inputs.resolveCommand(program, inputs.env.get("PATH"), inputs.cwd);
  if (path) plan.add("run", path, why);
  else plan.note(`'${program}' is not on PATH, so it is not granted (it ${why}): ${without}.`);
}
