/**
 * A configuration read again (`/refresh`), applied to the running servers: what it changes
 * (the entries added, removed and changed), the session's own switches
 * (`/mcp enable|disable`) over the entries' `disabled`, and the connections replaced,
 * closed and started accordingly.
 *
 * @module
 */

import type { ServerConfig } from "../config/types.ts";
import { connectWithin } from "./connecting.ts";
import type { ServerConnection } from "./connection.ts";
import type { ServerChanges } from "./manager_types.ts";

/**
 * The session's own switches of servers on or off (`/mcp enable|disable`) over the entries
 * as configured: never written to the file, and kept over a `/refresh`.
 */
export class SessionSwitches {
  /** The entries as configured, before the switches. */
  configured: readonly ServerConfig[];
  /** Per server, `disabled` as switched for this session. */
  readonly #switched = new Map<string, boolean>();

  constructor(configured: readonly ServerConfig[]) {
    this.configured = configured;
  }

  /** Switches `server` on or off; `undefined` forgets the switch: the file decides again. */
  set(server: string, enabled: boolean | undefined): void {
    if (enabled === undefined) this.#switched.delete(server);
    else this.#switched.set(server, !enabled);
  }

  /** Whether `server`'s state was switched for this session, and to what. */
  switchedOff(server: string): boolean | undefined {
    return this.#switched.get(server);
  }

  /**
   * `servers`, now the configured ones, with the switches over their `disabled`; a
   * switched entry says so with `switchedForSession`.
   */
  over(servers: readonly ServerConfig[]): ServerConfig[] {
    this.configured = servers;
    return servers.map((config) => {
      const disabled = this.#switched.get(config.name);
      // What the administrator's policy refuses no switch of the session starts.
      if (disabled === undefined || config.refused) return config;
      return { ...config, disabled, switchedForSession: true };
    });
  }
}

/** What making `servers` the configured ones changes, against the `current` entries. */
export function serverChanges(
  current: ReadonlyMap<string, ServerConfig>,
  servers: readonly ServerConfig[],
): ServerChanges {
  const changes: ServerChanges = { added: [], removed: [], changed: [] };
  const next = new Map(servers.map((config) => [config.name, config]));
  for (const [name, was] of current) {
    const config = next.get(name);
    if (!config) changes.removed.push(name);
    else if (JSON.stringify(config) !== JSON.stringify(was)) {
      changes.changed.push(name);
    }
  }
  changes.added = servers.map((c) => c.name).filter((name) => !current.has(name));
  return changes;
}

/** What applying a configuration needs of the connection manager. */
export interface ApplyHost {
  /** The manager's connections by server name, replaced in place, in configuration order. */
  connections: Map<string, ServerConnection>;
  /** Whether the manager is closing: nothing new may start then. */
  closing: () => boolean;
  /** A new connection for `config`. */
  create: (config: ServerConfig) => ServerConnection;
  /** The connections were replaced (the catalogue is built again). */
  replaced: () => void;
}

/**
 * Makes `servers` the configured ones of `host`: entries no longer there are closed,
 * changed ones are closed and started again, new ones are started; the others are left
 * as they are. Resolves, with what changed, once the new and changed servers have
 * connected or failed. A manager closing meanwhile starts nothing more: what this call
 * created is closed with it.
 */
export async function applyServers(
  host: ApplyHost,
  servers: readonly ServerConfig[],
): Promise<ServerChanges> {
  if (host.closing()) return { added: [], removed: [], changed: [] };
  const current = new Map([...host.connections].map(([name, c]) => [name, c.config]));
  const changes = serverChanges(current, servers);
  const replaced = [...changes.removed, ...changes.changed];
  await Promise.all(replaced.map((name) => host.connections.get(name)!.close()));
  // Closed meanwhile: close() ended what was there; nothing new may start.
  if (host.closing()) return changes;
  const kept = new Map(host.connections);
  host.connections.clear();
  for (const config of servers) {
    const same = !replaced.includes(config.name) && kept.get(config.name);
    host.connections.set(config.name, same || host.create(config));
  }
  host.replaced();
  const starting = [...changes.added, ...changes.changed]
    .map((name) => host.connections.get(name)!)
    .filter((connection) => !connection.config.disabled);
  await Promise.all(starting.map((connection) => connectWithin(connection)));
  // A close() during the connects may have come before one of them spawned its server.
  if (host.closing()) await Promise.all(starting.map((connection) => connection.close()));
  return changes;
}
