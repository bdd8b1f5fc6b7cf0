/**
 * What a `ServerConnection` (`connection.ts`) is given: its entry, its log, where its events and
 * changes go, the session settings, the answers to the server's requests, its OAuth
 * provider, the restart policy, the log level to ask for, and the secrets to mask.
 *
 * @module
 */

import type { LoggingLevel } from "@modelcontextprotocol/client";
import type { ServerConfig } from "../config/types.ts";
import type { Log } from "../log/log.ts";
import type { Redactor } from "../redact/redact.ts";
import type { PatchbayOAuthProvider } from "../oauth/mod.ts";
import type { BackoffPolicy } from "./reconnect.ts";
import type { ListCache } from "./list_cache.ts";
import type { ServerSessionOptions } from "./session/server_session.ts";
import type { ConnectionEvent, ServerRequestHandlers } from "./types.ts";

/** Options of `ServerConnection` (`connection.ts`). */
export interface ConnectionOptions {
  config: ServerConfig;
  /** This server's log. */
  log: Log;
  emit: (event: ConnectionEvent) => void;
  /** Called whenever this server's lists or connectedness change. */
  changed: () => void;
  session: Omit<
    ServerSessionOptions,
    "log" | "hooks" | "signal" | "oauth" | "cleanup" | "requests"
  >;
  /** The current answers to sampling and elicitation requests. */
  handlers: () => ServerRequestHandlers;
  /**
   * The OAuth provider of an entry with `auth.method: oauth`: the same one for every
   * attempt, so reconnects and `/refresh` reuse its tokens (no second browser login).
   */
  oauth?: PatchbayOAuthProvider;
  backoff: BackoffPolicy;
  /** Log level to ask of the server once connected, if any. */
  logLevel: () => LoggingLevel | undefined;
  /**
   * The session's secrets, masked in everything this server sends (answers, errors,
   * lists, log notifications, its requests) before anything else in patchbay sees it.
   * @default sessionRedactor
   */
  redactor?: Redactor;
  /** The lists kept across runs (served while the first attempt runs). @default none */
  listCache?: ListCache;
}
