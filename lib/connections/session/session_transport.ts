/**
 * The transport of one connection attempt ({@linkcode createTransport}): a stdio process,
 * or streamable HTTP / SSE through the session's network, with OAuth's provider and
 * wrapper when the entry logs in and `bearerFetch` for its `headers` otherwise (under a
 * `headers_helper`'s wrapper when it has one); traced when tracing is on; each request
 * stamped with its trace context (`RequestTracer`).
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
import type { RequestTracer } from "../../telemetry/mcp_requests.ts";
import { activeTelemetry } from "../../telemetry/telemetry.ts";
import type { MessageObserver } from "../../transports/observer.ts";
import type { AnyTransport } from "./live_session.ts";
import type { RawToolSchemas } from "../raw_schemas.ts";
import type { HelperHeaders } from "../../secrets/headers_helper.ts";

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

/** What one connection attempt brings to its transport. */
export interface AttemptParts {
  /** The entry's OAuth provider, when it logs in (never for stdio). */
  oauth?: PatchbayOAuthProvider;
  /** Where the tools' schemas are kept as the server sent them. */
  rawSchemas: RawToolSchemas;
  /** The attempt's requests, each stamped with its trace context. */
  requests: RequestTracer;
  /** The entry's `headers_helper`, run for this attempt. */
  helper?: HelperHeaders;
  /** Joins this earlier streamable HTTP session instead of starting one. */
  sessionId?: string;
}

/** The transport for an entry. */
export function createTransport(
  config: ServerConfig,
  options: SessionTransportOptions,
  { oauth, rawSchemas, requests, helper, sessionId }: AttemptParts,
): AnyTransport {
  const observer = tracingObserver(config.name, config.transport, both(rawSchemas, requests));
  const outgoing = (message: Parameters<RequestTracer["outgoing"]>[0]) =>
    requests.outgoing(message);
  if (config.transport === "stdio") {
    return new StdioTransport({
      observer,
      outgoing,
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
  // Deno's own span of each request carries its URL: one holding a key is kept out.
  const base = activeTelemetry().guardFetch(config.url, network.fetch);
  return new HttpTransport({
    observer,
    outgoing,
    kind: config.transport,
    url: config.url,
    headers: config.headers,
    timeoutSeconds: config.timeoutSeconds,
    sseReadTimeoutSeconds: config.sseReadTimeoutSeconds,
    // The SDK reads tokens from the provider; the wrapper logs in and retries on a
    // refusal, which the SDK alone would only report. A headers helper's wrapper sets its
    // headers and, on a 401, runs it again and retries (so bearerFetch leaves 401s to it).
    authProvider: oauth,
    authorize: oauth
      ? (fetch) => oauth.wrapFetch(fetch)
      : helper && ((fetch) => helper.wrapFetch(fetch)),
    fetch: oauth ? base : bearerFetch(config, {
      log,
      base: base,
      unauthorizedToCaller: helper !== undefined,
    }),
    log,
    ...(sessionId ? { sessionId } : {}),
  });
}

/** One observer telling `first`, then `second`. */
function both(first: MessageObserver, second: MessageObserver): MessageObserver {
  return {
    sent(message) {
      first.sent?.(message);
      second.sent?.(message);
    },
    received(message) {
      first.received?.(message);
      second.received?.(message);
    },
    event(event) {
      first.event?.(event);
      second.event?.(event);
    },
  };
}
