/**
 * `openMemory()`: picks the store from the configuration and the environment and opens
 * it, reporting problems as typed errors (`strict`) or as events while the client keeps
 * working.
 *
 * Selection (`Memory.backend`):
 * - `auto` (default): Redis when REDIS_URL or REDIS_HOST is set (or Memory.sentinels /
 *   Memory.cluster_nodes), else the embedded store under the data directory;
 * - `redis`, `file`: that store;
 * - `off`: nothing is written; `/memory` turns it on with the store `auto` would pick.
 *
 * @module
 */

import { join } from "node:path";
import type { MemorySettings } from "../config/types.ts";
import type { Environment } from "../env.ts";
import { PatchbayError } from "../errors.ts";
import type { Log } from "../log/log.ts";
import { dataDir as defaultDataDir } from "../paths.ts";
import type { Redactor } from "../redact/redact.ts";
import { fileError, FileStore } from "./file_store.ts";
import { ensurePrivateDir } from "./json_lines.ts";
import { Memory, type MemoryEvent, type StoreOpener } from "./memory.ts";
import { OffStore } from "./off_store.ts";
import {
  journalFolder,
  redisConfigured,
  type RedisSettings,
  resolveRedisSettings,
} from "../redis/settings.ts";
import { RedisStore, type RedisStoreEvent } from "./redis_store.ts";

/** Options of {@linkcode openMemory}. */
export interface OpenMemoryOptions {
  /** Where memory logs, e.g. `logger.child("memory")`. */
  log?: Log;
  /** Secrets registered here are redacted from every stored message. */
  redactor?: Redactor;
  /** Receives events from the start (including problems met while opening). */
  onEvent?: (event: MemoryEvent) => void;
  signal?: AbortSignal;
  /**
   * Throw the first problem (unreachable store, bad REDIS_* value) instead of falling
   * back; for commands whose whole job is the store, like `patchbay sessions`.
   * @default false
   */
  strict?: boolean;
  /** Where the embedded store and the journal live. @default dataDir() */
  dataDir?: string;
  /** Milliseconds a first connection to Redis may take. @default 1500 */
  connectBudgetMs?: number;
}

/** Opens conversation memory as configured. */
export async function openMemory(
  settings: MemorySettings,
  env: Environment,
  options: OpenMemoryOptions = {},
): Promise<Memory> {
  const base = options.dataDir ?? defaultDataDir();
  const files = new FileStore({ dir: join(base, "sessions"), ttlSeconds: settings.ttlSeconds });
  const wantsRedis = settings.backend === "redis" ||
    (settings.backend !== "file" && redisConfigured(settings, env));
  // The store reports to the memory that is built around it.
  const relay: { to?: Memory } = {};
  const opener = wantsRedis
    ? redisOpener(settings, env, files, base, options, (event) => relay.to?.relay(event))
    : fileOpener(files, options);
  const memory = new Memory({
    opener,
    enabled: false,
    redactor: options.redactor,
    log: options.log,
  });
  relay.to = memory;
  if (options.onEvent) memory.subscribe(options.onEvent);
  if (settings.backend !== "off") await memory.setEnabled(true);
  return memory;
}

function fileOpener(files: FileStore, options: OpenMemoryOptions): StoreOpener {
  return {
    kind: "file",
    location: files.location,
    open: async () => {
      try {
        await ensurePrivateDir(files.dir);
        return { store: files };
      } catch (error) {
        const problem = fileError("create", files.dir, error);
        if (options.strict) throw problem;
        // Nowhere to save: the conversation goes on without memory, and says so.
        return { store: new OffStore(), problem, fallback: true };
      }
    },
  };
}

function redisOpener(
  memory: MemorySettings,
  env: Environment,
  files: FileStore,
  base: string,
  options: OpenMemoryOptions,
  relay: (event: RedisStoreEvent) => void,
): StoreOpener {
  let settings: RedisSettings | undefined;
  let invalid: PatchbayError | undefined;
  try {
    settings = resolveRedisSettings(memory, env, options.redactor);
  } catch (error) {
    if (!(error instanceof PatchbayError)) throw error;
    invalid = error;
  }
  return {
    kind: "redis",
    location: settings?.description ?? "Redis",
    open: async () => {
      if (!settings) {
        if (options.strict) throw invalid;
        // A store that cannot even be addressed: keep the conversation on disk instead.
        const local = await fileOpener(files, options).open();
        return { ...local, problem: invalid, fallback: true };
      }
      const store = new RedisStore({
        settings,
        journalDir: join(base, "journal", journalFolder(settings.identity)),
        log: options.log?.child("redis"),
        onEvent: relay,
        rescue: files,
        connectBudgetMs: options.connectBudgetMs,
      });
      try {
        await store.connect(options.signal);
        return { store };
      } catch (error) {
        if (options.strict || !(error instanceof PatchbayError)) {
          await store.close();
          throw error;
        }
        // Not fatal: the store journals and keeps trying in the background.
        return { store, problem: error };
      }
    },
  };
}
