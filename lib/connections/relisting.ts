/**
 * Keeping a connection's lists (tools, prompts, resources) up to date with its server:
 * one list read again after the server's `list_changed` (notifications arriving meanwhile
 * cause one more pass, not one each), every list after `/refresh` or a renewed login
 * (only the lists that changed are announced). `close()` waits for the re-listings in
 * flight, so none reports after it.
 *
 * @module
 */

import type { Log } from "../log/log.ts";
import { cleanText, isConnectionLoss } from "./request_errors.ts";
import type { ListName, Lists, ServerSession } from "./session/server_session.ts";
import type { ConnectionEvent } from "./types.ts";

/** What a {@linkcode Relisting} needs of its connection. */
export interface RelistingOptions {
  /** The server's name, for events. */
  server: string;
  /** This server's log. */
  log: Log;
  emit: (event: ConnectionEvent) => void;
  /** The lists the connection holds now. */
  lists: () => Lists;
  /** Replaces the connection's lists with `session`'s, telling whoever listens. */
  adopt: (session: ServerSession) => void;
  /** Whether `session` is still the one the connection serves (not closing, lost or replaced). */
  isCurrent: (session: ServerSession) => boolean;
  /** The session showed it is alive. */
  heard: (session: ServerSession) => void;
  /** A `list_changed` arrived: what was kept of the lists is stale. */
  invalidated?: () => void;
  /** Re-listing everything met a lost connection: `session` is lost, for `error`. */
  lostWhileRelisting: (session: ServerSession, error: unknown) => Promise<unknown> | void;
}

/** The re-listings of one connection. */
export class Relisting {
  readonly #options: RelistingOptions;
  #running = new Map<ListName, { again: boolean }>();
  /** Re-listings in flight; {@linkcode settled} waits for them. */
  #inFlight = new Set<Promise<void>>();

  constructor(options: RelistingOptions) {
    this.#options = options;
  }

  /** Re-lists after `list_changed`; notifications arriving meanwhile cause one more pass. */
  listChanged(session: ServerSession, list: ListName): void {
    this.#options.heard(session);
    this.#options.invalidated?.();
    const running = this.#running.get(list);
    if (running) {
      running.again = true;
      return;
    }
    const entry = { again: true };
    this.#running.set(list, entry);
    this.#track(this.#relistOne(session, list, entry));
  }

  /** Re-lists everything (`/refresh`, a renewed login); announces the lists that changed. */
  all(session: ServerSession): Promise<void> {
    return this.#track(this.#relistEverything(session));
  }

  /** Waits for the re-listings in flight. */
  async settled(): Promise<void> {
    await Promise.all([...this.#inFlight]);
  }

  async #relistOne(
    session: ServerSession,
    list: ListName,
    entry: { again: boolean },
  ): Promise<void> {
    const { isCurrent, adopt, emit, server } = this.#options;
    try {
      while (entry.again && isCurrent(session)) {
        entry.again = false;
        await session.relist(list);
        if (!isCurrent(session)) return;
        adopt(session);
        emit({ type: "list_changed", server, list });
      }
    } catch (error) {
      this.#failed(session, `re-listing ${list}`, error);
    } finally {
      this.#running.delete(list);
    }
  }

  async #relistEverything(session: ServerSession): Promise<void> {
    const { isCurrent, adopt, emit, server } = this.#options;
    const before = this.#options.lists();
    try {
      await session.relist();
    } catch (error) {
      if (isConnectionLoss(error) && isCurrent(session)) {
        await this.#options.lostWhileRelisting(session, error);
      } else {
        this.#failed(session, "re-listing", error);
      }
      return;
    }
    if (!isCurrent(session)) return;
    adopt(session);
    const after = this.#options.lists();
    const differs = (a: unknown[], b: unknown[]) => JSON.stringify(a) !== JSON.stringify(b);
    if (differs(before.tools, after.tools)) {
      emit({ type: "list_changed", server, list: "tools" });
    }
    if (differs(before.prompts, after.prompts)) {
      emit({ type: "list_changed", server, list: "prompts" });
    }
    if (differs(before.resources, after.resources) || differs(before.templates, after.templates)) {
      emit({ type: "list_changed", server, list: "resources" });
    }
  }

  /**
   * A re-listing that failed because its session ended (patchbay closing, the server lost
   * or replaced) is no news: the end itself is reported where it happens.
   */
  #failed(session: ServerSession, what: string, error: unknown): void {
    const log = this.#options.log;
    if (this.#options.isCurrent(session)) log.warn(`${what} failed: ${cleanText(error)}`);
    else log.debug(`${what} stopped: the session ended (${cleanText(error)})`);
  }

  #track(relist: Promise<void>): Promise<void> {
    const tracked = relist.finally(() => this.#inFlight.delete(tracked));
    this.#inFlight.add(tracked);
    return tracked;
  }
}
