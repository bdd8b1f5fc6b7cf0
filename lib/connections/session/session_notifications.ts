/**
 * What a live session hears, routed to its connection ({@linkcode watchSession}): the
 * servers' `list_changed`, resource updates and log messages, and its end: a close that
 * was not asked for is a lost server, and on HTTP a dropped event stream is a reason to
 * ping.
 *
 * @module
 */

import type { LoggingMessageNotification } from "@modelcontextprotocol/client";
import type { Log } from "../../log/log.ts";
import { HttpTransport } from "../../transports/http.ts";
import { STDERR_LINE_MAX_CHARS } from "../../transports/stdio.ts";
import type { ListName, ServerSession } from "./live_session.ts";

/** What the connection hears from a live session. */
export interface ServerSessionHooks {
  listChanged(list: ListName): void;
  resourceUpdated(uri: string): void;
  serverLog(params: LoggingMessageNotification["params"]): void;
  /** The connection closed without being asked to; `reason` says why. */
  lost(reason: string): void;
  /**
   * Something suggests an HTTP server may be gone (its event stream dropped, a reconnect
   * of it failed): worth a ping to find out.
   */
  suspect(reason: string): void;
  /** An HTTP session was replaced by a new one (server-side state is gone). */
  renewed(): void;
}

/** Routes the session's notifications and its end to the hooks. */
export function watchSession(session: ServerSession, hooks: ServerSessionHooks, log: Log): void {
  const client = session.client;
  client.setNotificationHandler(
    "notifications/tools/list_changed",
    () => hooks.listChanged("tools"),
  );
  client.setNotificationHandler(
    "notifications/prompts/list_changed",
    () => hooks.listChanged("prompts"),
  );
  client.setNotificationHandler(
    "notifications/resources/list_changed",
    () => hooks.listChanged("resources"),
  );
  client.setNotificationHandler(
    "notifications/resources/updated",
    (notification) => hooks.resourceUpdated(notification.params.uri),
  );
  client.setNotificationHandler("notifications/message", (notification) => {
    hooks.serverLog(notification.params);
  });
  client.onerror = (error) => {
    log.debug(`protocol: ${error.message.slice(0, STDERR_LINE_MAX_CHARS)}`);
    // An idle HTTP session has no request to fail: the event stream that cannot be
    // reopened is how a server that went away shows.
    if (
      !(session.transport instanceof HttpTransport) || !session.established || session.closing
    ) return;
    if (/Maximum reconnection attempts/.test(error.message)) {
      hooks.lost(`the server's event stream could not be reopened (${error.message})`);
    } else {
      // A dropped stream, a failed reopening, a failed POST: a ping tells whether the
      // server is still there (a stream cut by a proxy is not a lost server).
      // (The error's own text is in the debug log above; it is no message for a person.)
      hooks.suspect("its event stream dropped, or a request to it failed");
    }
  };
  client.onclose = () => {
    // Before the handshake completes, a close is the attempt's failure, reported there.
    if (session.established && !session.closing) hooks.lost(session.closeReason());
  };
  if (session.transport instanceof HttpTransport) {
    session.transport.onsessionrenewed = () => hooks.renewed();
  }
}
