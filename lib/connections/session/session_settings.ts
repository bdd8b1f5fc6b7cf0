/**
 * What a connection asks of a connected server besides requests: the level of the logs it
 * sends (`logging/setLevel`), and news that the roots offered to it changed
 * (`notifications/roots/list_changed`, or a reconnect when its declaration must change).
 *
 * @module
 */

import type { LoggingLevel, Root } from "@modelcontextprotocol/client";
import { timerDelay } from "../../async/timers.ts";
import type { Log } from "../../log/log.ts";
import { cleanText } from "../request_errors.ts";
import type { ServerSession } from "./server_session.ts";

/**
 * Asks `session` for `level` logs when a level is set and the server logs; a refusal is
 * only noted in `log`, bounded by the server's `timeoutSeconds`.
 */
export function askLogLevel(
  session: ServerSession,
  level: LoggingLevel | undefined,
  timeoutSeconds: number,
  log: Log,
): void {
  if (!level || !session.capabilities.logging) return;
  session.client.setLoggingLevel(level, {
    timeout: timerDelay(timeoutSeconds * 1000),
  })
    .catch((error) => log.debug(`logging/setLevel failed: ${cleanText(error)}`));
}

/**
 * Tells `session` the roots are now `roots` (from `folders`), when it declared the roots
 * capability and roots are still offered. True when the session must be reconnected
 * instead: roots appeared or vanished, and capabilities are fixed by the handshake.
 */
export async function offerRoots(
  session: ServerSession,
  roots: Root[] | undefined,
  folders: readonly string[] | undefined,
  log: Log,
): Promise<boolean> {
  if (session.offersRoots && roots) {
    log.info(`roots changed: ${folders!.join(", ") || "(none)"}`);
    // A session that ends meanwhile loses nothing: the next one is offered these roots.
    await session.client.sendRootsListChanged().catch((error) =>
      log.debug(`roots/list_changed not sent: ${cleanText(error)}`)
    );
    return false;
  }
  if (session.offersRoots === (roots !== undefined)) return false;
  log.info("roots capability changed; reconnecting to declare it");
  return true;
}
