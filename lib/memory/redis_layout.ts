/**
 * The Redis key layout, version 1, and how its values read back. docs/memory.md ("Redis key
 * layout") documents it for people who inspect or migrate the data.
 *
 * ```
 * <prefix>:schema                        string  layout version ("1")
 * <prefix>:v1:sessions                   zset    session id, scored by last message (ms)
 * <prefix>:v1:session:{<id>}:messages    list    one JSON record per message, in order
 * <prefix>:v1:session:{<id>}:ids         set     message ids: a retried write is a no-op
 * <prefix>:v1:session:{<id>}:meta        hash    started, updated, messages, turns,
 *                                                model, title
 * ```
 *
 * The `{<id>}` hash tag puts a session's three keys in one Redis Cluster slot, so the
 * append script may touch them together; the index lives apart and is updated beside it.
 *
 * @module
 */

import type { MessageRecord, SessionSummary } from "./types.ts";

/** The layout this version writes and reads. */
export const REDIS_SCHEMA_VERSION = 1;

/** The keys of one store (one prefix). */
export class RedisLayout {
  readonly prefix: string;

  constructor(prefix: string) {
    this.prefix = prefix;
  }

  /** The layout version key. */
  get schema(): string {
    return `${this.prefix}:schema`;
  }

  /** Every session id, scored by the time of its last message. */
  get index(): string {
    return `${this.prefix}:v${REDIS_SCHEMA_VERSION}:sessions`;
  }

  /** The task registry: a hash of task records (`task_registry_redis.ts`). */
  get tasks(): string {
    return `${this.prefix}:v${REDIS_SCHEMA_VERSION}:tasks`;
  }

  /** The three keys of a session: messages, ids, meta (the append script's KEYS). */
  session(id: string): [messages: string, ids: string, meta: string] {
    const base = `${this.prefix}:v${REDIS_SCHEMA_VERSION}:session:{${id}}`;
    return [`${base}:messages`, `${base}:ids`, `${base}:meta`];
  }
}

/** What the append script answers, first element of its reply. */
export const APPEND_RESULT = { written: 1, duplicate: 0, gap: -1 } as const;

/**
 * Appends one record atomically, in one round trip.
 *
 * KEYS: messages, ids, meta. ARGV: message id, seq, record JSON, ISO timestamp, role,
 * model, title, TTL seconds (0: none), force ("1" to append despite a gap), folder.
 *
 * - An id already stored answers `duplicate` and changes nothing: replaying a journal, or
 *   retrying a write whose reply was lost, cannot store a message twice.
 * - A seq beyond the stored length means the store lost messages (restarted without
 *   persistence, evicted, expired): it answers `gap` with the stored length so the client
 *   can first rewrite the missing ones from its own history.
 * - A seq below the stored length with a new id means another client appended meanwhile;
 *   the message goes at the end, so nothing is lost.
 */
export const APPEND_SCRIPT = `
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then
  return {${APPEND_RESULT.duplicate}, redis.call('LLEN', KEYS[1])}
end
local len = redis.call('LLEN', KEYS[1])
if tonumber(ARGV[2]) > len and ARGV[9] ~= '1' then
  return {${APPEND_RESULT.gap}, len}
end
len = redis.call('RPUSH', KEYS[1], ARGV[3])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('HSETNX', KEYS[3], 'started', ARGV[4])
redis.call('HSET', KEYS[3], 'updated', ARGV[4], 'messages', len)
if ARGV[5] == 'user' then
  redis.call('HINCRBY', KEYS[3], 'turns', 1)
  if ARGV[7] ~= '' then
    redis.call('HSETNX', KEYS[3], 'title', ARGV[7])
  end
  if ARGV[10] ~= nil and ARGV[10] ~= '' then
    redis.call('HSETNX', KEYS[3], 'folder', ARGV[10])
  end
end
if ARGV[6] ~= '' then
  redis.call('HSET', KEYS[3], 'model', ARGV[6])
end
local ttl = tonumber(ARGV[8])
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
  redis.call('EXPIRE', KEYS[3], ttl)
end
return {${APPEND_RESULT.written}, len}
`;

/** Parses stored JSON records; one `JSON.parse` for the whole list when it is intact. */
export function parseRecords(items: string[]): MessageRecord[] {
  let values: unknown[];
  try {
    values = JSON.parse(`[${items.join(",")}]`);
  } catch {
    values = items.map((item) => {
      try {
        return JSON.parse(item);
      } catch {
        return undefined;
      }
    });
  }
  const records: MessageRecord[] = [];
  for (const value of values) {
    const record = value as MessageRecord | undefined;
    if (!record || typeof record.id !== "string" || typeof record.message !== "object") continue;
    records.push({ id: record.id, seq: records.length, message: record.message });
  }
  return records;
}

/** A session's summary from its `meta` hash; `undefined` when the hash is not (yet) one. */
export function toSummary(id: string, meta: Record<string, string>): SessionSummary | undefined {
  if (!meta || !meta.started) return undefined;
  return {
    id,
    started: meta.started,
    lastMessageAt: meta.updated ?? meta.started,
    messages: Number(meta.messages ?? 0),
    turns: Number(meta.turns ?? 0),
    ...(meta.model ? { model: meta.model } : {}),
    ...(meta.title ? { title: meta.title } : {}),
    ...(meta.folder ? { folder: meta.folder } : {}),
  };
}
