/**
 * One real session with one real server, without the connection around it: what the
 * direct tests of the request deadline (`lib/connections/request_deadline.ts`) and of the
 * liveness watch (`lib/connections/liveness.ts`) drive. The connection's part (which
 * session is current, what a loss does) is played here and recorded for assertions.
 *
 * @module
 */

import type { ServerConfig } from "../../lib/config/types.ts";
import type { PatchbayError } from "../../lib/errors.ts";
import { WaitClock } from "../../lib/async/wait_clock.ts";
import { LivenessWatch } from "../../lib/connections/liveness.ts";
import { type RequestHost, sdkBackstopMs } from "../../lib/connections/request_deadline.ts";
import { openSession, type ServerSession } from "../../lib/connections/session/server_session.ts";
import { RecordingLog } from "./servers.ts";

/** A live session, its liveness watch and a request host over them; `await using` closes it. */
export interface LiveSession extends AsyncDisposable {
  session: ServerSession;
  log: RecordingLog;
  /** The time the deadlines leave out (the server waiting on us). */
  clock: WaitClock;
  liveness: LivenessWatch;
  host: RequestHost;
  /** Each loss the watch reported, in order (the connection would restart). */
  losses: PatchbayError[];
}

/** Opens a session with `config`'s server, as a connection would. */
export async function openLiveSession(config: ServerConfig): Promise<LiveSession> {
  const log = new RecordingLog();
  const clock = new WaitClock();
  const losses: PatchbayError[] = [];
  const session = await openSession(config, {
    log,
    requests: { handlers: () => ({}), roots: () => undefined, waiting: clock },
    hooks: {
      listChanged: () => {},
      resourceUpdated: () => {},
      serverLog: () => {},
      lost: () => {},
      suspect: () => {},
      renewed: () => {},
    },
  });
  let current: ServerSession | undefined = session;
  const liveness: LivenessWatch = new LivenessWatch({
    config,
    log,
    clock: () => clock,
    current: () => current,
    isCurrent: (s) => s === current,
    lost: (s, error) => {
      // As the connection does: the loss is kept for the requests that were on it.
      liveness.recordLoss(s, error);
      losses.push(error);
      current = undefined;
    },
    backstopMs: sdkBackstopMs,
    probeTimeoutMs: 2000,
  });
  const host: RequestHost = {
    server: config.name,
    timeoutSeconds: config.timeoutSeconds,
    clock,
    liveness,
    current: () => current,
    restarting: (error) => error,
  };
  return {
    session,
    log,
    clock,
    liveness,
    host,
    losses,
    async [Symbol.asyncDispose]() {
      liveness.stop();
      await session.close();
    },
  };
}
