/**
 * What the configured servers need of the permission plan: an HTTP server's address, the
 * proxy to it, its client key and its organisation grant (lib/oauth/grant_needs.ts); a
 * stdio server's working directory, its command by the file it resolves to, what `npx`
 * has installed for it, the variables every stdio server is passed, and the `kill`
 * program that ends what servers started. Disabled servers (and those the policy refuses)
 * need nothing.
 *
 * @module
 */

import type { Config, HttpServerConfig, StdioServerConfig } from "../config/types.ts";
import type { MachineFacts, NeedsSink } from "../deno_permission/needs.ts";
import { organisationGrantNeeds } from "../oauth/grant_needs.ts";
import { hostPort, proxyNeeds } from "../proxy.ts";
import { childEnvironment, INHERITED_ENV_NAMES, KILL_PROGRAM } from "../transports/process.ts";
import { npxCacheDir, packageRunOf } from "./package_runner.ts";

/** What the servers' needs read of the plan's inputs. */
export interface ServerNeedsInputs extends MachineFacts {
  config: Pick<Config, "servers">;
}

function enabled(config: Pick<Config, "servers">) {
  return config.servers.filter((server) => !server.disabled);
}

function stdioServers(config: Pick<Config, "servers">): StdioServerConfig[] {
  return enabled(config).filter((s): s is StdioServerConfig => s.transport === "stdio");
}

/** The working directories of stdio servers (read before they start). */
export function stdioFolderNeeds(plan: NeedsSink, inputs: ServerNeedsInputs): void {
  for (const server of stdioServers(inputs.config)) {
    if (server.cwd) {
      plan.add("read", server.cwd, `working directory of server '${server.name}'`);
    }
  }
}

/** Each HTTP server's address and proxy, its client key, and its organisation grant. */
export function httpServerNeeds(plan: NeedsSink, inputs: ServerNeedsInputs): void {
  const http = enabled(inputs.config).filter((s): s is HttpServerConfig => s.transport !== "stdio");
  for (const server of http) {
    const what = `MCP server '${server.name}' (${server.transport})`;
    plan.add("net", hostPort(server.url), what);
    proxyNeeds(plan, inputs, server.url, `requests to ${what}`);
    if (server.auth?.privateKeyFile) {
      plan.add(
        "read",
        server.auth.privateKeyFile,
        `the private key of server '${server.name}' (auth.private_key_file)`,
      );
    }
    organisationGrantNeeds(plan, inputs, server);
  }
}

/** The variables stdio servers are passed, and each one's command. */
export function stdioNeeds(plan: NeedsSink, inputs: ServerNeedsInputs): void {
  // Granted whether or not a stdio server is configured yet: a server added later (by
  // /refresh) then needs only its own command, not a restart for variables every one gets.
  for (const name of INHERITED_ENV_NAMES) {
    plan.add("env", name, "passed on to stdio servers");
  }
  const stdio = stdioServers(inputs.config);
  if (stdio.length === 0) return;
  // Deno.kill needs --allow-run for every program; the kill program is what lets shutdown
  // reach what a server started (`sh -c "worker & exec server"`) under narrow flags.
  const kill = inputs.resolveCommand(KILL_PROGRAM, inputs.env.get("PATH"), inputs.cwd);
  if (kill) {
    plan.add(
      "run",
      kill,
      "ends what stdio servers started when they are closed (their process group)",
    );
  }
  for (const server of stdio) {
    const searchPath = server.env.PATH ?? inputs.env.get("PATH");
    const path = inputs.resolveCommand(server.command, searchPath, server.cwd ?? inputs.cwd);
    // A bare name not found on PATH is not granted: Deno would drop it with a notice of its
    // own (the configured text, raw), and starting it fails as "not found" whatever the
    // grant, which the connection's diagnosis reports. A path is granted as written.
    const granted = path ?? (isBareName(server.command) ? undefined : server.command);
    if (granted) plan.add("run", granted, `starts server '${server.name}'`);
    npxCacheNeeds(plan, inputs, server);
    if (!path) {
      plan.note(
        `'${server.command}' (server '${server.name}') is not on the PATH the server gets, ` +
          "so it is not granted: Deno allows a command by the file it resolves to; install " +
          'it (or fix "command") and /refresh, or run `patchbay permissions` again.',
      );
    }
  }
}

/** A command Deno looks for on PATH (no directory in it), as opposed to a path. */
function isBareName(command: string): boolean {
  return !/[\\/]/.test(command);
}

/**
 * What `npx` has installed, read to tell a server still installing (its first connect gets
 * longer: package_runner.ts), in the cache the server's environment names.
 */
function npxCacheNeeds(plan: NeedsSink, inputs: ServerNeedsInputs, server: StdioServerConfig) {
  const run = packageRunOf(server.command, server.args);
  if (!run || (run.runner !== "npx" && !run.runner.startsWith("npm "))) return;
  const env = childEnvironment(server.env, (name) => inputs.env.get(name));
  const dir = npxCacheDir((name) => env[name], inputs.os);
  if (dir) {
    plan.add("read", dir, `what npx has installed (is server '${server.name}' installing?)`);
  }
}
