/**
 * The lifecycle of one server's connection, as an explicit transition table: every
 * state change goes through {@linkcode assertTransition}, so an impossible change is a
 * bug caught where it happens instead of a status that lies.
 *
 * | from \ to     | connecting | connected | failed | reconnecting | closed |
 * |---------------|------------|-----------|--------|--------------|--------|
 * | disconnected  | start      |           |        |              | close  |
 * | connecting    |            | handshake | error  |              | close  |
 * | connected     | refresh!   |           |        | lost         | close  |
 * | reconnecting  |            | retry ok  | gave up|              | close  |
 * | failed        | refresh    |           |        |              | close  |
 * | closed        |            |           |        |              |        |
 *
 * - `disconnected`: not started yet; disabled entries (`disabled: true`) stay here.
 * - `connecting`: an attempt started by start-up or `/refresh` is running; Ctrl+C in a
 *   command waiting for it skips it (→ `failed`, saying so).
 * - `connected`: the handshake succeeded and the lists are loaded; the connection is
 *   watched (process exit, dropped streams, failed requests, keep-alive pings).
 * - `reconnecting`: the connection was lost mid-session; attempts run with exponential
 *   backoff (bounded for stdio, without end for network servers); `/refresh` runs the
 *   next one at once, in the same series.
 * - `failed`: the attempt failed (or a stdio server's retries ran out); the diagnosed
 *   error is kept and nothing happens until `/refresh`.
 * - `closed`: the manager was closed; final.
 *
 * `refresh!` is a forced refresh (reconnect a live connection); a plain refresh of a
 * connected server re-lists without reconnecting.
 *
 * @module
 */

import type { ConnectionState } from "./types.ts";

/** Allowed next states of each state. */
export const TRANSITIONS: Readonly<Record<ConnectionState, readonly ConnectionState[]>> = {
  disconnected: ["connecting", "closed"],
  connecting: ["connected", "failed", "closed"],
  connected: ["connecting", "reconnecting", "closed"],
  reconnecting: ["connected", "failed", "closed"],
  failed: ["connecting", "closed"],
  closed: [],
};

/** Whether the table allows `from` → `to`. */
export function canTransition(from: ConnectionState, to: ConnectionState): boolean {
  return TRANSITIONS[from].includes(to);
}

/** Throws on a transition the table does not allow (a bug in the caller). */
export function assertTransition(server: string, from: ConnectionState, to: ConnectionState): void {
  if (!canTransition(from, to)) {
    throw new Error(`connection '${server}': no transition from ${from} to ${to}`);
  }
}
