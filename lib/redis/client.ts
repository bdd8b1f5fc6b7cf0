/**
 * One ioredis client for resolved {@linkcode RedisSettings}, standalone, Sentinel or
 * Cluster, with the fail-fast options measurement showed necessary: ioredis' defaults queue
 * commands and retry for over a minute against a dead server. Conversation memory
 * (`lib/memory/redis_store.ts`) and the OAuth token store (`lib/oauth/redis_token_store.ts`)
 * both build their clients here, so they reach the same store the same way;
 * {@linkcode openRedisClient} is the whole connection for a store used on demand.
 *
 * @module
 */

import type { Cluster, Redis, RedisOptions } from "ioredis";
import { valueWithin } from "../async/deadline.ts";
import { DenoPermissionError, MemoryConfigError } from "../errors.ts";
import { STORE_STEPS } from "../errors/store_steps.ts";
import { denoPermissionFlag } from "../deno_permission/denial.ts";
import type { RedisAddress, RedisSettings } from "./settings.ts";
import { MAX_KEY_FILE_BYTES, readBoundedText } from "../files/bounded_read.ts";

/** A first connection succeeds or is reported within this many milliseconds. */
export const CONNECT_BUDGET_MS = 1500;
/** A command on an established connection that takes longer counts as an outage. */
export const COMMAND_TIMEOUT_MS = 5000;

/** A client of any topology. */
export type RedisClient = Redis | Cluster;

/** Options of {@linkcode createRedisClient}. */
export interface RedisClientOptions {
  /** Milliseconds one connection attempt may take. */
  connectTimeoutMs: number;
  /** Milliseconds a command on an established connection may take. */
  commandTimeoutMs: number;
  /** ioredis' retry strategy: the delay before reconnection attempt `times`, or null to stop. */
  retry: (times: number) => number | null;
  /** Options laid over those derived from the settings (a probe's `db: 0`). */
  override?: Partial<RedisOptions>;
}

/**
 * A client for `settings`, not yet connected (`lazyConnect`): commands fail at once while
 * it is not ready instead of waiting in a queue. Attach an `error` listener before
 * connecting, or ioredis prints every failure.
 */
export async function createRedisClient(
  settings: RedisSettings,
  options: RedisClientOptions,
): Promise<RedisClient> {
  const { Redis, Cluster } = await importIoredis();
  const { retry, override = {} } = options;
  const tls = settings.tls ? await tlsOptions(settings.tls.caFile) : undefined;
  const common: RedisOptions = {
    lazyConnect: true,
    connectTimeout: options.connectTimeoutMs,
    commandTimeout: options.commandTimeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: retry,
    // A failover turns the old master into a replica: reconnect to find the new one.
    reconnectOnError: (error) => /READONLY/.test(error.message),
    ...(settings.username ? { username: settings.username } : {}),
    ...(settings.password ? { password: settings.password } : {}),
    ...(tls ? { tls } : {}),
    connectionName: "patchbay",
    ...override,
  };
  const topology = settings.topology;
  if (topology.mode === "cluster") {
    const { lazyConnect: _, retryStrategy: __, ...nodeOptions } = common;
    return new Cluster(topology.nodes.map(toNode), {
      lazyConnect: true,
      enableOfflineQueue: false,
      clusterRetryStrategy: retry,
      slotsRefreshTimeout: options.connectTimeoutMs,
      redisOptions: nodeOptions,
    });
  }
  if (topology.mode === "sentinel") {
    return new Redis({
      ...common,
      db: settings.db,
      sentinels: topology.sentinels.map(toNode),
      name: topology.name,
      sentinelRetryStrategy: retry,
      sentinelCommandTimeout: options.connectTimeoutMs,
      // Listen for +switch-master, so writes move to a new master as soon as it is named.
      failoverDetector: true,
      ...(topology.sentinelUsername ? { sentinelUsername: topology.sentinelUsername } : {}),
      ...(topology.sentinelPassword ? { sentinelPassword: topology.sentinelPassword } : {}),
      ...(tls ? { enableTLSForSentinelMode: true, sentinelTLS: tls } : {}),
      ...override,
    });
  }
  return new Redis({
    ...common,
    host: topology.address.host,
    port: topology.address.port,
    db: settings.db,
    ...override,
  });
}

