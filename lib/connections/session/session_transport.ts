/**
 * The transport of one connection attempt ({@linkcode createTransport}): a stdio process,
 * or streamable HTTP / SSE through the session's network, with OAuth's provider and
 * wrapper when the entry logs in and `bearerFetch` for its `headers` otherwise; traced
 * when tracing is on.
 *
 * @module
 */

import type { ServerConfig } from "../../config/types.ts";
import type { Log } from "../../log/log.ts";
import { bearerFetch, type PatchbayOAuthProvider } from "../../oauth/mod.ts";
import { type Network, PROCESS_NETWORK } from "../../proxy.ts";
import { HttpTransport } from "../../transports/http.ts";
import { StdioTransport } from "../../transports/stdio.ts";
import { tracingObserver } from "../../trace/active.ts";
import type { AnyTransport } from "./live_session.ts";
import type { RawToolSchemas } from "../raw_schemas.ts";

/** What {@linkcode createTransport} takes from the attempt's options (`openSession`'s). */
export interface SessionTransportOptions {
  log: Log;
  /** Where stdio servers' inherited variables come from. @default Deno.env.get */
  parentEnv?: (name: string) => string | undefined;
  /** How HTTP servers are reached. @default PROCESS_NETWORK */
  network?: Network;
  /** Time a stdio server gets to exit by itself once its stdin is closed. */
  stdinCloseGraceMs?: number;
}

/** The transport for an entry. */
export function createTransport(
  config: ServerConfig,
  options: SessionTransportOptions,
  oauth: PatchbayOAuthProvider | undefined,
  rawSchemas: RawToolSchemas,
  /** Joins this earlier streamable HTTP session instead of starting one. */
  sessionId?: string,
): AnyTransport {
  const observer = tracingObserver(config.name, config.transport, rawSchemas);
  if (config.transport === "stdio") {
    return new StdioTransport({
      observer,
      command: config.command,
      args: config.args,
      env: config.env,
      cwd: config.cwd,
      parentEnv: options.parentEnv,
      stdinCloseGraceMs: options.stdinCloseGraceMs,
      log: options.log.child("stderr"),
    });
  }
  const log = options.log.child("http");
  const network = options.network ?? PROCESS_NETWORK;
  return new HttpTransport({
    observer,
    kind: config.transport,
    url: config.url,
    headers: config.headers,
    timeoutSeconds: config.timeoutSeconds,
    sseReadTimeoutSeconds: config.sseReadTimeoutSeconds,
    // The SDK reads tokens from the provider; the wrapper logs in and retries on a
    // refusal, which the SDK alone would only report.
    authProvider: oauth,
    authorize: oauth && ((fetch) => oauth.wrapFetch(fetch)),
    fetch: oauth ? network.fetch : bearerFetch(config, { log, base: network.fetch }),
    log,
    ...(sessionId ? { sessionId } : {}),
  });
}
