/**
 * The start of every session that talks to servers (the interactive client, one-shot
 * mode, the scripting commands): the session's OAuth runtime (only when an entry uses
 * OAuth: otherwise nothing ever listens on the callback port), a connection manager for
 * the configuration, started, and closed again on request or when `signal` aborts
 * (Ctrl+C during start-up, a pending browser login included).
 *
 * The interactive client does not wait (`wait: false`): its prompt comes first and the
 * servers connect behind it (it starts them once the prompt is shown). The commands wait, and `skip` (their first Ctrl+C) gives up
 * on the servers still connecting instead of on everything.
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
  /**
   * `false`: resolve at once with the manager not started: the caller starts it
   * (`void manager.start()`) when it suits it, e.g. once its prompt is on the screen, and
   * the servers connect in the background (the manager's events report each;
   * `manager.pending()` names those still on their way). @default true
   */
  wait?: boolean;
  /**
   * Aborting while the servers connect skips the ones still connecting (their attempts
   * stop and they end `failed`, saying they were skipped); start-up goes on with the others.
   */
  skip?: AbortSignal;
  /** Called when `skip` aborts, with the servers it skipped (none: nothing was connecting). */
  onSkip?: (servers: string[]) => void;
  /** See `ConnectionManagerOptions.closePromptly`. @default false */
  closePromptly?: boolean;
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
    closePromptly: options.closePromptly,
  });
  const onAbort = () => manager.close();
  const onSkip = () => options.onSkip?.(manager.skipPending());
  // A skip before any server started (Ctrl+C while memory opened) has nothing to skip.
  if (options.skip?.aborted) options.onSkip?.([]);
  if (options.signal?.aborted) await manager.close();
  if (options.wait === false) return { manager, states: manager.states() };
  options.signal?.addEventListener("abort", onAbort, { once: true });
  options.skip?.addEventListener("abort", onSkip, { once: true });
  try {
    const states = await manager.start();
    return { manager, states };
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    options.skip?.removeEventListener("abort", onSkip);
  }
}
