/**
 * {@linkcode ServerSession}: a live connection to one server, as one attempt left it (the
 * MCP client over its transport), with the lists the server offers, fetched again on
 * request ({@linkcode ServerSession.relist}) within the server's `timeout`; whether the
 * server is still there; why its transport closed, in words; and its orderly end.
 *
 * @module
 */

import type {
  Client,
  ClientCapabilities,
  Implementation,
  Prompt,
  RequestOptions,
  Resource,
  ResourceTemplateType as ResourceTemplate,
  ServerCapabilities,
  Tool,
} from "@modelcontextprotocol/client";
import type { ServerConfig } from "../../config/types.ts";
import { CALLBACK_TIMEOUT_MS, type PatchbayOAuthProvider } from "../../oauth/mod.ts";
import { HttpTransport } from "../../transports/http.ts";
import type { StdioTransport } from "../../transports/stdio.ts";
import { startDeadline } from "../../async/wait_clock.ts";
import { timerDelay } from "../../async/timers.ts";
import type { RawToolSchemas } from "../raw_schemas.ts";
import { type OptionalList, optionalList } from "../optional_lists.ts";

/**
 * Extra time the SDK's own request timers get on an OAuth server, whose requests may
 * wait for a browser login (one queued behind another's, each up to the callback
 * timeout). patchbay's own deadlines, which stop while a login runs, are the real bound.
 */
export const OAUTH_LOGIN_ALLOWANCE_MS = 2 * CALLBACK_TIMEOUT_MS;

/** What a server offers. */
export interface Lists {
  tools: Tool[];
  prompts: Prompt[];
  resources: Resource[];
  templates: ResourceTemplate[];
}

/**
 * A list result's caching hints (2026-07-28 `ttlMs` and `cacheScope`, as the server sent
 * them: untrusted), and when it arrived; what lib/connections/list_cache.ts judges.
 */
export interface ListHint {
  ttlMs?: unknown;
  cacheScope?: unknown;
  receivedAt: number;
}

/** Which list a `list_changed` notification is about. */
export type ListName = "tools" | "prompts" | "resources";

/** The transports a session runs over. */
export type AnyTransport = StdioTransport | HttpTransport;

/** How patchbay introduced itself in a session: what a 2026-07-28 request repeats. */
export interface SessionFraming {
  clientInfo: Implementation;
  capabilities: ClientCapabilities;
}

/**
 * Answers a server's question that arrives inside a task (a 2026-07-28 task's input
 * request) as the session answers the same request sent on its own.
 */
export type InputAnswerer = (
  kind: "sampling" | "elicitation" | "roots",
  params: Record<string, unknown>,
  signal?: AbortSignal,
) => Promise<unknown>;

/** A live connection to one server. */
export class ServerSession {
  readonly config: ServerConfig;
  readonly client: Client;
  readonly transport: AnyTransport;
  /** The OAuth provider, also the clock of logins that deadlines leave out. */
  readonly oauth?: PatchbayOAuthProvider;
  lists: Lists = { tools: [], prompts: [], resources: [], templates: [] };
  /**
   * Lists the server declares but answered with an error (treated as empty), with how it
   * answered (`optional_lists.ts`).
   */
  readonly failedLists = new Map<OptionalList, string>();
  /** The caching hints of each list as last fetched (absent: not offered, or never fetched). */
  hints: Partial<Record<keyof Lists, ListHint>> = {};
  /** The roots capability was declared in this session's handshake. */
  readonly offersRoots: boolean;
  /** The handshake and first listing succeeded. */
  established = false;
  /** Tool schemas as the server wrote them (the SDK's parsing reorders them). */
  readonly rawSchemas: RawToolSchemas;
  /** How patchbay introduced itself. */
  readonly framing: SessionFraming;
  /** Answers the questions a task asks (2026-07-28 input requests). */
  answer?: InputAnswerer;
  /** Work to finish before the client closes (tasks followed locally are let go). */
  readonly #beforeClose = new Set<() => Promise<void>>();
  #closing = false;

  constructor(
    config: ServerConfig,
    client: Client,
    transport: AnyTransport,
    options: {
      oauth?: PatchbayOAuthProvider;
      offersRoots: boolean;
      rawSchemas: RawToolSchemas;
      framing: SessionFraming;
    },
  ) {
    this.rawSchemas = options.rawSchemas;
    this.framing = options.framing;
    this.config = config;
    this.client = client;
    this.transport = transport;
    this.oauth = options.oauth;
    this.offersRoots = options.offersRoots;
  }

  /**
   * The SDK's own timer for a request patchbay bounds by `ms`: on an OAuth server it
   * leaves room for a browser login, which patchbay's deadline does not count.
   */
  sdkTimeoutMs(ms: number): number {
    return timerDelay(this.oauth ? ms + OAUTH_LOGIN_ALLOWANCE_MS : ms);
  }

  get capabilities(): ServerCapabilities {
    return this.client.getServerCapabilities() ?? {};
  }

