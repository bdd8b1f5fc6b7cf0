/**
 * The connection manager: every server of the configuration, connected in parallel,
 * kept healthy for the whole session, and offered to the rest of patchbay as one
 * catalogue of tools, prompts and resources.
 *
 * - Start-up connects all enabled servers at once and waits at most each server's own
 *   `timeout` (plus {@linkcode START_GRACE_MS} to finish its diagnosis), not counting
 *   the time a person spends logging in to it (OAuth); a failed or slow server never
 *   holds up the others.
 * - Entries with `auth.method: oauth` authenticate through the session's
 *   {@linkcode OAuthRuntime}, made when the first such entry appears (at start or by
 *   `/refresh`): one provider per server and auth settings, so reconnects and `/refresh`
 *   reuse its tokens. The manager closes the runtime.
 * - Start-up can also go on in the background ({@linkcode ConnectionManager.start} not
 *   awaited): {@linkcode ConnectionManager.pending} names the servers still connecting,
 *   {@linkcode ConnectionManager.settled} waits for them with a bound, and
 *   {@linkcode ConnectionManager.skipPending} gives up on them (Ctrl+C in a command).
 * - A server that dies mid-session is noticed (process exit; for network servers failed
 *   requests, dropped event streams and keep-alive pings, see `connection.ts`), marked
 *   `reconnecting`, its pending requests fail naming it with the diagnosed cause, and it
 *   is restarted with exponential backoff ({@linkcode RECONNECT_BACKOFF} for stdio,
 *   {@linkcode NETWORK_RECONNECT_BACKOFF} for streamable HTTP and SSE).
 * - Disabled entries are listed (state `disconnected`, `disabled: true`), never started.
 * - Everything that happens is an event ({@linkcode ConnectionEvent}) and a log line.
 *
 * @module
 */

import type {
  CallToolResult,
  CompleteRequest,
  CompleteResult,
  GetPromptResult,
  Implementation,
  LoggingLevel,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplateType,
} from "@modelcontextprotocol/client";
import type { ServerConfig } from "../config/types.ts";
import { type PatchbayError, ServerUnavailableError, ToolExecutionError } from "../errors.ts";
import { type Log, silentLog } from "../log.ts";
import { type OAuthRuntime, type PatchbayOAuthProvider, usesOAuth } from "../oauth/mod.ts";
import { type EnvLookup, ProxyRouter } from "../proxy.ts";
import { type Redactor, sessionRedactor } from "../redact.ts";
import { didYouMean } from "../text.ts";
import { settlesWithin } from "../async/deadline.ts";
import { buildCatalogue } from "./catalogue.ts";
import {
  describeWithholding,
  type UnmatchedPattern,
  unmatchedPatterns,
  withheldError,
  withholding,
} from "./tool_filter.ts";
import { ServerConnection } from "./connection.ts";
import { type BackoffPolicy, NETWORK_RECONNECT_BACKOFF, RECONNECT_BACKOFF } from "./reconnect.ts";
import { EventHub } from "./events.ts";
import { traceConnectionEvent } from "../trace/active.ts";
import type {
  CatalogueTool,
  ConnectionEvent,
  ServerRequestHandlers,
  ServerStatus,
  ToolCallOptions,
  ToolHost,
  WithheldTool,
} from "./types.ts";

/**
 * Longest wait for a server's completion of a value (`complete`): it serves a Tab, and the
 * prompt takes no keys while a completion is pending, so a server that never answers
 * would otherwise hold the person for the whole request `timeout`.
 */
export const COMPLETION_WAIT_MS = 3000;
/** Time start-up gives a server beyond its `timeout`, to finish diagnosing a failure. */
export const START_GRACE_MS = 2000;

/** Options of {@linkcode ConnectionManager}. */
export interface ConnectionManagerOptions {
  servers: readonly ServerConfig[];
  /** @default silentLog */
  log?: Log;
  /**
   * The session's secrets: hidden in targets shown by {@linkcode ConnectionManager.states}
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
   * (at start, or added by {@linkcode ConnectionManager.apply}); closed with the manager.
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

/** What {@linkcode ConnectionManager.apply} changed, by server name. */
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

/** Every configured server, as one {@linkcode ToolHost} and more. */
export class ConnectionManager implements ToolHost {
  readonly #connections = new Map<string, ServerConnection>();
  readonly #log: Log;
  readonly #redactor: Redactor;
  readonly #hub = new EventHub<ConnectionEvent>();
  #handlers: ServerRequestHandlers;
  #catalogue: CatalogueTool[] = [];
  #routes = new Map<string, CatalogueTool>();
  #logLevel?: LoggingLevel;
  #started?: Promise<ServerStatus[]>;
  #closing?: Promise<void>;
  /** The last {@linkcode apply} call's run, settled; the next one waits for it. */
  #applying: Promise<unknown> = Promise.resolve();
  /** Given, or made by `createOAuth` for the first entry that uses OAuth. */
  #oauth?: OAuthRuntime;
  readonly #network: ProxyRouter;

