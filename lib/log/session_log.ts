/**
 * The process's log, once start-up has opened it: a holder of its own, so that the entry
 * point and the command boundary can reach it without loading start-up (the
 * configuration's schema and everything behind it) on paths that never open a log.
 *
 * @module
 */

import type { Logger } from "./log.ts";

let sessionLog: Logger | undefined;

/** The process's log, once start-up has opened it. */
export function sessionLogger(): Logger | undefined {
  return sessionLog;
}

/** Makes `logger` the process's log, closing the one it replaces. */
export function replaceSessionLogger(logger: Logger): void {
  sessionLog?.close();
  sessionLog = logger;
}
