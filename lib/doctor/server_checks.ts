/**
 * Each MCP server, connected through the client's own connection manager: a failure
 * carries the manager's diagnosis (command on PATH, transport, port, path, OAuth support),
 * never a second opinion.
 *
 * OAuth entries go through the client's OAuth runtime too (stored tokens, a refresh,
 * OAuth-support detection), made non-interactive: where a session would open the browser
 * the doctor stops and says so. It never binds the callback port or opens a browser.
 *
 * @module
 */

import type { Config, ServerConfig } from "../config/types.ts";
import { ConnectionManager } from "../connections/manager.ts";
import type { ServerStatus } from "../connections/types.ts";
import type { Environment } from "../env.ts";
import { OAuthLoginRequiredError } from "../errors.ts";
import { describeGrant, grantOf } from "../oauth/messages.ts";
import type { Log } from "../log/log.ts";
import { createOAuthRuntime, type TokenStore, tokenStoreFor, usesOAuth } from "../oauth/mod.ts";
import type { Redactor } from "../redact/redact.ts";
import { plural } from "../text/text.ts";
import { type CheckResult, failure, pass, skip, warn } from "./check.ts";
import { CONNECTION_STEPS } from "../errors/connection_steps.ts";
import { DOCTOR_STEPS } from "../errors/doctor_steps.ts";

/** Options of {@linkcode checkServers}. */
export interface ServerCheckOptions {
  env: Environment;
  log: Log;
  redactor?: Redactor;
  /** Stored OAuth logins. @default files, or Redis for `Memory.backend: redis` (`tokenStoreFor`) */
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
  const oauth = createOAuthRuntime(config.servers, {
    log: options.log.child("oauth"),
    redactor: options.redactor,
    store: options.tokenStore ??
      tokenStoreFor(config.memory, options.env, { log: options.log, redactor: options.redactor }),
    getEnv: (name) => options.env.get(name),
    interactive: false,
  });
  const manager = new ConnectionManager({
    servers: config.servers,
    log: options.log,
    redactor: options.redactor,
    oauth,
    // Servers inherit HOME, PATH and the like exactly as in a session (.env included).
    env: options.env,
  });
  const onAbort = () => manager.close();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const started = Date.now();
  try {
    const states = await manager.start();
    return config.servers.map((server) =>
      serverResult(server, states.find((s) => s.name === server.name), started)
    );
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    await manager.close();
  }
}

/** The check name of a server. */
export function serverCheckName(server: string): string {
  return `server:${server}`;
}

function serverResult(
  server: ServerConfig,
  state: ServerStatus | undefined,
  started: number,
): CheckResult {
  const name = serverCheckName(server.name);
  if (server.refused) {
    return skip(
      name,
      `not connected: refused by the administrator's policy (${server.refused.file}): ` +
        server.refused.reason,
    );
  }
  if (server.disabled || state?.disabled) {
    return skip(name, 'not connected: "disabled": true in the configuration');
  }
  if (state?.state === "connected") {
    const ms = Math.max(0, state.since.getTime() - started);
    const info = state.serverInfo
      ? `${state.serverInfo.name} ${state.serverInfo.version}`
      : "the server";
    const { tools, prompts, resources } = state.counts;
    const finding =
      `connected over ${state.transport}${
        usesOAuth(server) ? ` with OAuth${grantNote(server.auth)}` : ""
      } in ${ms} ms: ` +
      `${info} offers ${plural(tools, "tool")}, ${plural(prompts, "prompt")}, ` +
      plural(resources, "resource") +
      // A bare url that fell back: which transport, and why.
      (state.transport !== server.transport ? `; ${state.transportReason}` : "");
    // A list the server declares but cannot serve: it works, with that list empty.
    const warnings = state.warnings ?? [];
    return warnings.length > 0
      ? warn(name, `${finding}; ${warnings.join("; ")}`, CONNECTION_STEPS.listWarning)
      : pass(name, finding);
  }
  const error = state?.error;
  if (error instanceof OAuthLoginRequiredError && usesOAuth(server)) {
    return warn(
      name,
      `${server.url} supports OAuth, and ${error.reason}: the doctor never logs in`,
      error.remedy,
    );
  }
  if (error) return failure(name, error);
  return {
    name,
    status: "fail",
    finding: `did not connect (state: ${state?.state ?? "unknown"})`,
    remedy: DOCTOR_STEPS.serverLog,
    details: [],
  };
}

/** The grant of an OAuth entry, when it is not the usual browser login. */
function grantNote(auth: Parameters<typeof grantOf>[0]): string {
  const grant = grantOf(auth);
  const other = grant.grant !== undefined && grant.grant !== "authorization_code";
  return other || grant.dpop ? ` (${describeGrant(grant)})` : "";
}
