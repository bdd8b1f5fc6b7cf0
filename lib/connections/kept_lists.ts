/**
 * One connection's use of the lists kept across runs (lib/connections/list_cache.ts): the
 * lists found fresh when the connection is made, served while its first attempt runs;
 * the live lists saved whenever the connection adopts them; the kept ones dropped on
 * `list_changed`. Which lists differ when the live ones replace the served ones is what
 * the connection announces.
 *
 * @module
 */

import type { ServerConfig } from "../config/types.ts";
import type { Log } from "../log/log.ts";
import { LIST_KEYS, type ListCache } from "./list_cache.ts";
import type { Lists, ServerSession } from "./session/live_session.ts";
import type { ListName } from "./session/server_session.ts";

/** The kept lists of one connection. */
export class KeptLists {
  readonly #cache?: ListCache;
  readonly #config: ServerConfig;
  readonly #log: Log;
  /** The lists served until the first attempt ends; `undefined` once it did. */
  #served: Lists | undefined;

  constructor(cache: ListCache | undefined, config: ServerConfig, log: Log) {
    this.#cache = cache;
    this.#config = config;
    this.#log = log;
    const found = config.disabled ? undefined : cache?.load(config);
    if (found) {
      this.#served = found.lists;
      log.info("lists kept from an earlier run are fresh; served until the server answers", {
        tools: found.lists.tools.length,
        until: new Date(found.expiresAt).toISOString(),
      });
    }
  }

  /** The kept lists, while they are served (the first attempt still runs). */
  get served(): Lists | undefined {
    return this.#served;
  }

  /**
   * The first attempt ended: nothing more is served. Returns the lists that differ from
   * the served ones in `live` (none when nothing was served or it failed).
   */
  end(live: Lists | undefined): ListName[] {
    const served = this.#served;
    this.#served = undefined;
    if (!served || !live) return [];
    const differs = (key: (typeof LIST_KEYS)[number]) =>
      JSON.stringify(served[key]) !== JSON.stringify(live[key]);
    const changed: ListName[] = [];
    if (differs("tools")) changed.push("tools");
    if (differs("prompts")) changed.push("prompts");
    if (differs("resources") || differs("templates")) changed.push("resources");
    if (changed.length > 0) {
      this.#log.info("the live lists differ from the kept ones; they replace them", {
        changed,
      });
    }
    return changed;
  }

  /** The connection adopted `lists` (masked) from `session`: kept if their hints allow. */
  save(session: ServerSession, lists: Lists): void {
    void this.#cache?.save(this.#config, lists, session.hints);
  }

  /** A `list_changed` arrived: the kept lists are stale at once. */
  invalidate(): void {
    void this.#cache?.invalidate(this.#config);
  }
}
