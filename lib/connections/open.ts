/**
 * The start of every session that talks to servers (the interactive client now, the
 * REPL and one-shot mode later): the session's OAuth runtime (only when an entry uses
 * OAuth: otherwise nothing ever listens on the callback port), a connection manager for
 * the configuration, started, and closed again on request or when `signal` aborts
 * (Ctrl+C during start-up, a pending browser login included).
 *
 * @module
 */

import { createOAuthRuntime, type OAuthEvent, tokenStoreFor } from "../oauth/mod.ts";
import type { Runtime } from "../startup.ts";
import { ConnectionManager } from "./manager.ts";
import type { ServerRequestHandlers, ServerStatus } from "./types.ts";

/** Options of {@linkcode openConnections}. */
export interface OpenConnectionsOptions {
  /** Aborting closes every connection (start-up included) and cancels a login. */
  signal?: AbortSignal;
  handlers?: ServerRequestHandlers;
  /**
   * What OAuth has to tell the person (the authorization URL, which must always be shown,
   * a browser that did not open, a completed login): `describeOAuthEvent` words it.
   */
  onOAuthEvent?: (event: OAuthEvent) => void;
}

/** A started manager and the state of every server after start-up. */
export interface OpenConnections {
  /** Closing it also closes the session's OAuth runtime. */
  manager: ConnectionManager;
  states: ServerStatus[];
}

/** Creates the manager for `runtime`'s configuration and connects every server. */
export async function openConnections(
  runtime: Runtime,
  options: OpenConnectionsOptions = {},
): Promise<OpenConnections> {
  const log = runtime.logger.child("oauth");
  const redactor = runtime.logger.redactor;
  const oauth = createOAuthRuntime(runtime.config.servers, {
    log,
    redactor,
    onEvent: options.onOAuthEvent,
    // $BROWSER and the proxy variables may come from .env, like every other setting.
    getEnv: (name) => runtime.env.get(name),
    store: tokenStoreFor(runtime.config.memory, runtime.env, {
      log: log.child("store"),
      redactor,
      onEvent: options.onOAuthEvent,
    }),
  });
  const manager = new ConnectionManager({
    servers: runtime.config.servers,
    log: runtime.logger.child("connections"),
    redactor: runtime.logger.redactor,
    handlers: options.handlers,
    oauth,
    // Servers inherit HOME, PATH and the like, and HTTP connections honour the proxy
    // variables, as patchbay sees them (.env included).
    env: runtime.env,
  });
  const onAbort = () => manager.close();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    if (options.signal?.aborted) await manager.close();
    const states = await manager.start();
    return { manager, states };
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
}
