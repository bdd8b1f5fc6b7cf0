/**
 * When the interactive client speaks up unprompted: it follows the servers' events (a
 * server of the start-up that connects or fails, one that is lost or comes back, a real
 * change of its tools, a resource update, a loud log line) and memory's, and decides which
 * are worth a notice and which notice. The wording is `notices.ts`; where the line goes
 * (around the prompt) is the session's `notify`.
 *
 * @module
 */

import type { ConnectionManager } from "../connections/manager.ts";
import type { ConnectionEvent, ConnectionState, ServerStatus } from "../connections/types.ts";
import type { MemoryEvent } from "../memory/mod.ts";
import type { Style } from "../terminal/style.ts";
import { stripTerminalEscapes } from "../terminal/terminal.ts";
import {
  connectedNotice,
  memoryNotices,
  reconnectingNotice,
  resourceUpdatedNotice,
  serverLogNotice,
  startupNotice,
  toolsChangedNotice,
} from "./notices.ts";

/** Options of {@linkcode EventNotices}. */
export interface EventNoticesOptions {
  /** Colours of the notices (those of stderr). */
  style: Style;
  /** Writes a notice around the prompt. */
  notify: (text: string) => void;
  /** Turns an error into the lines a person reads. */
  presentError: (error: unknown) => string;
  /** The whole server block, shown once the start-up's last server settled; none: no block. */
  renderServers?: () => string;
  /** Whether debug mode is on (every server log line is shown). */
  debugMode: () => boolean;
}

/** The notices of one interactive session. */
export class EventNotices {
  readonly #options: EventNoticesOptions;
  #manager?: ConnectionManager;
  /** Server notices are printed (after the banner, which shows the states until then). */
  live = false;
  /** A refresh is running: its outcome is shown by the caller's status block, not here. */
  refreshing = false;
  /** Servers of a background start-up that have not connected or failed yet. */
  #startup = new Set<string>();
  /** The state of each server last heard, to word what changed. */
  #states = new Map<string, ConnectionState>();
  /** Tool names each server had when last shown, to report what a list_changed changed. */
  #seenTools = new Map<string, Set<string>>();

  constructor(options: EventNoticesOptions) {
    this.#options = options;
  }

  /** Follows `manager`'s servers from where they stand now; returns the unsubscribe. */
  follow(manager: ConnectionManager): () => void {
    this.#manager = manager;
    for (const status of manager.states()) {
      this.#toolsChange(status.name);
      this.#states.set(status.name, status.state);
    }
    return manager.on((event) => this.#onConnectionEvent(event));
  }

  /** These servers start now, behind the prompt: each is announced as it settles. */
  startupBegins(servers: Iterable<string>): void {
    for (const name of servers) this.#startup.add(name);
  }

  /** What memory has to say (an outage of its store, messages kept, …). */
  memoryEvent(event: MemoryEvent): void {
    const { style, presentError, notify } = this.#options;
    for (const line of memoryNotices(style, event, presentError)) notify(line);
  }

  #toolsChange(server: string): string | undefined {
    const now = new Set(
      this.#manager!.tools().filter((t) => t.server === server).map((t) => t.originalName),
    );
    const before = this.#seenTools.get(server) ?? new Set();
    this.#seenTools.set(server, now);
    const added = [...now].filter((n) => !before.has(n));
    const removed = [...before].filter((n) => !now.has(n));
    if (added.length + removed.length === 0) return undefined;
    return [...added.map((n) => `+${n}`), ...removed.map((n) => `-${n}`)].join(" ");
  }

  #onConnectionEvent(event: ConnectionEvent): void {
    const { style, notify: say } = this.#options;
    const server = stripTerminalEscapes(event.server);
    switch (event.type) {
      case "state": {
        const before = this.#states.get(event.server);
        this.#states.set(event.server, event.state);
        // A server that connects (or comes back) is shown with its tools, not as a change.
        if (event.state === "connected") this.#toolsChange(event.server);
        const settled = event.state !== "connecting" && event.state !== "disconnected";
        const fromStartup = settled && this.#startup.delete(event.server);
        if (!this.live || event.state === "closed") break;
        const status = this.#manager!.status(event.server);
        if (fromStartup) {
          this.#startupNotice(server, status);
        } else if (event.state === "failed" && event.error && !this.refreshing) {
          say(`${this.#options.presentError(event.error)}\n`);
        } else if (event.state === "reconnecting") {
          say(reconnectingNotice(style, server, event.error, status));
        } else if (event.state === "connected" && !this.refreshing) {
          say(connectedNotice(style, server, before === "reconnecting", status));
        }
        break;
      }
      case "list_changed": {
        // Servers announce changes freely (server-everything right after connecting);
        // only a real change of the tools is worth an interruption.
        if (event.list !== "tools") break;
        const change = this.#toolsChange(event.server);
        if (change) say(toolsChangedNotice(style, server, change));
        break;
      }
      case "resource_updated":
        say(resourceUpdatedNotice(style, server, event.uri));
        break;
      case "log": {
        const line = serverLogNotice(style, server, event, this.#options.debugMode());
        if (line) say(line);
        break;
      }
    }
  }

  /**
   * A server of the start-up that connected or failed: one line while others are still
   * connecting; after the last one, the whole block (failures with cause and remedy).
   */
  #startupNotice(server: string, status: ServerStatus | undefined): void {
    const { renderServers, notify } = this.#options;
    if (this.#startup.size === 0 && renderServers) {
      notify(`${renderServers()}\n`);
      return;
    }
    const line = startupNotice(this.#options.style, server, status, [...this.#startup]);
    if (line) notify(line);
  }
}
