/**
 * The remedies of a Redis store that refused a command or could not be set up
 * (`lib/redis/`): part of the failure table (`lib/errors/failure_table.ts`), kept in a file
 * of their own so the table stays within the size of a file. A store holds conversation
 * memory (whose journal keeps what it could not write) or logins (which have none): each
 * step given `memory` ends as fits what the store holds.
 *
 * @module
 */

import type { RemedyText } from "./failure_table.ts";
import { MEMORY_STEPS } from "./memory_steps.ts";

/** Logins have no journal: one that a refusing store did not take must be obtained again. */
const LOGIN_AGAIN = ", then log in again if a login could not be saved";

/** `fix`, then what becomes of what the store did not take: journal or login. */
const fixThen = (fix: string, memory: boolean, meanwhile: string): string =>
  memory ? `${fix}; ${meanwhile}` : fix + LOGIN_AGAIN;

/** Steps of the remedies of a Redis store. */
export const STORE_STEPS = {
  /** A store out of memory (OOM, maxmemory). */
  outOfMemory: (memory: boolean): string =>
    fixThen(
      "raise maxmemory or free space in the store",
      memory,
      "messages are kept in the local journal and written once it accepts them",
    ),
  /** Keys under patchbay's prefix that hold other data (WRONGTYPE). */
  keyPrefix: (memory: boolean): string =>
    `set Memory.key_prefix to a prefix nothing else uses${memory ? "" : LOGIN_AGAIN}`,
  /** A replica that refuses writes (READONLY). */
  readOnly: (memory: boolean): string =>
    fixThen(
      "point patchbay at the master (or use Memory.sentinels)",
      memory,
      "messages are kept in the local journal meanwhile",
    ),
  /** A command refused for another reason. */
  commandRefused: (memory: boolean): RemedyText =>
    memory ? MEMORY_STEPS.saveFailed : `run with --debug for details${LOGIN_AGAIN}`,
  /** REDIS_TLS_CA_FILE names a file that cannot be read. */
  caFile: "set REDIS_TLS_CA_FILE to the path of the PEM file of the CA that signed the " +
    "server's certificate",
} as const;