/**
 * Connects `client` and selects the configured database for real: ioredis reports a failed
 * SELECT only as an event and goes on in database 0.
 */
export async function connectRedisClient(
  client: RedisClient,
  settings: RedisSettings,
): Promise<void> {
  if (client.status !== "ready") await client.connect();
  if (settings.topology.mode !== "cluster" && settings.db !== 0) {
    await (client as Redis).select(settings.db);
  }
}

/** Options of {@linkcode openRedisClient}. */
export interface OpenRedisClientOptions {
  /** Milliseconds the connection, the database's selection included, may take. */
  connectTimeoutMs: number;
  /** Milliseconds a command on the established connection may take. @default COMMAND_TIMEOUT_MS */
  commandTimeoutMs?: number;
  /**
   * Every `error` event of the client, for as long as it lives (without a listener
   * ioredis prints each). The last one before a failed connection is its useful cause.
   */
  onError: (error: unknown) => void;
  /** The error to throw for a connection that failed or timed out. @default the error itself */
  connectFailure?: (error: unknown) => unknown;
}

/**
 * A client for `settings`, connected and its database selected within `connectTimeoutMs`,
 * that never reconnects by itself: for a store used on demand, whose next operation
 * connects again. A failed connection is disconnected before `connectFailure` is thrown;
 * a failure to build the client (settings, permissions) is thrown as it is.
 */
export async function openRedisClient(
  settings: RedisSettings,
  options: OpenRedisClientOptions,
): Promise<RedisClient> {
  const budgetMs = options.connectTimeoutMs;
  const client = await createRedisClient(settings, {
    connectTimeoutMs: budgetMs,
    commandTimeoutMs: options.commandTimeoutMs ?? COMMAND_TIMEOUT_MS,
    retry: () => null,
  });
  client.on("error", options.onError);
  try {
    const connected = await valueWithin(
      connectRedisClient(client, settings).then(() => true),
      budgetMs,
    );
    if (!connected) throw new Error(`connection timed out after ${budgetMs} ms`);
  } catch (error) {
    client.disconnect();
    throw options.connectFailure ? options.connectFailure(error) : error;
  }
  return client;
}

async function tlsOptions(caFile: string | undefined): Promise<{ ca?: string[] }> {
  if (!caFile) return {};
  try {
    return {
      ca: [await readBoundedText(caFile, { what: "the CA file", maxBytes: MAX_KEY_FILE_BYTES })],
    };
  } catch (error) {
    throw new MemoryConfigError(
      `REDIS_TLS_CA_FILE is "${caFile}", which cannot be read`,
      STORE_STEPS.caFile,
      (error as Error).message,
    );
  }
}

function toNode(address: RedisAddress): { host: string; port: number } {
  return { host: address.host, port: address.port };
}

/**
 * Loads ioredis on first use, so configurations without Redis never load it. Its `debug`
 * dependency enumerates the environment on import, which a grant of named variables
 * (`--allow-env=A,B`) refuses: that refusal is reported with the flag that allows it.
 */
async function importIoredis(): Promise<{ Redis: typeof Redis; Cluster: typeof Cluster }> {
  try {
    const { Redis, Cluster } = await import("ioredis");
    return { Redis, Cluster };
  } catch (error) {
    const flag = denoPermissionFlag(error);
    if (!flag) throw error;
    throw new DenoPermissionError(
      flag,
      "loading the Redis client (ioredis reads the whole environment when it loads)",
      error,
    );
  }
}

/** How long closing waits for the server to acknowledge QUIT. */
const QUIT_WAIT_MS = 500;

/**
 * Closes `client`: a polite QUIT when connected (waited for at most {@linkcode QUIT_WAIT_MS},
 * so a server gone silent cannot hold up an exit), then the socket, in every case.
 */
export async function closeRedisClient(client: RedisClient): Promise<void> {
  if (client.status === "ready") await valueWithin(client.quit().catch(() => {}), QUIT_WAIT_MS);
  client.disconnect();
}
