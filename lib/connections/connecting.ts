/**
 * Connecting servers with a bound: one within its `timeout` plus {@linkcode START_GRACE_MS}
 * (time spent logging in not counted), which enabled servers are still connecting, and a
 * bounded wait for them to settle (start-up going on in the background).
 *
 * @module
 */

import { settlesWithin } from "../async/deadline.ts";
import type { ServerConnection } from "./connection.ts";
import type { ConnectionEvent } from "./types.ts";

/** Time start-up gives a server beyond its `timeout`, to finish diagnosing a failure. */
export const START_GRACE_MS = 2000;

/**
 * Connects, waiting at most the server's `timeout` (more while its package runner installs
 * it) plus grace, logging in not counted; not at all when its kept lists are fresh (they are
 * offered while it connects).
 */
export function connectWithin(connection: ServerConnection): Promise<unknown> {
  const connecting = connection.connect();
  if (connection.listsFromCache) return Promise.resolve();
  return settlesWithin(
    connecting,
    connection.connectTimeoutSeconds * 1000 + START_GRACE_MS,
    connection.oauth,
  );
}

/**
 * Enabled servers whose first connection (or a `/refresh`) is still running, except those
 * whose kept lists are offered meanwhile.
 */
export function pendingServers(connections: Iterable<ServerConnection>): string[] {
  return [...connections]
    .filter((c) =>
      !c.config.disabled && !c.listsFromCache &&
      (c.state === "connecting" || c.state === "disconnected")
    )
    .map((c) => c.name);
}

/**
 * Waits until `pending()` names no server, at most `timeoutMs` (and not after `signal`
 * aborts), checking at each event `on` reports; resolves with the servers pending then.
 */
export function settledWithin(
  on: (listener: (event: ConnectionEvent) => void) => () => void,
  pending: () => string[],
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<string[]> {
  const { signal, timeoutMs } = options;
  if (pending().length === 0 || signal?.aborted) return Promise.resolve(pending());
  return new Promise((resolve) => {
    const finish = () => {
      clearTimeout(timer);
      off();
      signal?.removeEventListener("abort", finish);
      resolve(pending());
    };
    const timer = setTimeout(finish, timeoutMs);
    const off = on((event) => {
      if (event.type === "state" && pending().length === 0) finish();
    });
    signal?.addEventListener("abort", finish, { once: true });
  });
}
