/**
 * Writing one message to Redis: the append script and the index update in one round
 * trip, and the messages the store lost (a restart without persistence, eviction, expiry)
 * written again, in order, from this process's mirror of the sessions it touched.
 *
 * @module
 */

import type { Log } from "../log/log.ts";
import type { RedisClient } from "../redis/client.ts";
import type { RedisSettings } from "../redis/settings.ts";
import { titleOf } from "./title.ts";
import { APPEND_RESULT, type RedisLayout } from "./redis_layout.ts";
import type { AppendStatus, MessageRecord } from "./types.ts";

type AppendReply = [status: number, length: number];
interface AppendCommand {
  patchbayAppend(...args: (string | number)[]): Promise<AppendReply>;
}

/** The name the append script is defined under on every client. */
export const APPEND_COMMAND = "patchbayAppend";

/** Writes messages of the store's sessions, keeping every record this process saw of them. */
export class RedisAppender {
  readonly #settings: RedisSettings;
  readonly #layout: RedisLayout;
  readonly #log: Log | undefined;
  readonly #client: () => RedisClient | undefined;
  /** Every record of the sessions this process touched, by seq: rewrites lost ones. */
  readonly #mirrors = new Map<string, MessageRecord[]>();

  /** `client` is the store's client of the moment (none while closed). */
  constructor(
    settings: RedisSettings,
    layout: RedisLayout,
    client: () => RedisClient | undefined,
    log?: Log,
  ) {
    this.#settings = settings;
    this.#layout = layout;
    this.#client = client;
    this.#log = log;
  }

  /** Keeps `record` in its session's mirror. */
  remember(sessionId: string, record: MessageRecord): void {
    let mirror = this.#mirrors.get(sessionId);
    if (!mirror) {
      mirror = [];
      this.#mirrors.set(sessionId, mirror);
    }
    mirror[record.seq] = record;
  }

  /** A session loaded whole: its records are the mirror. */
  loaded(sessionId: string, records: readonly MessageRecord[]): void {
    this.#mirrors.set(sessionId, [...records]);
  }

  /** A session deleted: nothing of it is rewritten any more. */
  forget(sessionId: string): void {
    this.#mirrors.delete(sessionId);
  }

  /** Whether this process has the session's history (else it cannot rewrite lost records). */
  knows(sessionId: string): boolean {
    return this.#mirrors.has(sessionId);
  }

  /** The records of the session this process saw, in order. */
  recordsOf(sessionId: string): MessageRecord[] | undefined {
    return this.#mirrors.get(sessionId)?.filter((r) => r !== undefined);
  }

  /** Writes one record; rewrites records the store lost first. */
  async deliver(sessionId: string, record: MessageRecord, force: boolean): Promise<AppendStatus> {
    const [status, length] = await this.#runAppend(sessionId, record, force);
    if (status !== APPEND_RESULT.gap) {
      return status === APPEND_RESULT.duplicate ? "duplicate" : "written";
    }
    const mirror = this.#mirrors.get(sessionId) ?? [];
    const lost = mirror.slice(length, record.seq).filter((r) => r !== undefined);
    this.#log?.warn(
      `${this.#settings.description} holds ${length} of the ${record.seq} earlier messages ` +
        `of session ${sessionId} (restarted without persistence, evicted or expired); ` +
        `rewriting ${lost.length} from this session's history`,
    );
    for (const earlier of lost) await this.#runAppend(sessionId, earlier, true);
    const [again] = await this.#runAppend(sessionId, record, true);
    return again === APPEND_RESULT.duplicate ? "duplicate" : "written";
  }

  /** The append script and the index update, sent together: one round trip. */
  async #runAppend(sessionId: string, record: MessageRecord, force: boolean): Promise<AppendReply> {
    const client = this.#client();
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
      this.#settings.ttlSeconds ?? 0,
      force ? "1" : "0",
      message.folder ?? "",
    ];
    const score = Date.parse(message.timestamp) || Date.now();
    if (this.#settings.topology.mode === "cluster") {
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
}
