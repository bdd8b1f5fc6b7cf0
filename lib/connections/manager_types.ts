/**
 * The types the connection manager (`manager.ts`) is used with: its options, what a changed
 * configuration changed, the prompts and resources of its catalogue, and the options of
 * requests other than tool calls.
 *
 * @module
 */

import type {
  Implementation,
  Prompt,
  Resource,
  ResourceTemplateType,
} from "@modelcontextprotocol/client";
import type { ServerConfig } from "../config/types.ts";
import type { Log } from "../log/log.ts";
import type { OAuthRuntime } from "../oauth/mod.ts";
import type { EnvLookup } from "../proxy.ts";
import type { Redactor } from "../redact/redact.ts";
import type { BackoffPolicy } from "./reconnect.ts";
import type { ListCache } from "./list_cache.ts";
import type { ServerRequestHandlers } from "./types.ts";

/** Options of `ConnectionManager`. */
export interface ConnectionManagerOptions {
  /** The lists kept across runs (lib/connections/list_cache.ts). @default none */
  listCache?: ListCache;
  servers: readonly ServerConfig[];
  /** @default silentLog */
  log?: Log;
  /**
   * The session's secrets: hidden in targets shown by `ConnectionManager.states`
   * and in everything a server sends (see `connection.ts`). @default sessionRedactor
   */
  redactor?: Redactor;
  /** Answers to sampling and elicitation requests (also settable later). */
  handlers?: ServerRequestHandlers;
  /**
   * OAuth for the entries with `auth.method: oauth` (`createOAuthRuntime`); closed with
   * the manager. Without it such an entry connects without a token, and a server that
   * asks for one fails with "OAuth authentication failed".
   */
  oauth?: OAuthRuntime;
  /**
   * Makes the OAuth runtime, when `oauth` is not given, the first time an entry uses OAuth
   * (at start, or added by `ConnectionManager.apply`); closed with the manager.
   * Never called while no entry uses OAuth, so nothing listens on the callback port then.
   */
  createOAuth?: () => OAuthRuntime;
  /** @default patchbay's name and version */
  clientInfo?: Implementation;
  /**
   * Applied over both policies. @default RECONNECT_BACKOFF (stdio),
   * NETWORK_RECONNECT_BACKOFF (streamable HTTP, SSE)
   */
  backoff?: Partial<BackoffPolicy>;
  /**
   * The session's environment (process over .env): what stdio servers inherit (HOME,
   * PATH, …) and the proxy variables (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY) that
   * streamable HTTP and SSE connections honour. @default Deno.env
   */
  env?: EnvLookup;
  /**
   * End stdio servers at close without waiting for them to exit on their own: their
   * process group is signalled (SIGTERM, then SIGKILL) as soon as their stdin is closed.
   * For one-shot commands, whose servers have nothing left to do after the last answer
   * (server-everything takes about 0.35 s to exit after its stdin closes, 10 ms after a
   * signal). @default false
   */
  closePromptly?: boolean;
}

/** What `ConnectionManager.apply` changed, by server name. */
export interface ServerChanges {
  added: string[];
  removed: string[];
  changed: string[];
}

/** A prompt, with the server offering it. */
export interface CataloguePrompt extends Prompt {
  server: string;
}

/** A resource, with the server offering it. */
export interface CatalogueResource extends Resource {
  server: string;
}

/** A resource template, with the server offering it. */
export interface CatalogueResourceTemplate extends ResourceTemplateType {
  server: string;
}

/** Options of requests other than tool calls. */
export interface RequestSignalOptions {
  signal?: AbortSignal;
  /** @default the server's timeout */
  timeoutSeconds?: number;
}
