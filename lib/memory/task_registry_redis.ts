/**
 * The task registry in Redis, beside the conversations: one hash (`<prefix>:v<n>:tasks`),
 * a field per task, its record as JSON. Writing a record is one `HSET` (atomic, so several
 * processes may write at once); listing past the bound forgets the oldest settled records
 * (`HDEL`).
 *
 * @module
 */

import type { RedisClient } from "../redis/client.ts";
import {
  isTaskRecord,
  keptRecords,
  taskKey,
  type TaskRecord,
  type TaskRegistry,
} from "./task_registry.ts";

/** The {@linkcode TaskRegistry} in a Redis hash. */
export class RedisTaskRegistry implements TaskRegistry {
  readonly location: string;
  readonly #client: () => RedisClient;
  readonly #key: string;
  readonly #max: number | undefined;

  /** `client`: the store's client once it is ready (throws while it is not). */
  constructor(
    client: () => RedisClient,
    key: string,
    location: string,
    options: { maxRecords?: number } = {},
  ) {
    this.#client = client;
    this.#key = key;
    this.location = location;
    this.#max = options.maxRecords;
  }

  async put(record: TaskRecord): Promise<void> {
    await this.#client().hset(this.#key, taskKey(record), JSON.stringify(record));
  }

  async list(): Promise<TaskRecord[]> {
    const client = this.#client();
    const fields = await client.hgetall(this.#key);
    const records: TaskRecord[] = [];
    for (const text of Object.values(fields)) {
      try {
        const value = JSON.parse(text);
        if (isTaskRecord(value)) records.push(value);
      } catch {
        // A damaged field is no record; it is forgotten with the next excess.
      }
    }
    const kept = keptRecords(records, this.#max);
    if (kept.length < Object.keys(fields).length) {
      const keep = new Set(kept.map(taskKey));
      const forget = Object.keys(fields).filter((field) => !keep.has(field));
      if (forget.length > 0) await client.hdel(this.#key, ...forget);
    }
    return kept;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
