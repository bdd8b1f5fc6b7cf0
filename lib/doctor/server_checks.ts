/**
 * Each MCP server, connected through the client's own connection manager: a failure
 * carries the manager's diagnosis (command on PATH, transport, port, path, OAuth support),
 * never a second opinion.
 *
 * The doctor never logs in: an OAuth server that answers with a demand for authorization
 * has shown that it is up and speaks OAuth, and the stored login says whether the client
 * will need the browser.
 *
 * @module
 */

import type { Config, HttpServerConfig, ServerConfig } from "../config/types.ts";
import { ConnectionManager } from "../connections/manager.ts";
import type { ServerStatus } from "../connections/types.ts";
import type { Environment } from "../env.ts";
import { OAuthFailedError } from "../errors.ts";
import type { Log } from "../log.ts";
import { relativeTime, summarizeLogin } from "../oauth/messages.ts";
import { FileTokenStore, type TokenStore, usesOAuth } from "../oauth/mod.ts";
import type { Redactor } from "../redact.ts";
import { plural } from "../text.ts";
import { type CheckResult, failure, pass, skip, warn } from "./check.ts";

/** Options of {@linkcode checkServers}. */
export interface ServerCheckOptions {
  env: Environment;
  log: Log;
  redactor?: Redactor;
  /** Stored OAuth logins. @default FileTokenStore in ~/.config/patchbay/oauth */
  tokenStore?: TokenStore;
  /** Aborting closes every connection. */
  signal?: AbortSignal;
}

/** Connects every server at once and reports each, in configuration order. */
export async function checkServers(
  config: Config,
  options: ServerCheckOptions,
): Promise<CheckResult[]> {
  if (config.servers.length === 0) return [];
  const manager = new ConnectionManager({
    servers: config.servers,
    log: options.log,
    redactor: options.redactor,
    // Servers inherit HOME, PATH and the like exactly as in a session (.env included).
    parentEnv: (name) => options.env.get(name),
  });
  const onAbort = () => manager.close();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const started = Date.now();
  try {
    const states = await manager.start();
    const results: CheckResult[] = [];
    for (const server of config.servers) {
      const state = states.find((s) => s.name === server.name);
      results.push(await serverResult(server, state, started, options));
    }
    return results;
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    await manager.close();
  }
}

/** The check name of a server. */
export function serverCheckName(server: string): string {
  return `server:${server}`;
}

async function serverResult(
  server: ServerConfig,
  state: ServerStatus | undefined,
  started: number,
  options: ServerCheckOptions,
): Promise<CheckResult> {
  const name = serverCheckName(server.name);
  if (server.disabled || state?.disabled) {
    return skip(name, 'not connected: "disabled": true in the configuration');
  }
  if (state?.state === "connected") {
    const ms = Math.max(0, state.since.getTime() - started);
    const info = state.serverInfo
      ? `${state.serverInfo.name} ${state.serverInfo.version}`
      : "the server";
    const { tools, prompts, resources } = state.counts;
    return pass(
      name,
      `connected over ${server.transport} in ${ms} ms: ${info} offers ` +
        `${plural(tools, "tool")}, ${plural(prompts, "prompt")}, ${plural(resources, "resource")}`,
    );
  }
  if (usesOAuth(server) && state?.error instanceof OAuthFailedError) {
    return await oauthServerResult(server, options.tokenStore ?? new FileTokenStore());
  }
  if (state?.error) return failure(name, state.error);
  return {
    name,
    status: "fail",
    finding: `did not connect (state: ${state?.state ?? "unknown"})`,
    remedy: "run `patchbay --debug tools` and read the log for this server",
    details: [],
  };
}

/**
 * The server demanded authorization, so it is up and speaks OAuth (a server without OAuth
 * support fails earlier, with the contract's "remove auth; use headers").
 */
async function oauthServerResult(
  server: HttpServerConfig,
  store: TokenStore,
): Promise<CheckResult> {
  const name = serverCheckName(server.name);
  const answered = `${server.url} answers and asks for OAuth authorization`;
  let summary;
  try {
    summary = summarizeLogin(server.name, server.url, await store.load(server.name), Date.now());
  } catch (error) {
    return failure(name, error);
  }
  const expires = summary.expiresAt
    ? `, expires ${relativeTime(Date.parse(summary.expiresAt), Date.now())}`
    : "";
  switch (summary.state) {
    case "logged_in":
    case "expired_refreshable":
      return pass(
        name,
        `${answered}; a login is stored (issuer ${summary.issuer ?? "unknown"}${expires}` +
          `${summary.state === "expired_refreshable" ? ", refreshed on use" : ""}); the doctor ` +
          "does not use it",
      );
    case "url_changed":
      return warn(
        name,
        `${answered}; the stored login is for ${summary.url}, not this URL, so it is not used`,
        `log in again: patchbay auth login ${server.name}`,
      );
    default:
      return warn(
        name,
        `${answered}; no usable login is stored` +
          (summary.state === "expired" ? " (the stored one expired and cannot be refreshed)" : ""),
        `log in now with \`patchbay auth login ${server.name}\` (or let the first session open ` +
          "the browser); the callback arrives at http://localhost:3000/callback",
      );
  }
}