  readonly #options: ConnectionManagerOptions;
  readonly #env: EnvLookup;
  /** The entries as configured, before {@linkcode setEnabled}'s switches. */
  #configured: readonly ServerConfig[];
  /** Per server, `disabled` as switched for this session by {@linkcode setEnabled}. */
  readonly #switched = new Map<string, boolean>();

  constructor(options: ConnectionManagerOptions) {
    this.#options = options;
    this.#log = options.log ?? silentLog;
    this.#env = options.env ?? Deno.env;
    this.#network = new ProxyRouter({ env: this.#env, log: this.#log.child("network") });
    this.#redactor = options.redactor ?? sessionRedactor;
    this.#handlers = { ...options.handlers };
    this.#oauth = options.oauth;
    this.#configured = options.servers;
    for (const config of options.servers) this.#connections.set(config.name, this.#create(config));
    this.#hub.on(traceConnectionEvent);
  }

  #create(config: ServerConfig): ServerConnection {
    const options = this.#options;
    const backoff = {
      ...(config.transport === "stdio" ? RECONNECT_BACKOFF : NETWORK_RECONNECT_BACKOFF),
      ...options.backoff,
    };
    return new ServerConnection({
      config,
      log: this.#log.child(`server:${config.name}`),
      emit: (event) => this.#hub.emit(event),
      changed: () => this.#rebuildCatalogue(),
      backoff,
      logLevel: () => this.#logLevel,
      oauth: this.#oauthFor(config),
      handlers: () => this.#handlers,
      redactor: this.#redactor,
      session: {
        clientInfo: options.clientInfo,
        parentEnv: (name) => this.#env.get(name),
        network: this.#network,
        ...(options.closePromptly ? { stdinCloseGraceMs: 0 } : {}),
      },
    });
  }

