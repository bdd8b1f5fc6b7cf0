/**
 * A server's log notifications (`notifications/message`): written to the server's log at
 * patchbay's level for it, and sent on as a `log` event (the REPL shows the loud ones).
 *
 * @module
 */

import type { LoggingLevel, LoggingMessageNotification } from "@modelcontextprotocol/client";
import type { Log, LogLevel } from "../log/log.ts";
import type { ConnectionEvent } from "./types.ts";

/** MCP's eight log levels onto patchbay's four. */
const LOG_LEVELS: Readonly<Record<LoggingLevel, LogLevel>> = {
  debug: "debug",
  info: "info",
  notice: "info",
  warning: "warn",
  error: "error",
  critical: "error",
  alert: "error",
  emergency: "error",
};

/** Logs one notification of server `server` in `log` (as `log`'s child "log") and emits it. */
export function serverLog(
  server: string,
  log: Log,
  emit: (event: ConnectionEvent) => void,
  params: LoggingMessageNotification["params"],
): void {
  const level = LOG_LEVELS[params.level] ?? "info";
  const text = typeof params.data === "string" ? params.data : JSON.stringify(params.data);
  log.child("log")[level](params.logger ? `${params.logger}: ${text}` : text, {
    level: params.level,
  });
  emit({ type: "log", server, level: params.level, logger: params.logger, data: params.data });
}
