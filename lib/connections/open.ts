/**
 * The start of every session that talks to servers (the interactive client now, the
 * REPL and one-shot mode later): a connection manager for the configuration, started,
 * and closed again on request or when `signal` aborts (Ctrl+C during start-up).
 *
 * @module
 */

import type { HttpServerConfig } from "../config/types.ts";
import type { OAuthClientProvider } from "@modelcontextprotocol/client";
import type { Runtime } from "../startup.ts";
import { ConnectionManager } from "./manager.ts";
import type { ServerRequestHandlers, ServerStatus } from "./types.ts";

/** Options of {@linkcode openConnections}. */
export interface OpenConnectionsOptions {
  /** Aborting closes every connection (start-up included). */
  signal?: AbortSignal;
  handlers?: ServerRequestHandlers;
  authProviderFor?: (server: HttpServerConfig) => OAuthClientProvider | undefined;
  awaitAuthorization?: (server: HttpServerConfig, signal: AbortSignal) => Promise<URLSearchParams>;
  /** Folders offered to servers as roots. @default [Deno.cwd()] */
  roots?: string[];
}

/** A started manager and the state of every server after start-up. */
export interface OpenConnections {
  manager: ConnectionManager;
  states: ServerStatus[];
}

/** Creates the manager for `runtime`'s configuration and connects every server. */
export async function openConnections(
  runtime: Runtime,
  options: OpenConnectionsOptions = {},
): Promise<OpenConnections> {
  const manager = new ConnectionManager({
    servers: runtime.config.servers,
    log: runtime.logger.child("connections"),
    redactor: runtime.logger.redactor,
    handlers: options.handlers,
    authProviderFor: options.authProviderFor,
    awaitAuthorization: options.awaitAuthorization,
    roots: options.roots,
    // Servers inherit HOME, PATH and the like as patchbay sees them (.env included).
    parentEnv: (name) => runtime.env.get(name),
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
