/**
 * The memory store, opened as the client opens it but strictly: an unreachable Redis, a
 * wrong password or database, or a data folder that cannot be made is reported instead of
 * being absorbed by the client's fallbacks.
 *
 * @module
 */

import type { Config } from "../config/types.ts";
import type { Environment } from "../env.ts";
import type { Log } from "../log/log.ts";
import { openMemory } from "../memory/mod.ts";
import type { Redactor } from "../redact/redact.ts";
import { type CheckResult, failure, pass } from "./check.ts";

/** Options of {@linkcode checkMemory}. */
export interface MemoryCheckOptions {
  log?: Log;
  redactor?: Redactor;
  signal?: AbortSignal;
  /** Where the embedded store lives. @default dataDir() */
  dataDir?: string;
}

/** Opens and closes the configured store. */
export async function checkMemory(
  config: Config,
  env: Environment,
  options: MemoryCheckOptions = {},
): Promise<CheckResult> {
  const name = "memory";
  if (config.memory.backend === "off") {
    return pass(name, 'off ("Memory.backend": "off"): conversations are not saved');
  }
  let memory;
  try {
    memory = await openMemory(config.memory, env, {
      strict: true,
      log: options.log,
      redactor: options.redactor,
      signal: options.signal,
      dataDir: options.dataDir,
    });
  } catch (error) {
    return failure(name, error);
  }
  try {
    const status = memory.status();
    if (status.problem) return failure(name, status.problem);
    return pass(
      name,
      status.kind === "redis" ? `${status.location} answers (${status.text})` : status.text,
    );
  } finally {
    await memory.close();
  }
}
