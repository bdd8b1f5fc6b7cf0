/**
 * OAuth logins in Redis, for configurations whose `Memory.backend` is `redis`: one key per
 * server, `<Memory.key_prefix>:oauth:<server>`, holding the very JSON document a credentials
 * file holds, with no expiry. `list` walks the keys with `SCAN` (on every master of a
 * cluster). The client is built like conversation memory's (`createRedisClient`: the same
 * REDIS_* variables, Memory settings and fail-fast options), on first use only, so a session
 * whose stored tokens are never read never connects.
 *
 * When Redis cannot be reached:
 * - reading (`load`, `list`) and `delete` fail with `Could not connect to Redis at …`, the
 *   diagnosed cause and a remedy. No browser login starts instead: the login exists, and a
 *   second one would mint another grant with nowhere to keep it.
 * - writing keeps what was just obtained, since a rotated refresh token cannot be obtained
 *   again: the document goes to an owner-only file under
 *   `~/.config/patchbay/oauth/undelivered/<store>/`, the person is told once
 *   (`login_kept_locally`), and the next operation that reaches Redis moves it there (the
 *   newer document wins). Until then `load` reads that copy. Failing the write instead would
 *   throw away a login the person just completed; writing it to the file store silently
 *   would leave it where the next run, reading Redis, never looks.
 *
 * @module
 */

import type { Cluster, Redis } from "ioredis";
import { join } from "node:path";
import type { MemorySettings } from "../config/types.ts";
import type { Environment } from "../env.ts";
import { PatchbayError, StoreConnectError, StoreFailedError } from "../errors.ts";
import type { Log } from "../log.ts";
import { journalFolder } from "../memory/open.ts";
import {
  connectRedisClient,
  createRedisClient,
  type RedisClient,
  withTimeout,
} from "../memory/redis_client.ts";
import {
  diagnoseCommandError,
  diagnoseConnectError,
  isConnectionProblem,
} from "../memory/redis_errors.ts";
import { type RedisSettings, resolveRedisSettings } from "../memory/redis_settings.ts";
import { COMMAND_TIMEOUT_MS, CONNECT_BUDGET_MS } from "../memory/redis_store.ts";
import { configDir } from "../paths.ts";
import type { Redactor } from "../redact.ts";
import type { OAuthEvent } from "./broker.ts";
import {
  FileTokenStore,
  parseCredentials,
  serializeCredentials,
  type ServerCredentials,
  type TokenStore,
} from "./token_store.ts";

/** How long closing waits for the server to acknowledge QUIT. */
const QUIT_WAIT_MS = 500;
/** Keys asked of `SCAN` per step; a handful of logins fit in one. */
const SCAN_COUNT = 100;

/** Options of {@linkcode RedisTokenStore}. */
export interface RedisTokenStoreOptions {
  /** The `Memory` section: key prefix, Sentinel or Cluster addresses. */
  memory: MemorySettings;
  /** Where REDIS_* are read (.env included). */
  env: Environment;
  /** A Redis password is registered here when the settings are first resolved. */
  redactor?: Redactor;
  log?: Log;
  /** Told when a login could only be kept locally. */
  onEvent?: (event: OAuthEvent) => void;
  /** Folder of logins Redis did not take. @default `<configDir()>/oauth/undelivered/<store>` */
  undeliveredDir?: string;
  /** @default CONNECT_BUDGET_MS */
  connectBudgetMs?: number;
  /** @default COMMAND_TIMEOUT_MS */
  commandTimeoutMs?: number;
}

/** Credentials in Redis, one key per server; see the module documentation. */
export class RedisTokenStore implements TokenStore {
  readonly #options: RedisTokenStoreOptions;
  readonly #budgetMs: number;
  #resolved: RedisSettings | undefined;
  #undelivered: FileTokenStore | undefined;
  #client: RedisClient | undefined;
  #connecting: Promise<RedisClient> | undefined;
  #lastError: unknown;
  /** Servers whose login was kept locally in this outage (told once each). */
  readonly #keptLocally = new Set<string>();

