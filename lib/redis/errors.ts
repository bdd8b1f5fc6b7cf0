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
import { STORE_STEPS } from "../errors/store_steps.ts";
import type { RedisSettings } from "./settings.ts";
import { errorCode, errorText, firstLine, type RedisPurpose } from "./connect_diagnosis.ts";

export {
  diagnoseConnectError,
  type DiagnosisContext,
  type RedisPurpose,
} from "./connect_diagnosis.ts";

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
    return new StoreFailedError(`${settings.description} is out of memory`, {
      reason: `the server refused the write (${firstLine(message)})`,
      remedy: STORE_STEPS.outOfMemory(memory),
      cause: error,
    });
  }
  if (/WRONGTYPE/.test(message)) {
    return new StoreFailedError(`${settings.description} holds other data under patchbay's keys`, {
      reason: `a key under ${settings.keyPrefix}: is not what patchbay wrote (${
        firstLine(message)
      })`,
      remedy: STORE_STEPS.keyPrefix(memory),
      cause: error,
    });
  }
  if (/READONLY/.test(message)) {
    return new StoreFailedError(`${settings.description} is read-only`, {
      reason: "the server is a replica (a failover may be in progress)",
      remedy: STORE_STEPS.readOnly(memory),
      cause: error,
    });
  }
  return new StoreFailedError(`${settings.description} refused a command`, {
    reason: (error as Error)?.message ?? String(error),
    remedy: STORE_STEPS.commandRefused(memory),
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
