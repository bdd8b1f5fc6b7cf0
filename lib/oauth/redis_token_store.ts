/**
 * OAuth logins in Redis, for configurations whose `Memory.backend` is `redis`: one key per
 * server, `<Memory.key_prefix>:oauth:<server>`, holding the very JSON document a credentials
 * file holds, with no expiry. `list` walks the keys with `SCAN` (on every master of a
 * cluster). The client is built like conversation memory's (lib/redis/client.ts: the same
 * REDIS_* variables, Memory settings and fail-fast options), on first use only, so a session
 * whose stored tokens are never read never connects (redis_connection.ts).
 *
 * When Redis cannot be reached (or refuses the connection: a wrong password, say):
 * - writing keeps what was just obtained, since a rotated refresh token cannot be obtained
 *   again: the document goes to an owner-only file under
 *   `~/.config/patchbay/oauth/undelivered/<store>/`, the person is told once
 *   (`login_kept_locally`), and the next operation that reaches Redis moves it there (the
 *   newer document wins). Failing the write instead would throw away a login the person
 *   just completed; writing it to the file store silently would leave it where the next
 *   run, reading Redis, never looks. If that file cannot be written either, the document
 *   is kept in this process's memory (moved to Redis like the file, if it answers before
 *   the process ends) and `save` fails, saying the login lasts only for this session.
 * - `load` and `list` answer from those kept copies (the person is told once per outage,
 *   `logins_read_locally`); logins only Redis holds are unavailable meanwhile. With no
 *   kept copy to answer from (for that server; for `list`, none at all), they fail with
 *   `Could not connect to Redis at …`, the diagnosed cause and a remedy. No browser login
 *   starts instead: the login exists, and a second one would mint another grant with
 *   nowhere to keep it.
 * - `delete` fails the same way (the login stays in Redis).
 *
 * A Redis that answers and refuses a command (NOPERM, OOM, READONLY, WRONGTYPE) fails the
 * operation with the explained error, `save` included: a copy kept locally would not get
 * past the same refusal. A copy kept during an outage that Redis refuses once back (it
 * returned read-only, say) is still used, and its delivery tried again on the next read.
 *
 * After `close()` every operation fails: nothing would close a connection opened then.
 *
 * @module
 */

