/**
 * The session's wire trace, when one is being recorded: a holder of its own, so that the
 * transports, the connection manager and the REPL reach the same recorder, and `/trace`
 * can start or stop it mid-session for every server at once. With no trace, what the
 * transports pay per message is the one check of {@linkcode activeTrace}.
 *
 * @module
 */

import type { TraceRecorder } from "./recorder.ts";
import { FALLBACK_EVENT, type TraceTransport } from "./record.ts";
import type { ConnectionEvent } from "../connections/types.ts";
import type { OAuthEvent } from "../oauth/broker.ts";
import type { HttpExchange, MessageObserver, TransportEvent } from "../transports/observer.ts";

let active: TraceRecorder | undefined;

/** The trace being recorded, if any. */
export function activeTrace(): TraceRecorder | undefined {
  return active;
}

/** Makes `recorder` the session's trace (or none), closing the one it replaces. */
export function setActiveTrace(recorder: TraceRecorder | undefined): void {
  if (active !== recorder) active?.close();
  active = recorder;
}

/**
 * The observer a transport to `server` gets: `inner` (the raw tool schemas, the requests'
 * trace context) sees every message and event, and the active trace, when there is one,
 * records it.
 */
export function tracingObserver(
  server: string,
  transport: TraceTransport,
  inner?: MessageObserver,
): MessageObserver {
  return {
    sent(message) {
      inner?.sent?.(message);
      if (active) active.message(server, transport, "out", message);
    },
    received(message) {
      inner?.received?.(message);
      if (active) active.message(server, transport, "in", message);
    },
    event(event: TransportEvent) {
      inner?.event?.(event);
      if (active) active.record({ kind: "event", server, transport, ...event });
    },
    exchange(exchange: HttpExchange) {
      if (active) active.record({ kind: "http", server, transport, ...exchange });
    },
    get exchanges() {
      return active !== undefined;
    },
  };
}

/** A connection's state change (connect, lost, reconnect attempt, failure) as a trace line. */
export function traceConnectionEvent(event: ConnectionEvent): void {
  if (!active || event.type !== "state") return;
  active.record({
    kind: "event",
    event: "state",
    server: event.server,
    state: event.state,
    ...(event.error ? { error: event.error.message, cause: event.error.reason } : {}),
  });
  // What the server declares but does not serve, each on a line of its own.
  for (const warning of event.warnings ?? []) {
    active.record({ kind: "event", event: "warning", server: event.server, warning });
  }
}

/** An OAuth step, without its URLs or anything a token could be read from. */
export function traceOAuthEvent(event: OAuthEvent): void {
  if (!active) return;
  const fields = event as unknown as Record<string, unknown>;
  const kept: Record<string, unknown> = {};
  for (const name of ["how", "issuer", "scope", "reason", "behind", "expiresAt"]) {
    if (fields[name] !== undefined) kept[name] = fields[name];
  }
  active.record({
    kind: "event",
    event: "oauth",
    server: typeof fields.server === "string" ? fields.server : undefined,
    step: event.type,
    ...kept,
  });
}

/** An entry's url answered streamable HTTP the legacy way: it is reached over SSE now. */
export function traceTransportFallback(server: string, reason: string): void {
  if (!active) return;
  active.record({ kind: "event", event: FALLBACK_EVENT, server, transport: "sse", reason });
}