  get serverInfo(): Implementation | undefined {
    return this.client.getServerVersion();
  }

  get protocolVersion(): string | undefined {
    return this.client.getNegotiatedProtocolVersion();
  }

  get instructions(): string | undefined {
    return this.client.getInstructions();
  }

  /** True once {@linkcode close} was called. */
  get closing(): boolean {
    return this.#closing;
  }

  /**
   * Asks the server whether it is there: `ping` on a 2025-era session; `server/discover`
   * on a 2026-07-28 one, which has no `ping` (the SDK refuses to send it there).
   */
  async alive(options: RequestOptions): Promise<void> {
    if (this.client.getProtocolEra() === "modern") await this.client.discover(options);
    else await this.client.ping(options);
  }

  /** Fetches the lists again (all, or the one named), bounded by `timeout`. */
  async relist(which?: ListName): Promise<Lists> {
    const caps = this.capabilities;
    const timeout = this.config.timeoutSeconds * 1000;
    const deadline = new AbortController();
    const cancelDeadline = startDeadline(
      timeout,
      () => deadline.abort(new DeadlineError(this.config.timeoutSeconds)),
      this.oauth,
    );
    const options = {
      timeout: this.sdkTimeoutMs(timeout),
      signal: deadline.signal,
      cacheMode: "refresh" as const,
    };
    try {
      return await this.#list(which, caps, options);
    } finally {
      cancelDeadline();
    }
  }

  async #list(
    which: ListName | undefined,
    caps: ServerCapabilities,
    options: { timeout: number; signal: AbortSignal; cacheMode: "refresh" },
  ): Promise<Lists> {
    const want = (name: ListName) => which === undefined || which === name;
    const warnings = this.failedLists;
    // The hints ride on the results (the SDK passes them through, page 1's for a list).
    const hinted = <R extends object>(list: keyof Lists) => (result: R): R => {
      const { ttlMs, cacheScope } = result as { ttlMs?: unknown; cacheScope?: unknown };
      this.hints[list] = { ttlMs, cacheScope, receivedAt: Date.now() };
      return result;
    };
    const [tools, prompts, resources, templates] = await Promise.all([
      want("tools") && caps.tools
        ? this.client.listTools(undefined, options).then(hinted("tools"))
          .then((r) => this.rawSchemas.apply(r.tools))
        : this.lists.tools,
      want("prompts") && caps.prompts
        ? optionalList(
          "prompts",
          this.client.listPrompts(undefined, options).then(hinted("prompts")).then((r) =>
            r.prompts
          ),
          warnings,
        )
        : this.lists.prompts,
      want("resources") && caps.resources
        ? optionalList(
          "resources",
          this.client.listResources(undefined, options).then(hinted("resources")).then((r) =>
            r.resources
          ),
          warnings,
        )
        : this.lists.resources,
      want("resources") && caps.resources
        ? optionalList(
          "resource templates",
          this.client.listResourceTemplates(undefined, options).then(hinted("templates")).then((
            r,
          ) => r.resourceTemplates),
          warnings,
        )
        : this.lists.templates,
    ]);
    this.lists = { tools, prompts, resources, templates };
    return this.lists;
  }

  /** Why the transport closed, in words (for a lost connection). */
  closeReason(): string {
    const transport = this.transport;
    if (transport instanceof HttpTransport) {
      const reason = transport.closeReason;
      return reason && "detail" in reason ? reason.detail : "the connection to the server closed";
    }
    const reason = transport.closeReason;
    const evidence = transport.evidence();
    const lastLine = evidence.stderrTail.at(-1);
    const stderr = lastLine ? `; its last stderr line: "${lastLine}"` : "";
    switch (reason?.kind) {
      case "exited":
        return (reason.signal
          ? `the server process was killed by ${reason.signal}`
          : `the server process exited with code ${reason.code}`) + stderr;
      case "oversize":
        return `the server sent a message of more than ${
          Math.round(reason.limit / 1024 / 1024)
        } MB, so patchbay closed it`;
      case "stdout_closed":
        return `the server closed its stdout${stderr}`;
      default:
        return "the connection to the server closed";
    }
  }

  /** Runs `work` when the session closes, before its client does. */
  beforeClose(work: () => Promise<void>): void {
    this.#beforeClose.add(work);
  }

  /** Ends the session: the transport's orderly shutdown (stdio) or `DELETE` (HTTP). */
  async close(): Promise<void> {
    if (!this.#closing) {
      this.#closing = true;
      const work = [...this.#beforeClose];
      this.#beforeClose.clear();
      await Promise.all(work.map((w) => w().catch(() => {})));
    }
    this.#closing = true;
    await this.client.close().catch(() => {});
    await this.transport.close().catch(() => {});
  }
}

/** A deadline that passed. */
export class DeadlineError extends Error {
  constructor(seconds: number) {
    super(`no answer within ${seconds} s`);
    this.name = "DeadlineError";
  }
}
