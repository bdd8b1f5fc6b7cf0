/**
 * The Redis store: standalone, Sentinel or Cluster, through ioredis.
 *
 * ioredis' defaults would queue commands and retry for over a minute against a dead
 * server (measured); here a first connection either succeeds or is reported within
 * {@linkcode CONNECT_BUDGET_MS}, and a command on a broken connection fails at once.
 * Whatever cannot be written goes to the local journal and is delivered when the store
 * answers again (`redis_outage.ts`); writing itself is `redis_append.ts`, the keys and
 * the append script `redis_layout.ts`.
 *
 * @module
 */

import { RedisLeases } from "./redis_lease.ts";
import { RedisTaskRegistry } from "./task_registry_redis.ts";
import type { RedisOptions } from "ioredis";
import { PatchbayError } from "../errors.ts";
import type { Log } from "../log/log.ts";
import { Journal } from "./journal.ts";
import {
  diagnoseCommandError,
  diagnoseConnectError,
  isConnectionProblem,
} from "../redis/errors.ts";
import { APPEND_COMMAND, RedisAppender } from "./redis_append.ts";
import {
  APPEND_SCRIPT,
  parseRecords,
  REDIS_SCHEMA_VERSION,
  RedisLayout,
  toSummary,
} from "./redis_layout.ts";
import {
  closeRedisClient,
  COMMAND_TIMEOUT_MS,
  CONNECT_BUDGET_MS,
  createRedisClient,
  type RedisClient,
} from "../redis/client.ts";
import type { RedisSettings } from "../redis/settings.ts";
import { countDatabases, handshake } from "./redis_handshake.ts";
import { OutageQueue, type RedisStoreEvent, type RescueTarget } from "./redis_outage.ts";
import type {
  AppendStatus,
  ListOptions,
  MemoryStore,
  MessageRecord,
  SessionSummary,
} from "./types.ts";

export type { RedisStoreEvent, RescueTarget } from "./redis_outage.ts";

/** Longest wait between ioredis' reconnection attempts once a connection had worked. */
const RECONNECT_MAX_DELAY_MS = 2000;
/** Index entries younger than this are never pruned: their session may be mid-creation. */
const INDEX_PRUNE_GRACE_MS = 60_000;

/** Options of {@linkcode RedisStore}. */
export interface RedisStoreOptions {
  settings: RedisSettings;
  /** Folder of this store's outage journal (one folder per store identity). */
  journalDir: string;
  log?: Log;
  onEvent?: (event: RedisStoreEvent) => void;
  /** At exit, sessions with undelivered messages are also written here (closed with the store). */
  rescue?: RescueTarget;
  /** @default CONNECT_BUDGET_MS */
  connectBudgetMs?: number;
  /** @default COMMAND_TIMEOUT_MS */
  commandTimeoutMs?: number;
}

/** ioredis' Node typings change what `setTimeout` returns; Deno's is a number. */
type Timer = ReturnType<typeof setTimeout>;

/** The Redis {@linkcode MemoryStore}. */
export class RedisStore implements MemoryStore {
  readonly kind = "redis" as const;
  readonly settings: RedisSettings;
  readonly #layout: RedisLayout;
  readonly #log: Log | undefined;
  readonly #appender: RedisAppender;
  readonly #outage: OutageQueue;
  readonly #budgetMs: number;
  readonly #commandTimeoutMs: number;

  #client: RedisClient | undefined;
  /** One key per open conversation, beside its messages (`redis_lease.ts`). */
  readonly leases: RedisLeases;
  /** The tasks patchbay started, beside the conversations (`task_registry_redis.ts`). */
  readonly tasks: RedisTaskRegistry;
  #lastError: unknown;
  #everReady = false;
  #verified = false;
  #closed = false;
  #chain: Promise<unknown> = Promise.resolve();

