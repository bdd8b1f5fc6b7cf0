/**
 * Which task registry a session uses: the memory store's (Redis, or the embedded store's
 * folder) while memory is on, else a file in the state folder. A record that cannot
 * reach the store (Redis away) goes to the state folder's file instead, so a task started
 * during an outage is not forgotten; listing reads both, the newer record of a task
 * winning.
 *
 * @module
 */

import type { Log } from "../log/log.ts";
import { stateDir } from "../paths.ts";
import { messageOf } from "../errors.ts";
import type { MemoryStore } from "./types.ts";
import { FileTaskRegistry } from "./task_registry_file.ts";
import { newestFirst, taskKey, type TaskRecord, type TaskRegistry } from "./task_registry.ts";

/** Options of {@linkcode openTaskRegistry}. */
export interface TaskRegistryOptions {
  /** Where the fallback file lives. @default stateDir() */
  stateDir?: string;
  log?: Log;
}

/**
 * The registry for a session whose memory store is `store` (`undefined` or off: memory
 * is off, and the state folder keeps the records).
 */
export function openTaskRegistry(
  store: MemoryStore | undefined,
  options: TaskRegistryOptions = {},
): TaskRegistry {
  const local = new FileTaskRegistry(options.stateDir ?? stateDir());
  const primary = store?.kind === "off" ? undefined : store?.tasks;
  return primary ? new FallingBackRegistry(primary, local, options.log) : local;
}

/** A registry that writes to `fallback` what `primary` cannot take, and reads both. */
class FallingBackRegistry implements TaskRegistry {
  readonly #primary: TaskRegistry;
  readonly #fallback: TaskRegistry;
  readonly #log: Log | undefined;

  constructor(primary: TaskRegistry, fallback: TaskRegistry, log?: Log) {
    this.#primary = primary;
    this.#fallback = fallback;
    this.#log = log;
  }

  get location(): string {
    return this.#primary.location;
  }

  async put(record: TaskRecord): Promise<void> {
    try {
      await this.#primary.put(record);
    } catch (error) {
      this.#log?.warn(
        `could not record task ${record.id} in ${this.#primary.location} ` +
          `(${messageOf(error)}); kept in ${this.#fallback.location}`,
      );
      await this.#fallback.put(record);
    }
  }

  async list(): Promise<TaskRecord[]> {
    const [primary, fallback] = await Promise.all([
      this.#primary.list().catch((error) => {
        this.#log?.warn(`could not read tasks from ${this.#primary.location}`, { error });
        return [] as TaskRecord[];
      }),
      this.#fallback.list(),
    ]);
    const byKey = new Map<string, TaskRecord>();
    for (const record of [...primary, ...fallback]) {
      const key = taskKey(record);
      const known = byKey.get(key);
      if (!known || known.updatedAt < record.updatedAt) byKey.set(key, record);
    }
    return newestFirst(byKey.values());
  }

  async close(): Promise<void> {
    await Promise.all([this.#primary.close(), this.#fallback.close()]);
  }
}