  constructor(options: RedisTokenStoreOptions) {
    this.#options = options;
    this.#budgetMs = options.connectBudgetMs ?? CONNECT_BUDGET_MS;
  }

  get location(): string {
    try {
      return `${this.#settings.description}, keys ${this.#prefix}*`;
    } catch {
      return "Redis (its REDIS_* settings are not valid)";
    }
  }

  /** The key holding `server`'s credentials. */
  keyFor(server: string): string {
    return this.#prefix + server;
  }

  /** The folder of logins kept locally while Redis was away. */
  get undeliveredDir(): string {
    return this.#undeliveredStore.dir;
  }

  async load(server: string): Promise<ServerCredentials | undefined> {
    try {
      return await this.#withClient(async (client) =>
        await this.#deliverKept(client, server, await this.#get(client, server))
      );
    } catch (error) {
      const kept = error instanceof StoreConnectError
        ? await this.#undeliveredStore.load(server)
        : undefined;
      if (!kept) throw error;
      this.#options.log?.warn(
        `${this.#settings.description} is unreachable; using the login to '${server}' kept ` +
          `in ${this.#undeliveredStore.dir}`,
      );
      return kept;
    }
  }

  async save(credentials: ServerCredentials): Promise<void> {
    const server = credentials.server;
    try {
      // No expiry: a login carries a refresh token meant to outlive every access token, and
      // a key that expired would log the person out without a word. SET also drops any TTL
      // set on the key by hand. (Memory.ttl_seconds is about conversations only.)
      await this.#withClient((client) =>
        client.set(this.keyFor(server), serializeCredentials(credentials))
      );
    } catch (error) {
      await this.#keepLocally(credentials, error);
      return;
    }
    // What Redis holds now is newer than any copy kept while it was away.
    await this.#undeliveredStore.delete(server);
    this.#keptLocally.delete(server);
  }

  async delete(server: string): Promise<boolean> {
    const removed = await this.#withClient((client) => client.del(this.keyFor(server)));
    const removedLocally = await this.#undeliveredStore.delete(server);
    return removed > 0 || removedLocally;
  }

  list(): Promise<ServerCredentials[]> {
    return this.#withClient(async (client) => {
      const servers = new Set(await this.#scanServers(client));
      for (const kept of await this.#undeliveredStore.list()) servers.add(kept.server);
      const documents: ServerCredentials[] = [];
      for (const server of servers) {
        const document = await this.#deliverKept(client, server, await this.#get(client, server));
        if (document) documents.push(document);
      }
      return documents.sort((a, b) => a.server.localeCompare(b.server));
    });
  }

  async close(): Promise<void> {
    await this.#connecting?.catch(() => {});
    const client = this.#client;
    this.#client = undefined;
    if (!client) return;
    if (client.status === "ready") await withTimeout(client.quit().catch(() => {}), QUIT_WAIT_MS);
    client.disconnect();
  }

  // ── settings ────────────────────────────────────────────────────────────────────────

  /**
   * Resolved on first use, not in the constructor: a configuration without OAuth entries
   * never needs them, and a mistyped REDIS_PORT is then reported by memory alone.
   */
  get #settings(): RedisSettings {
    this.#resolved ??= resolveRedisSettings(
      this.#options.memory,
      this.#options.env,
      this.#options.redactor,
    );
    return this.#resolved;
  }

  get #prefix(): string {
    return `${this.#settings.keyPrefix}:oauth:`;
  }

  /** One folder per store (addresses, database, prefix), like memory's outage journal. */
  get #undeliveredStore(): FileTokenStore {
    this.#undelivered ??= new FileTokenStore({
      dir: this.#options.undeliveredDir ??
        join(configDir(), "oauth", "undelivered", journalFolder(this.#settings.identity)),
    });
    return this.#undelivered;
  }

  // ── reading and writing ─────────────────────────────────────────────────────────────

  async #get(client: RedisClient, server: string): Promise<ServerCredentials | undefined> {
    const key = this.keyFor(server);
    const text = await client.get(key);
    if (text === null) return undefined;
    try {
      const document = parseCredentials(text);
      // A document copied under another server's key is not this server's login.
      return document.server === server ? document : undefined;
    } catch (error) {
      throw new PatchbayError(
        "oauth_failed",
        `Stored OAuth credentials are unreadable: ${key} in ${this.#settings.description}`,
        {
          reason: `${key} does not hold a credentials document patchbay understands ` +
            `(${(error as Error).message})`,
          remedy: `delete the key (redis-cli DEL '${key}') and log in again; nothing else ` +
            "is stored in it",
          cause: error,
        },
      );
    }
  }

  /** The newer of what Redis holds and a copy kept while it was away; the copy goes. */
  async #deliverKept(
    client: RedisClient,
    server: string,
    stored: ServerCredentials | undefined,
  ): Promise<ServerCredentials | undefined> {
    const kept = await this.#undeliveredStore.load(server);
    if (!kept) return stored;
    const keptIsNewer = !stored || Date.parse(kept.updatedAt) > Date.parse(stored.updatedAt);
    if (keptIsNewer) await client.set(this.keyFor(server), serializeCredentials(kept));
    await this.#undeliveredStore.delete(server);
    this.#keptLocally.delete(server);
    this.#options.log?.info(
      keptIsNewer
        ? `moved the login to '${server}' kept locally to ${this.#settings.description}`
        : `discarded an older local copy of the login to '${server}'`,
    );
    return keptIsNewer ? kept : stored;
  }

  async #keepLocally(credentials: ServerCredentials, error: unknown): Promise<void> {
    const problem = this.#explain(error);
    const server = credentials.server;
    const local = this.#undeliveredStore;
    try {
      await local.save(credentials);
    } catch (localError) {
      // Neither place took it: the login lasts as long as this process, and the person
      // learns why from the store's own error.
      this.#options.log?.warn(`could not keep the login to '${server}' locally either`, {
        error: localError,
      });
      throw problem;
    }
    const path = await local.pathFor(server);
    this.#options.log?.warn(
      `could not save the login to '${server}' in ${this.#settings.description} ` +
        `(${problem.message}); kept it in ${path}`,
    );
    if (this.#keptLocally.has(server)) return;
    this.#keptLocally.add(server);
    this.#options.onEvent?.({
      type: "login_kept_locally",
      server,
      store: this.#settings.description,
      path,
      reason: problem.message,
    });
  }

  /** Server names with a key, from every master (a cluster spreads keys over its nodes). */
  async #scanServers(client: RedisClient): Promise<string[]> {
    const nodes = this.#settings.topology.mode === "cluster"
      ? (client as Cluster).nodes("master")
      : [client as Redis];
    const prefix = this.#prefix;
    const pattern = `${prefix.replace(/[*?[\]\\]/g, "\\$&")}*`;
    const servers: string[] = [];
    for (const node of nodes) {
      let cursor = "0";
      do {
        const [next, keys] = await node.scan(cursor, "MATCH", pattern, "COUNT", SCAN_COUNT);
        for (const key of keys) servers.push(key.slice(prefix.length));
        cursor = next;
      } while (cursor !== "0");
    }
    // SCAN may return a key twice.
    return [...new Set(servers)];
  }

  // ── the connection ──────────────────────────────────────────────────────────────────

  /** A ready client; connected on first use, and again after the store went away. */
  #connection(): Promise<RedisClient> {
    const client = this.#client;
    if (client?.status === "ready") return Promise.resolve(client);
    this.#connecting ??= this.#connect().finally(() => this.#connecting = undefined);
    return this.#connecting;
  }

  async #connect(): Promise<RedisClient> {
    const settings = this.#settings;
    this.#client?.disconnect();
    this.#client = undefined;
    this.#lastError = undefined;
    const client = await createRedisClient(settings, {
      connectTimeoutMs: this.#budgetMs,
      commandTimeoutMs: this.#options.commandTimeoutMs ?? COMMAND_TIMEOUT_MS,
      // Never reconnects by itself: the next operation connects again, within the budget.
      retry: () => null,
    });
    // The last failure is the useful cause of a failed connection; without a listener
    // ioredis would also print every one.
    client.on("error", (error: unknown) => {
      this.#lastError = error;
      this.#options.log?.debug(`redis: ${(error as Error)?.message ?? error}`);
    });
    try {
      const connected = await withTimeout(
        connectRedisClient(client, settings).then(() => true),
        this.#budgetMs,
      );
      if (!connected) throw new Error(`connection timed out after ${this.#budgetMs} ms`);
    } catch (error) {
      client.disconnect();
      throw this.#unreachable(this.#lastError ?? error, "connect");
    }
    this.#client = client;
    return client;
  }

  /**
   * Runs `run` on a ready client; failures become typed errors. A connection that broke
   * since its last use (Redis restarted during a long session) gets one fresh attempt:
   * every command here can safely run twice.
   */
  async #withClient<T>(run: (client: RedisClient) => Promise<T>): Promise<T> {
    const client = await this.#connection();
    try {
      return await run(client);
    } catch (error) {
      if (!isConnectionProblem(error)) throw this.#explain(error);
      // Its status turns to "end" only once the socket closes: forget it now.
      client.disconnect();
      if (this.#client === client) this.#client = undefined;
    }
    const again = await this.#connection();
    try {
      return await run(again);
    } catch (error) {
      throw this.#explain(error);
    }
  }

  #explain(error: unknown): PatchbayError {
    if (error instanceof PatchbayError) return error;
    if (isConnectionProblem(error)) return this.#unreachable(this.#lastError ?? error, "session");
    return diagnoseCommandError(error, this.#settings) ??
      new StoreFailedError(`${this.#settings.description} refused a command`, {
        reason: (error as Error)?.message ?? String(error),
        remedy: "run with --debug for details",
        cause: error,
      });
  }

  /** The memory store's diagnosis, with a remedy for logins instead of for conversations. */
  #unreachable(cause: unknown, phase: "connect" | "session"): StoreConnectError {
    const diagnosed = diagnoseConnectError(cause, {
      settings: this.#settings,
      budgetMs: this.#budgetMs,
      phase,
    });
    // "/memory" turns conversation memory off; it does nothing for logins.
    const remedy = diagnosed.remedy.replace(/,? or turn persistence off with \/memory$/, "");
    return new StoreConnectError(diagnosed.store, diagnosed.target, diagnosed.problem, cause, {
      reason: `${diagnosed.reason}; patchbay keeps OAuth logins there because ` +
        'Memory.backend is "redis"',
      remedy: `${remedy}, then run patchbay again (no browser login starts while the store ` +
        'is away, so a login kept there is not replaced); or set Memory.backend to "file" ' +
        `(or "auto") to keep OAuth logins in ${join(configDir(), "oauth")} instead`,
    });
  }
}

/**
 * Where OAuth logins are kept: in Redis when `Memory.backend` is `redis`, else in files in
 * the config directory. Only that explicit choice moves them: `auto` follows REDIS_*
 * variables that may be set for other reasons, and credentials should not move to a
 * network store as a side effect of one.
 */
export function tokenStoreFor(
  memory: MemorySettings,
  env: Environment,
  options: Omit<RedisTokenStoreOptions, "memory" | "env"> = {},
): TokenStore {
  return memory.backend === "redis"
    ? new RedisTokenStore({ memory, env, ...options })
    : new FileTokenStore();
}
