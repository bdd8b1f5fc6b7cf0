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
 * Its parts: `manager_types.ts` (its options and types), `offered_tools.ts` (the catalogue
 * and the tool filters), `connecting.ts` (bounded connects, servers still pending),
 * `config_apply.ts` (a configuration read again, the session's switches), `completion.ts`.
 *
 * @module
 */

import { tracedToolCall } from "../telemetry/tool_span.ts";
import type {
  CallToolResult,
  CompleteRequest,
  CompleteResult,
  GetPromptResult,
  LoggingLevel,
  ReadResourceResult,
  RequestOptions,
} from "@modelcontextprotocol/client";
import type { ServerConfig } from "../config/types.ts";
import { CancelledError, type PatchbayError, ToolExecutionError } from "../errors.ts";
import { abortable } from "../async/abortable.ts";
import { type Log, silentLog } from "../log/log.ts";
import { type OAuthRuntime, type PatchbayOAuthProvider, usesOAuth } from "../oauth/mod.ts";
import { type EnvLookup, ProxyRouter } from "../proxy.ts";
import { type Redactor, sessionRedactor } from "../redact/redact.ts";
import { connectWithin, pendingServers, settledWithin } from "./connecting.ts";
import { definitionOf, offeredBy, OfferedTools } from "./offered_tools.ts";
import { completeOn } from "./completion.ts";
import { applyServers, SessionSwitches } from "./config_apply.ts";
import { notConfiguredError, statusTarget } from "./connection_report.ts";
import type {
  CataloguePrompt,
  CatalogueResource,
  CatalogueResourceTemplate,
  ConnectionManagerOptions,
  RequestSignalOptions,
  ServerChanges,
} from "./manager_types.ts";
import type { UnmatchedPattern } from "./tool_filter.ts";
import { ServerConnection } from "./connection.ts";
import type { ServerSession } from "./session/server_session.ts";
import { ToolCalls } from "./tool_calls.ts";
import { type TaskTracking, UNTRACKED } from "./tasks/task_types.ts";
import { NETWORK_RECONNECT_BACKOFF, RECONNECT_BACKOFF } from "./reconnect.ts";
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

export { COMPLETION_WAIT_MS } from "./completion.ts";
export { START_GRACE_MS } from "./connecting.ts";

export type {
  CataloguePrompt,
  CatalogueResource,
  CatalogueResourceTemplate,
  ConnectionManagerOptions,
  RequestSignalOptions,
  ServerChanges,
} from "./manager_types.ts";

/** Every configured server, as one {@linkcode ToolHost} and more. */
export class ConnectionManager implements ToolHost {
  readonly #connections = new Map<string, ServerConnection>();
  readonly #log: Log;
  readonly #redactor: Redactor;
  readonly #hub = new EventHub<ConnectionEvent>();
  #handlers: ServerRequestHandlers;
  readonly #tools = new OfferedTools(this.#connections);
  readonly #calls = new ToolCalls(UNTRACKED);
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
  /** The entries as configured, and {@linkcode setEnabled}'s switches over them. */
  readonly #switches: SessionSwitches;

  constructor(options: ConnectionManagerOptions) {
    this.#options = options;
    this.#log = options.log ?? silentLog;
    this.#env = options.env ?? Deno.env;
    this.#network = new ProxyRouter({ env: this.#env, log: this.#log.child("network") });
    this.#redactor = options.redactor ?? sessionRedactor;
    this.#handlers = { ...options.handlers };
    this.#oauth = options.oauth;
    this.#switches = new SessionSwitches(options.servers);
    for (const config of options.servers) this.#connections.set(config.name, this.#create(config));
    // Lists kept from an earlier run are offered from the start.
    this.#tools.rebuild();
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
      changed: () => this.#tools.rebuild(),
      backoff,
      listCache: options.listCache,
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
      await Promise.all(connections.map((connection) => connectWithin(connection)));
      return this.states();
    })();
    return this.#started;
  }

  /** Enabled servers whose first connection (or a `/refresh`) is still running. */
  pending(): string[] {
    return pendingServers(this.#connections.values());
  }

  /**
   * Waits until no server is {@linkcode pending}, at most `timeoutMs` (and not after
   * `signal` aborts); resolves with the servers still pending then.
   */
  settled(options: { timeoutMs: number; signal?: AbortSignal }): Promise<string[]> {
    return settledWithin((listener) => this.#hub.on(listener), () => this.pending(), options);
  }

  /**
   * Stops the attempts of every server still connecting, which end `failed` saying they
   * were skipped (Ctrl+C while a command waits for them). Returns their names.
   */
  skipPending(): string[] {
    return [...this.#connections.values()].filter((c) => c.skip()).map((c) => c.name);
  }

  /** Waits for the first attempts of the servers offered from their kept lists. */
  async cachedAttempts(): Promise<void> {
    const cached = [...this.#connections.values()].filter((c) => c.listsFromCache);
    await Promise.all(cached.map((c) => c.attempted()));
  }

  /** One status per configured server, in configuration order. */
  states(): ServerStatus[] {
    return [...this.#connections.values()].map((c) =>
      c.status(statusTarget(c.config, this.#redactor))
    );
  }

  /** The status of one server. */
  status(server: string): ServerStatus | undefined {
    const connection = this.#connections.get(server);
    return connection?.status(statusTarget(connection.config, this.#redactor));
  }

  /**
   * Tools of the connected servers, under their model-facing names, as their entries'
   * `include_tools` and `exclude_tools` choose.
   */
  tools(): CatalogueTool[] {
    return this.#tools.tools();
  }

  /** Tools of the connected servers that their entries keep from being offered, and why. */
  withheld(): WithheldTool[] {
    return this.#tools.withheld();
  }

  /** Patterns of the connected servers' tool filters that match none of their tools. */
  unmatchedPatterns(): UnmatchedPattern[] {
    return this.#tools.unmatchedPatterns();
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
    this.#switches.set(server, enabled);
    await this.apply(this.#switches.configured);
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
    return this.#switches.switchedOff(server);
  }

  /** Calls a tool by its model-facing name (see {@linkcode ToolHost.callTool}). */
  callTool(
    name: string,
    args: Record<string, unknown>,
    options: ToolCallOptions = {},
  ): Promise<CallToolResult> {
    let tool: CatalogueTool;
    try {
      tool = this.#tools.route(name);
    } catch (error) {
      return Promise.reject(error);
    }
    const connection = this.#connections.get(tool.server)!;
    if (connection.listsFromCache) return this.#callWhenConnected(connection, tool, args, options);
    // The call's span: its trace context goes to the server in the request's `_meta`.
    const traced = {
      server: tool.server,
      tool: tool.originalName,
      transport: connection.config.transport,
      args,
      toolCallId: options.toolCallId,
    };
    return tracedToolCall(
      traced,
      (meta) => this.#calls.call(connection, tool, args, options, meta),
    );
  }

  /**
   * Who keeps track of the MCP tasks tool calls start (`lib/tasks/tracker.ts`); without
   * one, a task still running when its call stops waiting is only reported as pending.
   */
  setTaskTracking(tracking: TaskTracking): void {
    this.#calls.tracking = tracking;
  }

  /** The connection to `server`, for its tasks (`task_requests.ts`). */
  taskConnection(server: string): ServerConnection {
    return this.#connection(server);
  }

  /**
   * A call to a tool offered from the kept lists: waits for its server, as a call to any
   * connecting server does, then runs only if the live tool is the one offered (an
   * approval covers the definition shown, not one the server answers with later).
   */
  async #callWhenConnected(
    connection: ServerConnection,
    offered: CatalogueTool,
    args: Record<string, unknown>,
    options: ToolCallOptions,
  ): Promise<CallToolResult> {
    await abortable(connection.attempted(), options.signal, () => new CancelledError(offered.name));
    if (!connection.session) throw connection.unavailable();
    const live = this.#tools.route(offered.name);
    if (definitionOf(live) !== definitionOf(offered)) {
      throw new ToolExecutionError(
        offered.name,
        `the tool changed when '${offered.server}' connected (it was offered from the lists ` +
          "kept from an earlier run); it was not run, and its new definition is offered from " +
          "the next step",
      );
    }
    return this.callTool(offered.name, args, options);
  }

  /** Prompts of the connected servers. */
  prompts(): CataloguePrompt[] {
    return offeredBy(this.#connections.values(), "prompts");
  }

  /** Resources of the connected servers. */
  resources(): CatalogueResource[] {
    return offeredBy(this.#connections.values(), "resources");
  }

  /** Resource templates of the connected servers. */
  resourceTemplates(): CatalogueResourceTemplate[] {
    return offeredBy(this.#connections.values(), "templates");
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
   * Runs `run` on `server`'s live session under the server's one deadline, failures named
   * as every request's are: for the requests of protocol extensions (Skills over MCP,
   * `lib/skills/`). What `run` returns is masked as every answer is.
   */
  async requestOn<T>(
    server: string,
    what: string,
    run: (session: ServerSession, options: RequestOptions) => Promise<T>,
    options: RequestSignalOptions = {},
  ): Promise<T> {
    return await this.#connection(server).request(what, run, options);
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
    return await completeOn(this.#connection(server), params, options);
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
    const switched = this.#switches.over(servers);
    const run = this.#applying.then(() =>
      applyServers({
        connections: this.#connections,
        closing: () => this.#closing !== undefined,
        create: (config) => this.#create(config),
        replaced: () => this.#tools.rebuild(),
      }, switched)
    );
    this.#applying = run.catch(() => {});
    return run;
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
      // The lists adopted last are on disk before the process may exit.
      await this.#options.listCache?.settled();
      await this.#oauth?.close();
      this.#network.close();
      this.#hub.close();
    })();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #connection(server: string): ServerConnection {
    const connection = this.#connections.get(server);
    if (connection) return connection;
    throw notConfiguredError(server, [...this.#connections.keys()]);
  }
}