import type { Cluster, Redis } from "ioredis";
import { join } from "node:path";
import type { MemorySettings } from "../config/types.ts";
import type { Environment } from "../env.ts";
import { messageOf, PatchbayError, StoreConnectError } from "../errors.ts";
import { OAUTH_STEPS } from "../errors/oauth_steps.ts";
import type { Log } from "../log/log.ts";
import { CONNECT_BUDGET_MS, type RedisClient } from "../redis/client.ts";
import { journalFolder, type RedisSettings, resolveRedisSettings } from "../redis/settings.ts";
import { configDir } from "../paths.ts";
import type { Redactor } from "../redact/redact.ts";
import type { OAuthEvent } from "./broker.ts";
import { LoginStoreConnection } from "./redis_connection.ts";
import {
  FileTokenStore,
  parseCredentials,
  serializeCredentials,
  type ServerCredentials,
  type TokenStore,
} from "./token_store.ts";

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
  /** Told when a login could only be kept locally, and when logins are read from there. */
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
  #resolved: RedisSettings | undefined;
  #undelivered: FileTokenStore | undefined;
  readonly #connection: LoginStoreConnection;
  /** Servers whose login was kept locally in this outage (told once each). */
  readonly #keptLocally = new Set<string>();
  /** Whether this outage's reads from the kept copies were told (once per outage). */
  #toldReadingLocally = false;
  /** Logins neither Redis nor their file took: they last as long as this process. */
  readonly #inMemory = new Map<string, ServerCredentials>();

  constructor(options: RedisTokenStoreOptions) {
    this.#options = options;
    this.#connection = new LoginStoreConnection({
      settings: () => this.#settings,
      connectBudgetMs: options.connectBudgetMs ?? CONNECT_BUDGET_MS,
      commandTimeoutMs: options.commandTimeoutMs,
      log: options.log,
      // A new outage is told again.
      onConnect: () => this.#toldReadingLocally = false,
    });
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

  load(server: string): Promise<ServerCredentials | undefined> {
    return this.#orKept(
      () =>
        this.#connection.run(async (client) =>
          await this.#deliverKept(client, server, await this.#get(client, server))
        ),
      () => this.#kept(server),
    );
  }

  async save(credentials: ServerCredentials): Promise<void> {
    const server = credentials.server;
    try {
      // No expiry: a login carries a refresh token meant to outlive every access token, and
      // a key that expired would log the person out without a word. SET also drops any TTL
      // set on the key by hand. (Memory.ttl_seconds is about conversations only.)
      await this.#connection.run((client) =>
        client.set(this.keyFor(server), serializeCredentials(credentials))
      );
    } catch (error) {
      // Only an unreachable store: one that answered and refused would refuse the delivery
      // of a kept copy too (see the module documentation).
      if (!(error instanceof StoreConnectError)) throw error;
      await this.#keepLocally(credentials, error);
      return;
    }
    // What Redis holds now is newer than any copy kept while it was away.
    await this.#forgetKept(server);
  }

  async delete(server: string): Promise<boolean> {
    const removed = await this.#connection.run((client) => client.del(this.keyFor(server)));
    const removedLocally = await this.#forgetKept(server);
    return removed > 0 || removedLocally;
  }

  list(): Promise<ServerCredentials[]> {
    return this.#orKept(
      () =>
        this.#connection.run(async (client) => {
          const servers = new Set(await this.#scanServers(client));
          for (const kept of await this.#allKept()) servers.add(kept.server);
          const documents: ServerCredentials[] = [];
          for (const server of servers) {
            const stored = await this.#get(client, server);
            const document = await this.#deliverKept(client, server, stored);
            if (document) documents.push(document);
          }
          return documents.sort(byServer);
        }),
      async () => {
        const kept = await this.#allKept();
        return kept.length > 0 ? kept : undefined;
      },
    );
  }

  close(): Promise<void> {
    return this.#connection.close();
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
          remedy: OAUTH_STEPS.deleteKey(key),
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
    const kept = await this.#kept(server);
    if (!kept) return stored;
    const keptIsNewer = !stored || Date.parse(kept.updatedAt) > Date.parse(stored.updatedAt);
    if (keptIsNewer) {
      try {
        await client.set(this.keyFor(server), serializeCredentials(kept));
      } catch (error) {
        // A Redis that came back read-only or without SET permission: the kept login still
        // works, so use it and keep the copy for a later attempt instead of failing the read.
        this.#options.log?.warn(
          `could not move the login to '${server}' kept locally to ${this.#settings.description}; using the local copy`,
          { error: messageOf(error) },
        );
        return kept;
      }
    }
    await this.#forgetKept(server);
    this.#options.log?.info(
      keptIsNewer
        ? `moved the login to '${server}' kept locally to ${this.#settings.description}`
        : `discarded an older local copy of the login to '${server}'`,
    );
    return keptIsNewer ? kept : stored;
  }

  /**
   * The copy of `server`'s login kept while Redis was away: the one in memory (written
   * after the file failed, so newer), else the file.
   */
  async #kept(server: string): Promise<ServerCredentials | undefined> {
    return this.#inMemory.get(server) ?? await this.#undeliveredStore.load(server);
  }

  /** Every kept copy, by server name. */
  async #allKept(): Promise<ServerCredentials[]> {
    const kept = new Map((await this.#undeliveredStore.list()).map((d) => [d.server, d]));
    for (const [server, document] of this.#inMemory) kept.set(server, document);
    return [...kept.values()].sort(byServer);
  }

  /** Drops `server`'s kept copies; whether there was one. */
  async #forgetKept(server: string): Promise<boolean> {
    const inMemory = this.#inMemory.delete(server);
    this.#keptLocally.delete(server);
    return await this.#undeliveredStore.delete(server) || inMemory;
  }

  /**
   * `read`, or while Redis is unreachable what `kept` finds among the kept copies (logged
   * each time; the person is told once per outage). With nothing kept, the read's error.
   */
  async #orKept<T>(read: () => Promise<T>, kept: () => Promise<T | undefined>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      if (!(error instanceof StoreConnectError)) throw error;
      const copy = await kept();
      if (copy === undefined) throw error;
      const dir = this.#undeliveredStore.dir;
      this.#options.log?.warn(`${error.message}; using the logins kept in ${dir}`);
      if (!this.#toldReadingLocally) {
        this.#toldReadingLocally = true;
        this.#options.onEvent?.({
          type: "logins_read_locally",
          store: this.#settings.description,
          dir,
          reason: error.message,
        });
      }
      return copy;
    }
  }

  async #keepLocally(credentials: ServerCredentials, problem: StoreConnectError): Promise<void> {
    const server = credentials.server;
    const local = this.#undeliveredStore;
    const path = await local.pathFor(server);
    try {
      await local.save(credentials);
    } catch (localError) {
      // Neither place took it. Memory keeps it for this process (read back, and delivered
      // if Redis answers before the end); the person must know it goes with the process.
      this.#inMemory.set(server, credentials);
      const store = this.#settings.description;
      throw new PatchbayError(
        "oauth_failed",
        `The login to '${server}' exists only in memory for this session: it could not be ` +
          `saved in ${store} or kept in ${path}`,
        {
          reason: `${withReason(problem)}; and ${withReason(localError)}`,
          remedy: OAUTH_STEPS.loginInMemory(store, local.dir, server),
          cause: problem,
        },
      );
    }
    // The file now holds the newest copy.
    this.#inMemory.delete(server);
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
}

function byServer(a: ServerCredentials, b: ServerCredentials): number {
  return a.server.localeCompare(b.server);
}

/** An error's message and, for patchbay's own errors, their probable cause. */
function withReason(error: unknown): string {
  const message = (error as Error)?.message ?? String(error);
  return error instanceof PatchbayError ? `${message} (${error.reason})` : message;
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
