/**
 * The start of every session that talks to servers (the interactive client, one-shot
 * mode, the scripting commands): the session's OAuth runtime (only when an entry uses
 * OAuth: otherwise nothing ever listens on the callback port), a connection manager for
 * the configuration, started, and closed again on request or when `signal` aborts
 * (Ctrl+C during start-up, a pending browser login included).
 *
 * The interactive client does not wait (`wait: false`): its prompt comes first and the
 * servers connect behind it (it starts them once the prompt is shown). The commands wait,
 * and `skip` (their first Ctrl+C) gives up on the servers still connecting instead of on
 * everything.
 *
 * @module
 */

import { type OAuthEvent, OAuthRuntime, tokenStoreFor } from "../oauth/mod.ts";
import type { Config } from "../config/types.ts";
import type { Environment } from "../env.ts";
import type { Logger } from "../log/log.ts";
import { ConnectionManager } from "./manager.ts";
import { ListCache } from "./list_cache.ts";
import { statePath } from "../paths.ts";
import { traceOAuthEvent } from "../trace/active.ts";
import type { ServerRequestHandlers, ServerStatus } from "./types.ts";
import type { Surface } from "../errors/failure_table.ts";

/**
 * What {@linkcode openConnections} needs from start-up, and nothing more: the servers, the
 * memory settings (OAuth tokens live in the same store as conversations), the environment
 * (.env included) and the logger. `{ ...runtime.config, env, logger }` fits.
 */
export interface ConnectionSetup extends Pick<Config, "servers" | "memory"> {
  /** Servers inherit HOME, PATH and the proxy variables as patchbay sees them. */
  env: Environment;
  logger: Logger;
}

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
  /**
   * Where failures are shown: a failed browser login reads the same on the browser's page.
   * @default "repl"
   */
  surface?: Surface;
  /**
   * Called once the servers have begun connecting (with `wait`), with their states then:
   * which of them wait for a package runner's install (`ServerStatus.installing`).
   */
  onConnecting?: (states: ServerStatus[]) => void;
  /**
   * Where the lists kept across runs are (lib/connections/list_cache.ts); `false`: none are
   * kept or used. @default `lists/` in the state folder
   */
  listCacheDir?: string | false;
}

/** A started manager and the state of every server after start-up. */
export interface OpenConnections {
  /** Closing it also closes the session's OAuth runtime. */
  manager: ConnectionManager;
  states: ServerStatus[];
}

/** Creates the manager for `setup`'s servers and connects every one. */
export async function openConnections(
  setup: ConnectionSetup,
  options: OpenConnectionsOptions = {},
): Promise<OpenConnections> {
  const log = setup.logger.child("oauth");
  // OAuth steps reach the wire trace too (without URLs or tokens).
  const onOAuthEvent = (event: OAuthEvent) => {
    traceOAuthEvent(event);
    options.onOAuthEvent?.(event);
  };
  const redactor = setup.logger.redactor;
  // Made when the first entry that uses OAuth appears, at start or at a /refresh.
  const createOAuth = () =>
    new OAuthRuntime({
      log,
      redactor,
      onEvent: onOAuthEvent,
      // $BROWSER and the proxy variables may come from .env, like every other setting.
      getEnv: (name) => setup.env.get(name),
      surface: options.surface,
      store: tokenStoreFor(setup.memory, setup.env, {
        log: log.child("store"),
        redactor,
        onEvent: onOAuthEvent,
      }),
    });
  const manager = new ConnectionManager({
    servers: setup.servers,
    log: setup.logger.child("connections"),
    redactor,
    handlers: options.handlers,
    createOAuth,
    // Servers inherit HOME, PATH and the like, and HTTP connections honour the proxy
    // variables, as patchbay sees them (.env included).
    env: setup.env,
    closePromptly: options.closePromptly,
    listCache: options.listCacheDir === false ? undefined : new ListCache({
      dir: options.listCacheDir ?? statePath("lists"),
      log: setup.logger.child("lists"),
    }),
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
    const started = manager.start();
    options.onConnecting?.(manager.states());
    const states = await started;
    return { manager, states };
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    options.skip?.removeEventListener("abort", onSkip);
  }
}