  constructor(options: RedisStoreOptions) {
    this.settings = options.settings;
    this.#layout = new RedisLayout(options.settings.keyPrefix);
    this.#log = options.log;
    this.#budgetMs = options.connectBudgetMs ?? CONNECT_BUDGET_MS;
    this.#commandTimeoutMs = options.commandTimeoutMs ?? COMMAND_TIMEOUT_MS;
    this.#appender = new RedisAppender(this.settings, this.#layout, () => this.#client, this.#log);
    this.leases = new RedisLeases(
      () => this.#ready(),
      (id) => `${this.#layout.session(id)[2]}:lease`,
    );
    this.tasks = new RedisTaskRegistry(
      () => this.#ready(),
      this.#layout.tasks,
      options.settings.description,
    );
    this.#outage = new OutageQueue({
      journal: new Journal(options.journalDir, options.settings.description),
      appender: this.#appender,
      description: this.settings.description,
      log: this.#log,
      onEvent: options.onEvent ?? (() => {}),
      rescue: options.rescue,
      explain: (error) => this.#explain(error),
      reconnect: () => this.#readyForJournal(),
      closed: () => this.#closed,
    });
  }

  get location(): string {
    return this.settings.description;
  }

  /** Whether the last contact with the server worked. */
  get available(): boolean {
    return this.#verified && !this.#outage.away && this.#client?.status === "ready";
  }

  /** Messages waiting in the journal. */
  get pending(): number {
    return this.#outage.pending;
  }

  /** The journal file, once something was journaled. */
  get journalPath(): string | undefined {
    return this.#outage.journalPath;
  }

  /**
   * Connects, checks the database and the layout version, and delivers journals left by
   * earlier runs. Throws a `StoreConnectError` (or `StoreFailedError`) within the budget;
   * the store then keeps journaling and retrying in the background until closed.
   */
  async connect(signal?: AbortSignal): Promise<void> {
    try {
      await this.#connectOnce(signal);
    } catch (error) {
      this.#outage.unreachable();
      throw error;
    }
    await this.#outage.claimOrphans();
    if (this.#outage.pending > 0) await this.#outage.recover();
  }

  append(sessionId: string, record: MessageRecord): Promise<AppendStatus> {
    this.#appender.remember(sessionId, record);
    const run = this.#chain.then(() => this.#appendNow(sessionId, record));
    this.#chain = run.catch(() => {});
    return run;
  }

  async load(sessionId: string): Promise<MessageRecord[] | undefined> {
    const [messages] = this.#layout.session(sessionId);
    const client = this.#ready();
    const items = await this.#command(() => client.lrange(messages, 0, -1));
    if (items.length === 0) return undefined;
    const records = parseRecords(items);
    this.#appender.loaded(sessionId, records);
    return records;
  }

  async list(options: ListOptions = {}): Promise<SessionSummary[]> {
    const client = this.#ready();
    const summaries: SessionSummary[] = [];
    const want = options.limit ?? Infinity;
    let offset = 0;
    // Pages, because entries whose session expired are skipped (and pruned).
    const page = Number.isFinite(want) ? Math.max(want, 10) : 500;
    while (summaries.length < want) {
      options.signal?.throwIfAborted();
      const flat = await this.#command(() =>
        client.zrevrange(this.#layout.index, offset, offset + page - 1, "WITHSCORES")
      );
      if (flat.length === 0) break;
      const entries: Array<{ id: string; score: number }> = [];
      for (let i = 0; i < flat.length; i += 2) {
        entries.push({ id: flat[i], score: Number(flat[i + 1]) });
      }
      const metas = await this.#command(() =>
        Promise.all(entries.map((e) => client.hgetall(this.#layout.session(e.id)[2])))
      );
      const stale: string[] = [];
      entries.forEach((entry, i) => {
        const summary = toSummary(entry.id, metas[i]);
        if (summary) summaries.push(summary);
        else if (Date.now() - entry.score > INDEX_PRUNE_GRACE_MS) stale.push(entry.id);
      });
      if (stale.length > 0) {
        await this.#command(() => client.zrem(this.#layout.index, ...stale));
        offset -= stale.length;
      }
      offset += entries.length;
    }
    return summaries.slice(0, want);
  }

  async summary(sessionId: string): Promise<SessionSummary | undefined> {
    const client = this.#ready();
    const meta = await this.#command(() => client.hgetall(this.#layout.session(sessionId)[2]));
    return toSummary(sessionId, meta);
  }

  async findIds(prefix: string): Promise<string[]> {
    const client = this.#ready();
    const ids = await this.#command(() => client.zrange(this.#layout.index, "0", "-1"));
    return ids.filter((id) => id.startsWith(prefix));
  }

  async delete(sessionId: string): Promise<boolean> {
    const client = this.#ready();
    const keys = this.#layout.session(sessionId);
    const [removed] = await this.#command(() =>
      Promise.all([client.del(...keys), client.zrem(this.#layout.index, sessionId)])
    );
    this.#appender.forget(sessionId);
    return removed > 0;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#chain;
    this.#closed = true;
    await this.#outage.close(() => this.#client?.status === "ready" && this.#verified);
    await this.#disconnect();
  }

  // --- connection -------------------------------------------------------------------

  /** One connection attempt; `retry` attempts (in the background) log quietly. */
  async #connectOnce(signal?: AbortSignal, retry = false): Promise<void> {
    const client = this.#client ?? await this.#createClient();
    this.#client = client;
    this.#lastError = undefined;
    let timer: Timer | undefined;
    const budget = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`connection timed out after ${this.#budgetMs} ms`)),
        this.#budgetMs,
      );
    });
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal?.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
    try {
      await Promise.race([handshake(client, this.settings, this.#layout), budget, aborted]);
      this.#everReady = true;
      this.#verified = true;
      this.#log?.info(`connected to ${this.settings.description}`);
    } catch (error) {
      client.disconnect();
      if (signal?.aborted) throw error;
      if (error instanceof PatchbayError) throw error;
      const cause = this.#lastError ?? error;
      const databases = /DB index/i.test(String((cause as Error)?.message))
        ? await countDatabases(await this.#createClient({ db: 0 }, true), this.#budgetMs)
        : undefined;
      const diagnosed = diagnoseConnectError(cause, {
        settings: this.settings,
        budgetMs: this.#budgetMs,
        databases,
        purpose: "memory",
      });
      this.#log?.[retry ? "debug" : "warn"](diagnosed.message, {
        cause: String((cause as Error)?.message ?? cause),
      });
      throw diagnosed;
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener("abort", onAbort);
    }
  }

  /** A client as configured; a `probe` (one question, then closed) reports to nobody. */
  async #createClient(override: Partial<RedisOptions> = {}, probe = false): Promise<RedisClient> {
    const retry = (times: number) =>
      this.#everReady && !this.#closed ? Math.min(100 * 2 ** times, RECONNECT_MAX_DELAY_MS) : null;
    const client = await createRedisClient(this.settings, {
      connectTimeoutMs: this.#budgetMs,
      commandTimeoutMs: this.#commandTimeoutMs,
      retry,
      override,
    });
    client.defineCommand(APPEND_COMMAND, { numberOfKeys: 3, lua: APPEND_SCRIPT });
    // Without a listener ioredis prints every failure.
    if (probe) {
      client.on("error", () => {});
      return client;
    }
    // The last failure is the useful cause of a failed connection.
    client.on("error", (error: unknown) => {
      this.#lastError = error;
      this.#log?.debug(`redis: ${(error as Error)?.message ?? error}`);
    });
    client.on("ready", () => {
      this.#lastError = undefined;
      if (this.#outage.pending > 0 && !this.#closed) void this.#outage.recover();
    });
    return client;
  }

  async #disconnect(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    if (!client) return;
    await closeRedisClient(client);
  }

  /** The client, if the store is usable for reads; else the reason it is not. */
  #ready(): RedisClient {
    if (this.#closed) throw new Error("the Redis store is closed");
    const client = this.#client;
    if (client && this.#verified && client.status === "ready") return client;
    throw diagnoseConnectError(this.#lastError ?? new Error("Connection is closed."), {
      settings: this.settings,
      budgetMs: this.#budgetMs,
      purpose: "memory",
    });
  }

  /** Runs a read or maintenance command; failures become typed errors. */
  async #command<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw this.#explain(error);
    }
  }

  #explain(error: unknown): PatchbayError {
    if (error instanceof PatchbayError) return error;
    if (isConnectionProblem(error)) {
      // A refused reconnection says more than the failed command ("Connection is closed.").
      return diagnoseConnectError(this.#lastError ?? error, {
        settings: this.settings,
        budgetMs: this.#commandTimeoutMs,
        phase: "session",
        purpose: "memory",
      });
    }
    return diagnoseCommandError(error, this.settings, "memory");
  }

  // --- writing ----------------------------------------------------------------------

  async #appendNow(sessionId: string, record: MessageRecord): Promise<AppendStatus> {
    if (this.#closed) throw new Error("the Redis store is closed");
    const ready = this.#client?.status === "ready" && this.#verified;
    let failure: unknown;
    if (ready && this.#outage.pending === 0) {
      try {
        return await this.#appender.deliver(sessionId, record, false);
      } catch (error) {
        failure = error;
      }
    } else if (!ready) {
      failure = this.#lastError ?? new Error("Connection is closed.");
    }
    await this.#outage.hold({ sessionId, record }, failure);
    return "journaled";
  }

  /**
   * Before the journal is delivered: a store that was never reached is connected here
   * (ioredis does not retry a first connection, by our choice, to fail fast), and a server
   * that may have come back empty gets its layout version key back first.
   */
  async #readyForJournal(): Promise<void> {
    if (!this.#everReady) {
      const status = this.#client?.status;
      if (status === undefined || status === "end" || status === "wait") {
        await this.#connectOnce(undefined, true);
        await this.#outage.claimOrphans();
      }
    }
    const client = this.#client;
    if (client?.status !== "ready") throw new Error("Connection is closed.");
    await client.set(this.#layout.schema, String(REDIS_SCHEMA_VERSION), "NX");
  }
}
