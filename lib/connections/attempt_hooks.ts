/**
 * The hooks a connection attempt gives its new session. What the server says before the
 * connection adopts the session (a loss, a changed list) is held and replayed once it is
 * adopted; after that each notification goes straight to the connection's parts.
 *
 * @module
 */

import type { Log } from "../log/log.ts";
import type { Redactor } from "../redact/redact.ts";
import type { LivenessWatch } from "./liveness.ts";
import type { Relisting } from "./relisting.ts";
import { serverLog } from "./server_log.ts";
import type { ListName, ServerSession, ServerSessionHooks } from "./session/server_session.ts";
import type { ConnectionEvent } from "./types.ts";

/** Where an adopted session's notifications go. */
export interface AttemptHookTargets {
  server: string;
  /** This server's log. */
  log: Log;
  emit: (event: ConnectionEvent) => void;
  /** Masks the session's secrets in the server's log notifications. */
  redactor: Redactor;
  relisting: Relisting;
  liveness: LivenessWatch;
  /** The session ended without being asked to; `reason` says why. */
  lost: (session: ServerSession, reason: string) => void;
}

/** One attempt's session hooks, holding what arrives before its session is adopted. */
export class AttemptHooks {
  #session?: ServerSession;
  #lostEarly?: string;
  readonly #changedEarly = new Set<ListName>();
  /** The hooks to open the session with. */
  readonly hooks: ServerSessionHooks;

  constructor(to: AttemptHookTargets) {
    this.hooks = {
      listChanged: (list) =>
        this.#session
          ? to.relisting.listChanged(this.#session, list)
          : this.#changedEarly.add(list),
      resourceUpdated: (uri) => {
        if (this.#session) to.liveness.heard(this.#session);
        to.emit({ type: "resource_updated", server: to.server, uri });
      },
      serverLog: (params) => {
        if (this.#session) to.liveness.heard(this.#session);
        serverLog(to.server, to.log, to.emit, to.redactor.redactValue(params));
      },
      lost: (reason) => this.#session ? to.lost(this.#session, reason) : this.#lostEarly = reason,
      suspect: (reason) => this.#session && to.liveness.suspect(this.#session, reason),
      renewed: () => this.#session && to.relisting.all(this.#session),
    };
  }

  /** The connection adopted `session`: its notifications go straight through from now. */
  adopt(session: ServerSession): void {
    this.#session = session;
  }

  /** A loss reported before adoption, if any (the connection replays it). */
  get lostEarly(): string | undefined {
    return this.#lostEarly;
  }

  /** Lists that changed before adoption (the first listing may have read them before). */
  get changedEarly(): ReadonlySet<ListName> {
    return this.#changedEarly;
  }
}
