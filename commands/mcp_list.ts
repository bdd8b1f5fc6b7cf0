/**
 * `patchbay mcp list` and `patchbay mcp get <name>`: the servers of the configuration in
 * effect, as patchbay reads them (other clients' field names already mapped), secrets
 * never shown, each with its scope (the file it comes from: user, project, managed) and
 * the administrator's policy's refusal, if any. `--check` connects them and shows each
 * one's state with its diagnosis.
 *
 * @module
 */

import type { ServerConfig } from "../lib/config/types.ts";
import { EXIT, PatchbayError } from "../lib/errors.ts";
import { type Runtime, startUp } from "../lib/cli/startup.ts";
import { stderrStyle, stdoutStyle } from "../lib/terminal/style.ts";
import { stripTerminalEscapes } from "../lib/terminal/terminal.ts";
import { didYouMean } from "../lib/text/text.ts";
import { type ScriptOptions, statesJson, withServers } from "./_connect.ts";
import { renderServerStatus } from "./_status.ts";

/** Options of `mcp list` and `mcp get`. */
export interface McpListOptions extends ScriptOptions {
  /** Connect the servers and report whether each works. @default false */
  check?: boolean;
}

/** `mcp list`. */
export function mcpList(options: McpListOptions): Promise<number> {
  return listed(undefined, options);
}

/** `mcp get <name>`. */
export function mcpGet(name: string, options: McpListOptions): Promise<number> {
  return listed(name, options);
}

async function listed(name: string | undefined, options: McpListOptions): Promise<number> {
  if (options.check) {
    return withServers(
      options,
      ({ runtime, states, failed }) => {
        const servers = pick(runtime, name);
        if (options.json) {
          const json = {
            file: runtime.configPath,
            files: runtime.config.sources ?? [],
            servers: servers.map(describe),
            states: statesJson(states),
          };
          console.log(runtime.logger.redactor.redact(JSON.stringify(json, null, 2)));
        } else {
          print(runtime, servers, name !== undefined);
          console.log("");
          console.log(renderServerStatus(states, {
            style: stdoutStyle(),
            redactor: runtime.logger.redactor,
            surface: "script",
          }));
        }
        return Promise.resolve(failed.length > 0 ? EXIT.failure : EXIT.ok);
      },
      name === undefined ? undefined : (names) => names.filter((n) => n === name),
      {
        // Its own block lists every server, the failed ones with their diagnosis: once.
        showsFailures: true,
      },
    );
  }
  // Listing shows no value: the keychain is not asked (`--check` connects, and reads it).
  const runtime = await startUp(options, { keychain: false });
  for (const notice of runtime.notices) console.error(stderrStyle().dim(notice));
  const servers = pick(runtime, name);
  if (options.json) {
    const json = {
      file: runtime.configPath,
      files: runtime.config.sources ?? [],
      servers: servers.map(describe),
    };
    console.log(runtime.logger.redactor.redact(JSON.stringify(json, null, 2)));
  } else print(runtime, servers, name !== undefined);
  return EXIT.ok;
}

function pick(runtime: Runtime, name: string | undefined): ServerConfig[] {
  const all = runtime.config.servers;
  if (name === undefined) return all;
  const found = all.filter((s) => s.name === name);
  if (found.length > 0) return found;
  const suggestion = didYouMean(name, all.map((s) => s.name));
  throw new PatchbayError("usage", `No server '${name}' in ${runtime.configPath}`, {
    reason: all.length === 0
      ? "no server is configured"
      : `its servers are ${all.map((s) => s.name).join(", ")}`,
    remedy: suggestion ? `did you mean '${suggestion}'?` : "`patchbay mcp list` shows them",
  });
}

/** A server as JSON: what it is, never the values of its environment or headers. */
function describe(server: ServerConfig) {
  const common = {
    name: server.name,
    // Which file the entry comes from: user, project, managed (the policy's), explicit.
    ...(server.scope ? { scope: server.scope } : {}),
    transport: server.transport,
    disabled: server.disabled,
    ...(server.refused ? { refused: `${server.refused.reason} (${server.refused.file})` } : {}),
    trusted: server.trusted,
    timeout: server.timeoutSeconds,
    // The tool filters, when set: which tools the server's entry offers (tools-and-sessions.md).
    ...(server.includeTools ? { include_tools: server.includeTools } : {}),
    ...(server.excludeTools ? { exclude_tools: server.excludeTools } : {}),
  };
  if (server.transport === "stdio") {
    return {
      ...common,
      command: server.command,
      args: server.args,
      env: Object.keys(server.env),
      ...(server.cwd ? { cwd: server.cwd } : {}),
    };
  }
  return {
    ...common,
    url: server.url,
    headers: Object.keys(server.headers),
    ...(server.auth ? { auth: server.auth.method } : {}),
  };
}

function print(runtime: Runtime, servers: readonly ServerConfig[], detailed: boolean): void {
  const style = stdoutStyle();
  // A project's configuration may come with a cloned repository: what it says reaches the
  // terminal without its control characters, and without its secrets.
  const redact = (text: string) => stripTerminalEscapes(runtime.logger.redactor.redact(text));
  if (servers.length === 0) {
    console.log(`No servers in ${runtime.configPath} (add one: patchbay mcp add <name> ...)`);
    return;
  }
  if (!detailed) {
    const files = runtime.config.sources ?? [{ scope: "explicit", path: runtime.configPath }];
    console.log(style.dim(`${files.map((f) => `${f.path} (${f.scope})`).join(", ")}:`));
    const width = Math.max(...servers.map((s) => s.name.length));
    const scopeWidth = Math.max(...servers.map((s) => (s.scope ?? "").length));
    for (const server of servers) {
      const where = server.transport === "stdio"
        ? [server.command, ...server.args].join(" ")
        : server.url;
      const state = server.refused
        ? style.yellow("  (refused by the administrator's policy)")
        : server.disabled
        ? style.dim("  (disabled)")
        : "";
      console.log(
        redact(
          `  ${server.name.padEnd(width)}  ${(server.scope ?? "").padEnd(scopeWidth)}  ` +
            `${server.transport.padEnd(15)}  ${where}`,
        ) + state,
      );
    }
    return;
  }
  const [server] = servers;
  const json = describe(server);
  const file = runtime.config.sources?.find((source) => source.scope === server.scope)?.path;
  console.log(style.bold(redact(server.name)) + style.dim(`  (${file ?? runtime.configPath})`));
  for (const [key, value] of Object.entries(json)) {
    if (key === "name") continue;
    const shown = Array.isArray(value) ? value.join(" ") || "none" : String(value);
    const label = key === "env" || key === "headers" ? `${key} (names)` : key;
    console.log(redact(`  ${label.padEnd(14)} ${shown}`));
  }
}
