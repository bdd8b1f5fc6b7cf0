/**
 * The Redis store: standalone, Sentinel or Cluster, through ioredis.
 *
 * ioredis' defaults would queue commands and retry for over a minute against a dead
 * server (NOTES.md); here a first connection either succeeds or is reported within
 * {@linkcode CONNECT_BUDGET_MS}, and a command on a broken connection fails at once.
 * Whatever cannot be written goes to the local journal (crash-safe, on disk) and is
 * delivered, in order and exactly once, when the store answers again.
 *
 * @module
 */

import type { Redis, RedisOptions } from "ioredis";
import { PatchbayError, StoreFailedError } from "../errors.ts";
import type { Log } from "../log.ts";
import { titleOf } from "./title.ts";
import { Journal, type JournalEntry } from "./journal.ts";
import { diagnoseCommandError, diagnoseConnectError, isConnectionProblem } from "./redis_errors.ts";
import {
  APPEND_RESULT,
  APPEND_SCRIPT,
  parseRecords,
  REDIS_SCHEMA_VERSION,
  RedisLayout,
  toSummary,
} from "./redis_layout.ts";
import { valueWithin } from "../async/deadline.ts";
import {
  closeRedisClient,
  COMMAND_TIMEOUT_MS,
  CONNECT_BUDGET_MS,
  connectRedisClient,
  createRedisClient,
  type RedisClient,
} from "../redis/client.ts";
import type { RedisSettings } from "../redis/settings.ts";
import type {
  AppendStatus,
  ListOptions,
  MemoryStore,
  MessageRecord,
  SessionSummary,
} from "./types.ts";

/** Longest wait between ioredis' reconnection attempts once a connection had worked. */
const RECONNECT_MAX_DELAY_MS = 2000;
/** First wait before retrying a store that is away; doubles up to the maximum. */
const RECOVERY_FIRST_DELAY_MS = 500;
const RECOVERY_MAX_DELAY_MS = 15_000;
/** Index entries younger than this are never pruned: their session may be mid-creation. */
const INDEX_PRUNE_GRACE_MS = 60_000;

/** What the store reports as it loses and regains its server. */
export type RedisStoreEvent =
  /** Writes stopped reaching the store; messages go to the journal. Once per outage. */
  | { type: "unavailable"; error: PatchbayError; journal?: string }
  /** The store answers again and every journaled message was delivered. */
  | { type: "restored"; delivered: number }
  /** Messages journaled by an earlier run that could not deliver them were delivered. */
  | { type: "replayed"; delivered: number; sessions: number }
  /** Closing with messages still undelivered: where they are kept. */
  | { type: "kept"; messages: number; journal?: string; rescue?: string };

/** Where undelivered messages go at exit, besides the journal. */
export interface RescueTarget {
  readonly location: string;
  load(sessionId: string): Promise<MessageRecord[] | undefined>;
  append(sessionId: string, record: MessageRecord): Promise<AppendStatus>;
  /** The file a session ends up in, for the message. */
  pathOf(sessionId: string): string;
  close(): Promise<void>;
}

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

/** A journal of an earlier run, discarded once all its entries are delivered. */
interface ClaimedOwner {
  left: number;
  discard(): Promise<void>;
  release(): Promise<void>;
}

/** A message waiting for the store, and the earlier run's journal it came from. */
interface PendingEntry extends JournalEntry {
  owner?: ClaimedOwner;
}
type AppendReply = [status: number, length: number];
interface AppendCommand {
  patchbayAppend(...args: (string | number)[]): Promise<AppendReply>;
}

/** The Redis {@linkcode MemoryStore}. */
export class RedisStore implements MemoryStore {
  readonly kind = "redis" as const;
  readonly settings: RedisSettings;
  readonly #layout: RedisLayout;
  readonly #log: Log | undefined;
  readonly #onEvent: (event: RedisStoreEvent) => void;
  readonly #journal: Journal;
  readonly #rescue: RescueTarget | undefined;
  readonly #budgetMs: number;
  readonly #commandTimeoutMs: number;

  #client: RedisClient | undefined;
  #lastError: unknown;
  #everReady = false;
  #verified = false;
  #closed = false;
  /** Journaled entries not yet delivered, oldest first. */
  #pending: PendingEntry[] = [];
  /** Journals of earlier runs being delivered. */
  #claimed = new Set<ClaimedOwner>();
  /** Every record of the sessions this process touched, by seq: rewrites lost ones. */
  #mirrors = new Map<string, MessageRecord[]>();
  #chain: Promise<unknown> = Promise.resolve();
  #recovery: { timer: Timer; delay: number } | undefined;
  #recoveryDelay = RECOVERY_FIRST_DELAY_MS;
  #recovering: Promise<void> | undefined;
  #flushing: Promise<void> | undefined;
  #outage = false;
  #deliveredInOutage = 0;

