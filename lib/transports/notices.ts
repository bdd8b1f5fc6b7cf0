/**
 * A server's log notifications (`notifications/message`), held to the log's line rate: a
 * server sending thousands a second would otherwise fill the log and the screen. The ones
 * over the rate are dropped; how many is said once per second, as a warning delivered the
 * way the server's own are (the log, and the screen in a session), or written to the log
 * when the connection is ending.
 *
 * @module
 */

import { isJSONRPCNotification, type JSONRPCMessage } from "@modelcontextprotocol/client";
import { LineBudget, type LineRate, type Log, LOG_LINE_RATE } from "../log/log.ts";

/** Admits a server's log notifications at the log's rate (see the module doc). */
export class NotificationBudget {
  readonly #budget: LineBudget;
  #ending = false;

  /** `deliver` receives the "N dropped" warning; `log` gets it once the connection ends. */
  constructor(
    deliver: (message: JSONRPCMessage) => void,
    log: Log,
    rate: LineRate = LOG_LINE_RATE,
  ) {
    this.#budget = new LineBudget((count) => {
      const text = `patchbay dropped ${count} log message${count === 1 ? "" : "s"} of this ` +
        `server (it sent more than ${rate.lines} a second)`;
      if (this.#ending) log.warn(text);
      else {deliver({
          jsonrpc: "2.0",
          method: "notifications/message",
          params: { level: "warning", data: text },
        });}
    }, rate);
  }

  /** False when `message` is a log notification over the rate (drop it). */
  admit(message: JSONRPCMessage): boolean {
    return !(isJSONRPCNotification(message) && message.method === "notifications/message") ||
      this.#budget.admit();
  }

  /** Writes what was dropped and not yet said to the log: the connection is ending. */
  end(): void {
    this.#ending = true;
    this.#budget.flush();
  }
}
