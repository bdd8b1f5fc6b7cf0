/**
 * Turns what ioredis reports into typed errors: `Could not connect to Redis at
 * <host>:<port>: <problem>` (its rules: `connect_diagnosis.ts`), and a command a working
 * connection refused. ioredis rejects with "Connection is closed."; the useful cause is the
 * last `error` event, which the caller passes here.
 *
 * Conversation memory and OAuth logins (`lib/oauth/redis_token_store.ts`) share the
 * diagnosis; the {@linkcode RedisPurpose} chooses how a remedy ends, since conversation
 * memory can be turned off for a session and logins cannot.
 *
 * @module
 */

import { StoreFailedError } from "../errors.ts";
import { netProblem } from "../errors/failure.ts";
import { perSurface, STEPS } from "../errors/failure_table.ts";
import type { RedisSettings } from "./settings.ts";
import { errorCode, errorText, firstLine, type RedisPurpose } from "./connect_diagnosis.ts";

export {
  diagnoseConnectError,
  type DiagnosisContext,
  type RedisPurpose,
} from "./connect_diagnosis.ts";

/** Logins have no journal: one that a refusing store did not take must be obtained again. */
const LOGIN_AGAIN = ", then log in again if a login could not be saved";

/**
 * A failure of a command on a working connection (out of memory, wrong key type, ...).
 * Conversation memory keeps what it could not write in its journal; a login that could not
 * be saved has to be repeated.
 */
export function diagnoseCommandError(
  error: unknown,
  settings: RedisSettings,
  purpose: RedisPurpose,
): StoreFailedError {
  const message = errorText(error);
  const memory = purpose === "memory";
  if (/^OOM|maxmemory/i.test(message)) {
    const fix = "raise maxmemory or free space in the store";
    return new StoreFailedError(`${settings.description} is out of memory`, {
      reason: `the server refused the write (${firstLine(message)})`,
      remedy: memory
        ? `${fix}; messages are kept in the local journal and written once it accepts them`
        : fix + LOGIN_AGAIN,
      cause: error,
    });
  }
  if (/WRONGTYPE/.test(message)) {
    return new StoreFailedError(`${settings.description} holds other data under patchbay's keys`, {
      reason: `a key under ${settings.keyPrefix}: is not what patchbay wrote (${
        firstLine(message)
      })`,
      remedy: `set Memory.key_prefix to a prefix nothing else uses${memory ? "" : LOGIN_AGAIN}`,
      cause: error,
    });
  }
  if (/READONLY/.test(message)) {
    const fix = "point patchbay at the master (or use Memory.sentinels)";
    return new StoreFailedError(`${settings.description} is read-only`, {
      reason: "the server is a replica (a failover may be in progress)",
      remedy: memory
        ? `${fix}; messages are kept in the local journal meanwhile`
        : fix + LOGIN_AGAIN,
      cause: error,
    });
  }
  return new StoreFailedError(`${settings.description} refused a command`, {
    reason: (error as Error)?.message ?? String(error),
    remedy: memory
      ? perSurface`run with --debug for details, or ${STEPS.memoryOff}`
      : `run with --debug for details${LOGIN_AGAIN}`,
    cause: error,
  });
}

/** Whether the failure is about the connection rather than the command. */
export function isConnectionProblem(error: unknown): boolean {
  // Network problems by the one classifier; then what only ioredis and Redis say.
  const net = netProblem(error);
  if (net === "refused" || net === "dns" || net === "timeout" || net === "unreachable") {
    return true;
  }
  const text = `${errorCode(error)} ${errorText(error)}`;
  return /Connection is closed|Stream isn't writeable|ECONN|EPIPE|MaxRetriesPerRequest|CLUSTERDOWN|TRYAGAIN|LOADING|None of startup nodes|All sentinels|Failed to refresh|enableOfflineQueue|not (?:yet )?connected|socket/i
    .test(text);
}