  constructor(options: RedisStoreOptions) {
    this.settings = options.settings;
    this.#layout = new RedisLayout(options.settings.keyPrefix);
    this.#log = options.log;
    this.#onEvent = options.onEvent ?? (() => {});
    this.#journal = new Journal(options.journalDir, options.settings.description);
    this.#rescue = options.rescue;
    this.#budgetMs = options.connectBudgetMs ?? CONNECT_BUDGET_MS;
    this.#commandTimeoutMs = options.commandTimeoutMs ?? COMMAND_TIMEOUT_MS;
  }

  get location(): string {
    return this.settings.description;
  }

  /** Whether the last contact with the server worked. */
  get available(): boolean {
    return this.#verified && !this.#outage && this.#client?.status === "ready";
  }

  /** Messages waiting in the journal. */
  get pending(): number {
    return this.#pending.length;
  }

  /** The journal file, once something was journaled. */
  get journalPath(): string | undefined {
    return this.#journal.path;
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
      this.#outage = true;
      this.#scheduleRecovery();
      throw error;
    }
    await this.#claimOrphans();
    if (this.#pending.length > 0) await this.#recover();
  }

  append(sessionId: string, record: MessageRecord): Promise<AppendStatus> {
    this.#remember(sessionId, record);
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
    this.#mirrors.set(sessionId, [...records]);
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
    this.#mirrors.delete(sessionId);
    return removed > 0;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#chain;
    this.#closed = true;
    this.#cancelRecovery();
    await this.#recovering;
    if (this.#pending.length > 0 && this.#client?.status === "ready" && this.#verified) {
      await this.#flush().catch(() => {});
    }
    if (this.#pending.length > 0) await this.#keepUndelivered();
    for (const claimed of this.#claimed) await claimed.release().catch(() => {});
    this.#claimed.clear();
    await this.#journal.close();
    await this.#rescue?.close();
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
      await Promise.race([this.#handshake(client), budget, aborted]);
      this.#everReady = true;
      this.#verified = true;
      this.#log?.info(`connected to ${this.settings.description}`);
    } catch (error) {
      client.disconnect();
      if (signal?.aborted) throw error;
      if (error instanceof PatchbayError) throw error;
      const cause = this.#lastError ?? error;
      const databases = /DB index/i.test(String((cause as Error)?.message))
        ? await this.#countDatabases()
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

  /** Connects, selects the database for real, and checks the layout version. */
  async #handshake(client: RedisClient): Promise<void> {
    await connectRedisClient(client, this.settings);
    const found = await client.get(this.#layout.schema);
    if (found === null) {
      await client.set(this.#layout.schema, String(REDIS_SCHEMA_VERSION), "NX");
      return;
    }
    const version = Number(found);
    if (Number.isInteger(version) && version <= REDIS_SCHEMA_VERSION) return;
    throw new StoreFailedError(
      `${this.settings.description} holds conversations in a layout this patchbay cannot read`,
      {
        reason: Number.isInteger(version)
          ? `${this.#layout.schema} is ${version}; this version of patchbay reads layout ` +
            `${REDIS_SCHEMA_VERSION} (the data was written by a newer patchbay)`
          : `${this.#layout.schema} holds "${found}", not a layout version: something else ` +
            "uses these keys",
        remedy: Number.isInteger(version)
          ? "upgrade patchbay, or set Memory.key_prefix to keep this version's data apart"
          : "set Memory.key_prefix to a prefix nothing else uses",
      },
    );
  }

  async #countDatabases(): Promise<number | undefined> {
    const probe = await this.#createClient({ db: 0 }, true);
    try {
      await valueWithin(probe.connect(), this.#budgetMs / 2);
      const reply = await valueWithin(
        (probe as Redis).config("GET", "databases") as Promise<unknown>,
        this.#budgetMs / 2,
      ) as string[] | undefined;
      const count = Number(reply?.[1]);
      return Number.isInteger(count) ? count : undefined;
    } catch {
      return undefined;
    } finally {
      probe.disconnect();
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
    client.defineCommand("patchbayAppend", { numberOfKeys: 3, lua: APPEND_SCRIPT });
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
      if (this.#pending.length > 0 && !this.#closed) void this.#recover();
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
    if (ready && this.#pending.length === 0) {
      try {
        return await this.#deliver(sessionId, record, false);
      } catch (error) {
        failure = error;
      }
    } else if (!ready) {
      failure = this.#lastError ?? new Error("Connection is closed.");
    }
    // Queued before it is on disk, so a delivery round in progress cannot miss it (and
    // cannot empty the journal under it); delivering it twice would be harmless.
    this.#pending.push({ sessionId, record });
    await this.#journal.append([{ sessionId, record }]);
    if (failure !== undefined) this.#noteOutage(failure);
    if (!this.#flushing) this.#scheduleRecovery();
    return "journaled";
  }

  #noteOutage(error: unknown): void {
    if (this.#outage) return;
    this.#outage = true;
    this.#deliveredInOutage = 0;
    const explained = this.#explain(error);
    this.#log?.warn(`writes to ${this.settings.description} failed: ${explained.message}`);
    this.#onEvent({ type: "unavailable", error: explained, journal: this.#journal.path });
  }

  /** Writes one record; rewrites records the store lost first. */
  async #deliver(sessionId: string, record: MessageRecord, force: boolean): Promise<AppendStatus> {
    const [status, length] = await this.#runAppend(sessionId, record, force);
    if (status !== APPEND_RESULT.gap) {
      return status === APPEND_RESULT.duplicate ? "duplicate" : "written";
    }
    const mirror = this.#mirrors.get(sessionId) ?? [];
    const lost = mirror.slice(length, record.seq).filter((r) => r !== undefined);
    this.#log?.warn(
      `${this.settings.description} holds ${length} of the ${record.seq} earlier messages of ` +
        `session ${sessionId} (restarted without persistence, evicted or expired); ` +
        `rewriting ${lost.length} from this session's history`,
    );
    for (const earlier of lost) await this.#runAppend(sessionId, earlier, true);
    const [again] = await this.#runAppend(sessionId, record, true);
    return again === APPEND_RESULT.duplicate ? "duplicate" : "written";
  }

  /** The append script and the index update, sent together: one round trip. */
  async #runAppend(sessionId: string, record: MessageRecord, force: boolean): Promise<AppendReply> {
    const client = this.#client;
    if (!client) throw new Error("Connection is closed.");
    const keys = this.#layout.session(sessionId);
    const message = record.message;
    const args = [
      ...keys,
      record.id,
      record.seq,
      JSON.stringify({ id: record.id, seq: record.seq, message }),
      message.timestamp,
      message.role,
      message.model ?? "",
      titleOf(message) ?? "",
      this.settings.ttlSeconds ?? 0,
      force ? "1" : "0",
    ];
    const score = Date.parse(message.timestamp) || Date.now();
    if (this.settings.topology.mode === "cluster") {
      // The index sits in another slot, maybe on another node: sent concurrently instead.
      const [reply] = await Promise.all([
        (client as unknown as AppendCommand).patchbayAppend(...args),
        client.zadd(this.#layout.index, score, sessionId),
      ]);
      return reply;
    }
    const pipeline = client.pipeline() as unknown as AppendCommand & {
      zadd(key: string, score: number, member: string): unknown;
      exec(): Promise<Array<[Error | null, unknown]> | null>;
    };
    pipeline.patchbayAppend(...args);
    pipeline.zadd(this.#layout.index, score, sessionId);
    const results = await pipeline.exec();
    if (!results) throw new Error("Connection is closed.");
    for (const [error] of results) if (error) throw error;
    return results[0][1] as AppendReply;
  }

  #remember(sessionId: string, record: MessageRecord): void {
    let mirror = this.#mirrors.get(sessionId);
    if (!mirror) {
      mirror = [];
      this.#mirrors.set(sessionId, mirror);
    }
    mirror[record.seq] = record;
  }

  // --- recovery ---------------------------------------------------------------------

  #scheduleRecovery(): void {
    if (this.#closed || this.#recovery) return;
    const delayMs = this.#recoveryDelay;
    this.#recoveryDelay = Math.min(delayMs * 2, RECOVERY_MAX_DELAY_MS);
    const timer = setTimeout(() => {
      this.#recovery = undefined;
      void this.#recover();
    }, delayMs);
    // A pending retry must not keep a finished command alive.
    Deno.unrefTimer(timer as unknown as number);
    this.#recovery = { timer, delay: delayMs };
  }

  #cancelRecovery(): void {
    if (this.#recovery) clearTimeout(this.#recovery.timer);
    this.#recovery = undefined;
  }

  /**
   * Delivers the journal once the store answers; reschedules itself until then. A store
   * that was never reached is reconnected here (ioredis does not retry a first connection,
   * by our choice, to fail fast); once connected, ioredis reconnects by itself and its
   * `ready` event brings us back, so this never touches a connection it is re-making.
   */
  #recover(): Promise<void> {
    this.#recovering ??= this.#recoverOnce().finally(() => this.#recovering = undefined);
    return this.#recovering;
  }

  async #recoverOnce(): Promise<void> {
    try {
      if (!this.#everReady) {
        const status = this.#client?.status;
        if (status === undefined || status === "end" || status === "wait") {
          await this.#connectOnce(undefined, true);
          await this.#claimOrphans();
        }
      }
      const client = this.#client;
      if (client?.status !== "ready") throw new Error("Connection is closed.");
      // The server may have come back empty: its layout version key goes back first.
      await client.set(this.#layout.schema, String(REDIS_SCHEMA_VERSION), "NX");
      await this.#flush();
      this.#recoveryDelay = RECOVERY_FIRST_DELAY_MS;
    } catch (error) {
      this.#log?.debug(`store still away: ${(error as Error)?.message ?? error}`);
      this.#scheduleRecovery();
    }
  }

  /** Delivers pending entries in order, one round at a time; throws at the first failure. */
  #flush(): Promise<void> {
    this.#flushing ??= this.#flushRound().finally(() => this.#flushing = undefined);
    return this.#flushing;
  }

  async #flushRound(): Promise<void> {
    let delivered = 0;
    let replayed = 0;
    const sessions = new Set<string>();
    while (this.#pending.length > 0) {
      while (this.#pending.length > 0) {
        const entry = this.#pending[0];
        // Entries of earlier runs have no history here to rewrite lost messages from.
        const force = !this.#mirrors.has(entry.sessionId);
        await this.#deliver(entry.sessionId, entry.record, force);
        this.#pending.shift();
        delivered++;
        if (entry.owner) {
          replayed++;
          sessions.add(entry.sessionId);
          if (--entry.owner.left === 0) {
            this.#claimed.delete(entry.owner);
            await entry.owner.discard();
          }
        }
      }
      // Entries queued while this ran are delivered before the journal is emptied.
      if (this.#pending.length === 0) await this.#journal.clear();
    }
    if (replayed > 0) {
      this.#log?.info(`delivered ${replayed} journaled messages of earlier runs`);
      this.#onEvent({ type: "replayed", delivered: replayed, sessions: sessions.size });
    }
    if (this.#outage) {
      this.#outage = false;
      this.#deliveredInOutage += delivered - replayed;
      this.#log?.info(`${this.settings.description} is back; ${delivered} messages delivered`);
      this.#onEvent({ type: "restored", delivered: this.#deliveredInOutage });
    }
  }

  /** Takes over journals of runs that ended before delivering them; they go first. */
  async #claimOrphans(): Promise<void> {
    let claimed;
    try {
      claimed = await this.#journal.claimOrphans();
    } catch (error) {
      // Unreadable journals stay where they are for a later run; this one goes on.
      this.#log?.warn(`could not read the journals in ${this.#journal.dir}: ${error}`);
      return;
    }
    const entries: PendingEntry[] = [];
    for (const journal of claimed) {
      if (journal.entries.length === 0) {
        await journal.discard();
        continue;
      }
      this.#log?.info(`found ${journal.entries.length} undelivered messages in ${journal.path}`);
      const owner: ClaimedOwner = {
        left: journal.entries.length,
        discard: journal.discard,
        release: journal.release,
      };
      this.#claimed.add(owner);
      for (const entry of journal.entries) entries.push({ ...entry, owner });
    }
    this.#pending.unshift(...entries);
  }

  /** At exit with the store away: say where the messages are, and copy sessions locally. */
  async #keepUndelivered(): Promise<void> {
    const messages = this.#pending.length;
    let rescue: string | undefined;
    if (this.#rescue) {
      const sessions = [...new Set(this.#pending.map((e) => e.sessionId))];
      try {
        for (const sessionId of sessions) await this.#rescueSession(sessionId);
        rescue = sessions.length === 1 ? this.#rescue.pathOf(sessions[0]) : this.#rescue.location;
      } catch (error) {
        this.#log?.warn(`could not copy undelivered sessions locally: ${error}`);
      }
    }
    this.#log?.warn(
      `${messages} messages not delivered to ${this.settings.description}; kept in ` +
        `${this.#journal.path}${rescue ? ` and ${rescue}` : ""}`,
    );
    // The journal stays on disk: the next run that reaches the store delivers it.
    this.#onEvent({ type: "kept", messages, journal: this.#journal.path, rescue });
  }

  async #rescueSession(sessionId: string): Promise<void> {
    const target = this.#rescue!;
    const known = this.#mirrors.get(sessionId)?.filter((r) => r !== undefined) ??
      this.#pending.filter((e) => e.sessionId === sessionId).map((e) => e.record);
    const present = new Set((await target.load(sessionId) ?? []).map((r) => r.id));
    for (const record of known) {
      if (!present.has(record.id)) await target.append(sessionId, record);
    }
  }
}
