/**
 * The task registry of a command that keeps no conversation (`patchbay call`, `patchbay
 * tasks`): the one memory's configuration picks (`openTaskRegistry`), opened only when a
 * task is first recorded or read, so a command that starts no task pays nothing for it.
 *
 * @module
 */

import type { MemorySettings } from "../config/types.ts";
import type { Environment } from "../env.ts";
import type { Log } from "../log/log.ts";
import type { Memory } from "../memory/memory.ts";
import { openTaskRegistry } from "../memory/task_registry_open.ts";
import type { TaskRecord, TaskRegistry } from "../memory/task_registry.ts";
import type { Redactor } from "../redact/redact.ts";

/** A registry opened on first use, and closed with the memory it opened. */
export class LazyTaskRegistry implements TaskRegistry {
  readonly #open: () => Promise<{ registry: TaskRegistry; memory?: Memory }>;
  #opened?: Promise<{ registry: TaskRegistry; memory?: Memory }>;
  #location = "the task registry";

  constructor(open: () => Promise<{ registry: TaskRegistry; memory?: Memory }>) {
    this.#open = open;
  }

  get location(): string {
    return this.#location;
  }

  async put(record: TaskRecord): Promise<void> {
    await (await this.#registry()).put(record);
  }

  async list(): Promise<TaskRecord[]> {
    return await (await this.#registry()).list();
  }

  async close(): Promise<void> {
    if (!this.#opened) return;
    const { registry, memory } = await this.#opened.catch(() => ({
      registry: undefined,
      memory: undefined,
    }));
    await registry?.close();
    await memory?.close();
  }

  async #registry(): Promise<TaskRegistry> {
    this.#opened ??= this.#open();
    const { registry } = await this.#opened;
    this.#location = registry.location;
    return registry;
  }
}

/** Options of {@linkcode commandTaskRegistry}. */
export interface CommandRegistryOptions {
  log?: Log;
  redactor?: Redactor;
}

/** The registry memory's settings pick, opened on first use (see the module). */
export function commandTaskRegistry(
  settings: MemorySettings,
  env: Environment,
  options: CommandRegistryOptions = {},
): LazyTaskRegistry {
  return new LazyTaskRegistry(async () => {
    const { openMemory } = await import("../memory/open.ts");
    const memory = await openMemory(settings, env, {
      log: options.log?.child("memory"),
      redactor: options.redactor,
    });
    return {
      registry: openTaskRegistry(memory.enabled ? memory.store : undefined, { log: options.log }),
      memory,
    };
  });
}