  /** The OAuth provider of an entry that uses OAuth, the runtime made on first need. */
  #oauthFor(config: ServerConfig): PatchbayOAuthProvider | undefined {
    if (!usesOAuth(config)) return undefined;
    this.#oauth ??= this.#options.createOAuth?.();
    return this.#oauth?.providerFor(config);
  }

  /**
   * Connects every enabled server in parallel. Resolves once each has connected, failed,
   * or used up its `timeout` (+ {@linkcode START_GRACE_MS}), time spent logging in to it
   * not counted (the person was shown where to log in, and Ctrl+C cancels); a server
   * still connecting then (a slow diagnosis) carries on and reports through events.
   */
  start(): Promise<ServerStatus[]> {
    this.#started ??= (async () => {
      const connections = [...this.#connections.values()].filter((c) => !c.config.disabled);
      await Promise.all(connections.map((connection) => this.#connectWithin(connection)));
      return this.states();
    })();
    return this.#started;
  }

  /** Enabled servers whose first connection (or a `/refresh`) is still running. */
  pending(): string[] {
    return [...this.#connections.values()]
      .filter((c) => !c.config.disabled && (c.state === "connecting" || c.state === "disconnected"))
      .map((c) => c.name);
  }

  /**
   * Waits until no server is {@linkcode pending}, at most `timeoutMs` (and not after
   * `signal` aborts); resolves with the servers still pending then.
   */
  settled(options: { timeoutMs: number; signal?: AbortSignal }): Promise<string[]> {
    const { signal, timeoutMs } = options;
    if (this.pending().length === 0 || signal?.aborted) return Promise.resolve(this.pending());
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        off();
        signal?.removeEventListener("abort", finish);
        resolve(this.pending());
      };
      const timer = setTimeout(finish, timeoutMs);
      const off = this.#hub.on((event) => {
        if (event.type === "state" && this.pending().length === 0) finish();
      });
      signal?.addEventListener("abort", finish, { once: true });
    });
  }

  /**
   * Stops the attempts of every server still connecting, which end `failed` saying they
   * were skipped (Ctrl+C while a command waits for them). Returns their names.
   */
  skipPending(): string[] {
    return [...this.#connections.values()].filter((c) => c.skip()).map((c) => c.name);
  }

  /** One status per configured server, in configuration order. */
  states(): ServerStatus[] {
    return [...this.#connections.values()].map((c) => c.status(this.#target(c.config)));
  }

  /** The status of one server. */
  status(server: string): ServerStatus | undefined {
    const connection = this.#connections.get(server);
    return connection?.status(this.#target(connection.config));
  }

  /**
   * Tools of the connected servers, under their model-facing names, as their entries'
   * `include_tools` and `exclude_tools` choose.
   */
  tools(): CatalogueTool[] {
    return this.#catalogue.filter((tool) =>
      this.#connections.get(tool.server)?.session && !this.#withheldWhy(tool)
    );
  }

  /** Tools of the connected servers that their entries keep from being offered, and why. */
  withheld(): WithheldTool[] {
    return this.#catalogue.flatMap((tool) => {
      const reason = this.#connections.get(tool.server)?.session && this.#withheldWhy(tool);
      return reason ? [{ tool, reason }] : [];
    });
  }

  /** Patterns of the connected servers' tool filters that match none of their tools. */
  unmatchedPatterns(): UnmatchedPattern[] {
    return [...this.#connections.values()].flatMap((connection) => {
      if (!connection.session) return [];
      const server = connection.config.name;
      const names = this.#catalogue.filter((t) => t.server === server).map((t) => t.originalName);
      return unmatchedPatterns(server, connection.config, names);
    });
  }

  #withheldWhy(tool: CatalogueTool): string | undefined {
    const config = this.#connections.get(tool.server)?.config;
    const why = config && withholding(config, tool.originalName);
    return why && describeWithholding(tool.server, why);
  }

  /**
   * Switches a server on or off for this session only (the `/mcp enable|disable` of the
   * interactive client): off closes it at once, on connects it, as far as
   * {@linkcode apply} would. The choice outlives a `/refresh` and is never written to the
   * file. Resolves once the server has connected or failed. `undefined` forgets the
   * session's switch: the file decides again.
   */
  async setEnabled(
    server: string,
    enabled: boolean | undefined,
  ): Promise<ServerStatus | undefined> {
    this.#connection(server);
    if (enabled === undefined) this.#switched.delete(server);
    else this.#switched.set(server, !enabled);
    await this.apply(this.#configured);
    return this.status(server);
  }

  /**
   * Why `server` cannot take requests now, as the error a person should see: its failure to
   * connect when it failed, else why it is away (disabled, reconnecting); `undefined` while
   * it is connected or when no server has that name.
   */
  unavailable(server: string): PatchbayError | undefined {
    const connection = this.#connections.get(server);
    if (!connection || connection.session) return undefined;
    const failure = connection.config.disabled ? undefined : this.status(server)?.error;
    return failure ?? connection.unavailable();
  }

  /** Whether `server`'s state was switched for this session, and to what. */
  switchedOff(server: string): boolean | undefined {
    return this.#switched.get(server);
  }

  /** Calls a tool by its model-facing name (see {@linkcode ToolHost.callTool}). */
  callTool(
    name: string,
    args: Record<string, unknown>,
    options: ToolCallOptions = {},
  ): Promise<CallToolResult> {
    const tool = this.#routes.get(name);
    if (!tool) return Promise.reject(this.#unknownTool(name));
    const withheld = this.#withheldWhy(tool);
    if (withheld) return Promise.reject(withheldError(tool, withheld));
    const connection = this.#connections.get(tool.server)!;
    return connection.request(
      `tools/call ${tool.originalName}`,
      (session, request) =>
        session.client.callTool({ name: tool.originalName, arguments: args }, request),
      {
        tool: name,
        timeoutSeconds: options.toolCallTimeoutSeconds,
        signal: options.signal,
        onProgress: options.onProgress,
      },
    ) as Promise<CallToolResult>;
  }

  /** Prompts of the connected servers. */
  prompts(): CataloguePrompt[] {
    return this.#connected().flatMap((c) => c.lists.prompts.map((p) => ({ ...p, server: c.name })));
  }

  /** Resources of the connected servers. */
  resources(): CatalogueResource[] {
    return this.#connected().flatMap((c) =>
      c.lists.resources.map((r) => ({ ...r, server: c.name }))
    );
  }

  /** Resource templates of the connected servers. */
  resourceTemplates(): CatalogueResourceTemplate[] {
    return this.#connected().flatMap((c) =>
      c.lists.templates.map((t) => ({ ...t, server: c.name }))
    );
  }

  /** `prompts/get` on `server`. */
  async getPrompt(
    server: string,
    name: string,
    args: Record<string, string> = {},
    options: RequestSignalOptions = {},
  ): Promise<GetPromptResult> {
    return await this.#connection(server).request(
      `prompts/get ${name}`,
      (session, request) => session.client.getPrompt({ name, arguments: args }, request),
      options,
    );
  }

  /** `resources/read` on `server`. */
  async readResource(
    server: string,
    uri: string,
    options: RequestSignalOptions = {},
  ): Promise<ReadResourceResult> {
    return await this.#connection(server).request(
      `resources/read ${uri}`,
      (session, request) => session.client.readResource({ uri }, request),
      options,
    );
  }

  /**
   * Completion of a prompt or resource-template argument (MCP `completion/complete`).
   * A server without the completions capability yields no values rather than an error:
   * this serves tab completion, which must never fail loudly.
   */
  async complete(
    server: string,
    params: CompleteRequest["params"],
    options: RequestSignalOptions = {},
  ): Promise<CompleteResult["completion"]> {
    const connection = this.#connection(server);
    if (!connection.session?.capabilities.completions) return { values: [] };
    // The person waits on a Tab: a server slow to answer one offers nothing this time.
    const deadline = AbortSignal.timeout(COMPLETION_WAIT_MS);
    const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
    try {
      const result = await connection.request(
        "completion/complete",
        (session, request) => session.client.complete(params, request),
        { ...options, signal },
      );
      return result.completion;
    } catch (error) {
      if (deadline.aborted && !options.signal?.aborted) return { values: [] };
      throw error;
    }
  }

  /** Asks `server` for `notifications/resources/updated` about `uri`. */
  async subscribeResource(server: string, uri: string, options: RequestSignalOptions = {}) {
    await this.#connection(server).request(
      `resources/subscribe ${uri}`,
      (session, request) => session.client.subscribeResource({ uri }, request),
      options,
    );
  }

  /** Stops the updates {@linkcode subscribeResource} asked for. */
  async unsubscribeResource(server: string, uri: string, options: RequestSignalOptions = {}) {
    await this.#connection(server).request(
      `resources/unsubscribe ${uri}`,
      (session, request) => session.client.unsubscribeResource({ uri }, request),
      options,
    );
  }

  /** Asks every server with the logging capability for logs from `level` up, now and after reconnects. */
  setLoggingLevel(level: LoggingLevel): void {
    this.#logLevel = level;
    for (const connection of this.#connections.values()) connection.applyLogLevel();
  }

  /**
   * Replaces the folders `server` is offered as roots (absolute paths; `undefined` offers
   * none), telling a connected server at once (see {@linkcode ServerConnection.setRoots}).
   * The entry's `roots` are the starting point.
   */
  async setRoots(server: string, folders: readonly string[] | undefined): Promise<void> {
    await this.#connection(server).setRoots(folders);
  }

  /** The answers to server requests (sampling, elicitation); absent ones refuse. */
  setHandlers(handlers: ServerRequestHandlers): void {
    this.#handlers = { ...handlers };
  }

  /** Calls `listener` for every event until the returned function is called. */
  on(listener: (event: ConnectionEvent) => void): () => void {
    return this.#hub.on(listener);
  }

  /** Every event from now on, until `signal` aborts or the manager closes. */
  events(signal?: AbortSignal): AsyncGenerator<ConnectionEvent> {
    return this.#hub.stream(signal);
  }

  /**
   * `/refresh`: connected servers are listed again (`force`: reconnected), the others
   * connect now. `server` limits it to one.
   */
  async refresh(server?: string, options: { force?: boolean } = {}): Promise<ServerStatus[]> {
    const targets = server === undefined
      ? [...this.#connections.values()]
      : [this.#connection(server)];
    await Promise.all(targets.map((c) => c.refresh(options.force ?? false)));
    return this.states();
  }

  /**
   * Makes `servers` the configured ones (a configuration read again by `/refresh`): entries
   * no longer there are closed, changed ones are closed and started again, new ones are
   * started; the others are left as they are. Resolves, with what changed, once the new and
   * changed servers have connected or failed, as {@linkcode start} does.
   *
   * Calls run one after the other (a second `/refresh` while the first still connects
   * compares with what the first made), and a manager that closes meanwhile starts nothing
   * more: what the call created is closed with it.
   */
  apply(servers: readonly ServerConfig[]): Promise<ServerChanges> {
    this.#configured = servers;
    const switched = servers.map((config) => {
      const disabled = this.#switched.get(config.name);
      return disabled === undefined ? config : { ...config, disabled, switchedForSession: true };
    });
    const run = this.#applying.then(() => this.#apply(switched));
    this.#applying = run.catch(() => {});
    return run;
  }

  async #apply(servers: readonly ServerConfig[]): Promise<ServerChanges> {
    const changes: ServerChanges = { added: [], removed: [], changed: [] };
    if (this.#closing) return changes;
    const next = new Map(servers.map((config) => [config.name, config]));
    for (const [name, connection] of this.#connections) {
      const config = next.get(name);
      if (!config) changes.removed.push(name);
      else if (JSON.stringify(config) !== JSON.stringify(connection.config)) {
        changes.changed.push(name);
      }
    }
    changes.added = servers.map((c) => c.name).filter((name) => !this.#connections.has(name));
    const replaced = [...changes.removed, ...changes.changed];
    await Promise.all(replaced.map((name) => this.#connections.get(name)!.close()));
    // Closed meanwhile: close() ended what was there; nothing new may start.
    if (this.#closing) return changes;
    const kept = new Map(this.#connections);
    this.#connections.clear();
    for (const config of servers) {
      const same = !replaced.includes(config.name) && kept.get(config.name);
      this.#connections.set(config.name, same || this.#create(config));
    }
    this.#rebuildCatalogue();
    const starting = [...changes.added, ...changes.changed]
      .map((name) => this.#connections.get(name)!)
      .filter((connection) => !connection.config.disabled);
    await Promise.all(starting.map((connection) => this.#connectWithin(connection)));
    // A close() during the connects may have come before one of them spawned its server.
    if (this.#closing) await Promise.all(starting.map((connection) => connection.close()));
    return changes;
  }

  /**
   * Closes every connection (stdio trees ended, HTTP sessions deleted, a login in
   * progress cancelled) and the OAuth runtime; idempotent. An {@linkcode apply} under way
   * is waited for, so that no server it starts outlives the manager.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.all([...this.#connections.values()].map((c) => c.close()));
      await this.#applying;
      await this.#oauth?.close();
      this.#network.close();
      this.#hub.close();
    })();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Connects, waiting at most the server's `timeout` (+ grace), logging in not counted. */
  #connectWithin(connection: ServerConnection): Promise<unknown> {
    return settlesWithin(
      connection.connect(),
      connection.config.timeoutSeconds * 1000 + START_GRACE_MS,
      connection.oauth,
    );
  }

  #connected(): ServerConnection[] {
    return [...this.#connections.values()].filter((c) => c.session);
  }

  #connection(server: string): ServerConnection {
    const connection = this.#connections.get(server);
    if (connection) return connection;
    const suggestion = didYouMean(server, [...this.#connections.keys()]);
    throw new ServerUnavailableError(server, "not configured", {
      reason: `there is no server named '${server}' in the configuration` +
        (suggestion ? ` (did you mean '${suggestion}'?)` : ""),
      remedy: `use one of: ${[...this.#connections.keys()].join(", ") || "(no servers)"}`,
    });
  }

  #unknownTool(name: string): ToolExecutionError {
    const names = this.tools().map((t) => t.name);
    const suggestion = didYouMean(name, names);
    return new ToolExecutionError(
      name,
      `no connected server offers a tool named '${name}'` +
        (suggestion ? ` (did you mean '${suggestion}'?)` : ""),
    );
  }

  #rebuildCatalogue(): void {
    this.#catalogue = buildCatalogue(
      [...this.#connections.values()].map((c) => ({ server: c.name, tools: c.lists.tools })),
    );
    this.#routes = new Map(this.#catalogue.map((tool) => [tool.name, tool]));
  }

  #target(config: ServerConfig): string {
    const text = config.transport === "stdio"
      ? [config.command, ...config.args].map(quote).join(" ")
      : config.url;
    return this.#redactor.redact(text);
  }
}

function quote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
