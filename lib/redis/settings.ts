/**
 * Where the Redis memory store is and how to reach it, from the REDIS_* variables and the
 * `Memory` section of servers_config.json. Checked here, before any connection, so a
 * mistyped port is reported as such instead of as an unreachable host. Shared by
 * conversation memory (`lib/memory/`) and the OAuth token store (`lib/oauth/`).
 *
 * @module
 */

import type { MemorySettings } from "../config/types.ts";
import { DEFAULTS } from "../defaults.ts";
import type { Environment } from "../env.ts";
import { MemoryConfigError } from "../errors.ts";
import { MEMORY_STEPS } from "../errors/memory_steps.ts";
import type { Redactor } from "../redact/redact.ts";

/** One `host:port` address. */
export interface RedisAddress {
  host: string;
  port: number;
}

/** How the store is deployed. */
export type RedisTopology =
  | { mode: "standalone"; address: RedisAddress }
  | {
    mode: "sentinel";
    sentinels: RedisAddress[];
    /** The master group name (`sentinel monitor <name> ...`). */
    name: string;
    sentinelUsername?: string;
    sentinelPassword?: string;
  }
  | { mode: "cluster"; nodes: RedisAddress[] };

/** Everything needed to connect, resolved and validated. */
export interface RedisSettings {
  topology: RedisTopology;
  db: number;
  username?: string;
  password?: string;
  /** TLS (`rediss://` or REDIS_TLS); `caFile` adds a CA for self-signed deployments. */
  tls?: { caFile?: string };
  keyPrefix: string;
  ttlSeconds?: number;
  /** Kind of store for messages: `Redis`, `Redis Sentinel`, `Redis Cluster`. */
  store: string;
  /** Address for messages: `localhost:6379`, `master 'mymaster' via h:p, h:p`. */
  target: string;
  /** Where memory lives, for `/memory` and `patchbay sessions`. */
  description: string;
  /**
   * Which data this is (addresses, database, key prefix; never credentials). Names the
   * outage journal, so its messages are delivered to the store they were meant for.
   */
  identity: string;
  /** The variables or fields that chose this store, for remedies. */
  source: string;
}

const DEFAULT_SENTINEL_PORT = 26379;

/** Whether the variables or the configuration name a Redis store. */
export function redisConfigured(settings: MemorySettings, env: Environment): boolean {
  return Boolean(
    env.get("REDIS_URL") || env.get("REDIS_HOST") || settings.sentinels?.length ||
      settings.clusterNodes?.length,
  );
}

/**
 * Resolves the Redis settings. `REDIS_URL` (`redis://[user[:password]@]host[:port][/db]`,
 * `rediss://` for TLS) wins over REDIS_HOST/REDIS_PORT; REDIS_PASSWORD, REDIS_USERNAME and
 * REDIS_DB fill in what the URL leaves out. Passwords found are registered with `redactor`.
 */
export function resolveRedisSettings(
  memory: MemorySettings,
  env: Environment,
  redactor?: Redactor,
): RedisSettings {
  const url = env.get("REDIS_URL");
  const fromUrl = url ? parseRedisUrl(env, url, redactor) : undefined;
  const username = fromUrl?.username ?? nonEmpty(env.get("REDIS_USERNAME"));
  const password = fromUrl?.password ?? nonEmpty(env.get("REDIS_PASSWORD"));
  redactor?.addSecret(password);
  const db = fromUrl?.db ?? parseDb(env, "REDIS_DB");
  const tlsWanted = fromUrl?.tls ?? parseFlag(env, "REDIS_TLS");
  const caFile = nonEmpty(env.get("REDIS_TLS_CA_FILE"));
  const tls = tlsWanted || caFile ? { ...(caFile ? { caFile } : {}) } : undefined;
  const common = {
    db,
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
    ...(tls ? { tls } : {}),
    keyPrefix: memory.keyPrefix,
    ...(memory.ttlSeconds ? { ttlSeconds: memory.ttlSeconds } : {}),
  };
  const sentinels = memory.sentinels ?? [];
  const clusterNodes = memory.clusterNodes ?? [];
  if (sentinels.length > 0 && clusterNodes.length > 0) {
    throw new MemoryConfigError(
      "Memory.sentinels and Memory.cluster_nodes are both set",
      MEMORY_STEPS.sentinelsOrCluster,
    );
  }
  const suffix = `${tls ? ", TLS" : ""}`;
  if (sentinels.length > 0) {
    if (!memory.sentinelName) {
      throw new MemoryConfigError(
        "Memory.sentinels is set but Memory.sentinel_name is not",
        MEMORY_STEPS.sentinelName,
      );
    }
    const addresses = sentinels.map((s, i) =>
      parseAddress(s, DEFAULT_SENTINEL_PORT, `Memory.sentinels[${i}]`)
    );
    const list = addresses.map(formatAddress).join(", ");
    const sentinelPassword = nonEmpty(env.get("REDIS_SENTINEL_PASSWORD"));
    redactor?.addSecret(sentinelPassword);
    const sentinelUsername = nonEmpty(env.get("REDIS_SENTINEL_USERNAME"));
    return {
      ...common,
      topology: {
        mode: "sentinel",
        sentinels: addresses,
        name: memory.sentinelName,
        ...(sentinelUsername ? { sentinelUsername } : {}),
        ...(sentinelPassword ? { sentinelPassword } : {}),
      },
      store: "Redis Sentinel",
      target: `master '${memory.sentinelName}' via ${list}`,
      description: `Redis Sentinel master '${memory.sentinelName}' via ${list} db ${db}${suffix}`,
      identity: `sentinel:${memory.sentinelName}@${list}/${db}/${memory.keyPrefix}`,
      source: "Memory.sentinels",
    };
  }
  if (clusterNodes.length > 0) {
    if (db !== 0) {
      throw new MemoryConfigError(
        `REDIS_DB is ${db}, but Redis Cluster has only database 0`,
        MEMORY_STEPS.clusterDb,
      );
    }
    const addresses = clusterNodes.map((s, i) =>
      parseAddress(s, DEFAULTS.redis.port, `Memory.cluster_nodes[${i}]`)
    );
    const list = addresses.map(formatAddress).join(", ");
    return {
      ...common,
      topology: { mode: "cluster", nodes: addresses },
      store: "Redis Cluster",
      target: list,
      description: `Redis Cluster via ${list}${suffix}`,
      identity: `cluster:${list}/${memory.keyPrefix}`,
      source: "Memory.cluster_nodes",
    };
  }
  const address: RedisAddress = fromUrl?.address ?? {
    host: nonEmpty(env.get("REDIS_HOST")) ?? DEFAULTS.redis.host,
    port: parsePort(env, "REDIS_PORT"),
  };
  const target = formatAddress(address);
  return {
    ...common,
    topology: { mode: "standalone", address },
    store: "Redis",
    target,
    description: `Redis at ${target} db ${db}${suffix}`,
    identity: `redis:${target}/${db}/${memory.keyPrefix}`,
    source: url ? "REDIS_URL" : "REDIS_HOST/REDIS_PORT",
  };
}

/** `host:port`, with brackets around an IPv6 host. */
export function formatAddress(address: RedisAddress): string {
  const host = address.host.includes(":") ? `[${address.host}]` : address.host;
  return `${host}:${address.port}`;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/** Where a variable was set, for the cause line. */
function origin(env: Environment, name: string): string {
  const source = env.source(name);
  if (source === "file") return `${name} is set in ${env.file.path}`;
  if (source === "process") return `${name} is set in the environment`;
  return `${name} is not set`;
}

function parsePort(env: Environment, name: string, raw = env.get(name)): number {
  if (raw === undefined || raw.trim() === "") return DEFAULTS.redis.port;
  const port = Number(raw.trim());
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new MemoryConfigError(
      `${name} is "${raw}", not a port number (1-65535)`,
      MEMORY_STEPS.port(name, DEFAULTS.redis.port),
      `${origin(env, name.split(" ").at(-1)!)}, and a port is a whole number from 1 to 65535`,
    );
  }
  return port;
}

function parseDb(env: Environment, name: string, raw = env.get(name)): number {
  if (raw === undefined || raw.trim() === "") return DEFAULTS.redis.db;
  const db = Number(raw.trim());
  if (!Number.isInteger(db) || db < 0) {
    throw new MemoryConfigError(
      `${name} is "${raw}", not a database number (0, 1, 2, ...)`,
      MEMORY_STEPS.db(name, DEFAULTS.redis.db),
      `${origin(env, name.split(" ").at(-1)!)}, and Redis numbers its databases from 0`,
    );
  }
  return db;
}

function parseFlag(env: Environment, name: string): boolean | undefined {
  const raw = env.get(name);
  if (raw === undefined || raw.trim() === "") return undefined;
  const value = raw.trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(value)) return true;
  if (["0", "false", "no", "off"].includes(value)) return false;
  throw new MemoryConfigError(
    `${name} is "${raw}", not true or false`,
    MEMORY_STEPS.flag(name),
    origin(env, name),
  );
}

interface ParsedUrl {
  address: RedisAddress;
  tls: boolean;
  username?: string;
  password?: string;
  db?: number;
}

function parseRedisUrl(env: Environment, raw: string, redactor?: Redactor): ParsedUrl {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badUrl(env, raw, "it is not a URL");
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
    throw badUrl(env, raw, `its scheme is ${url.protocol.slice(0, -1)}`);
  }
  if (!url.hostname) throw badUrl(env, raw, "it names no host");
  const password = url.password ? decodeURIComponent(url.password) : undefined;
  redactor?.addSecret(password);
  const path = url.pathname.replace(/^\//, "");
  return {
    address: {
      host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: url.port ? parsePort(env, "the port in REDIS_URL", url.port) : DEFAULTS.redis.port,
    },
    tls: url.protocol === "rediss:",
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(password ? { password } : {}),
    ...(path ? { db: parseDb(env, "the database in REDIS_URL", path) } : {}),
  };
}

/**
 * A readable, file-system-safe folder name for one store's local copies: its outage
 * journal, and the OAuth logins it could not take (`lib/oauth/redis_token_store.ts`).
 */
export function journalFolder(identity: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < identity.length; i++) {
    hash = Math.imul(hash ^ identity.charCodeAt(i), 0x01000193) >>> 0;
  }
  const readable = identity.replace(/[^A-Za-z0-9.-]+/g, "-").replace(/^-|-$/g, "").slice(0, 60);
  return `${readable}-${hash.toString(16).padStart(8, "0")}`;
}

function badUrl(env: Environment, raw: string, why: string): MemoryConfigError {
  // The value may carry a password; the boundary redacts `user:password@` before printing.
  return new MemoryConfigError(
    `REDIS_URL is "${raw}", which is not a redis:// or rediss:// URL`,
    MEMORY_STEPS.url,
    `${origin(env, "REDIS_URL")}, and ${why}`,
  );
}

function parseAddress(raw: string, defaultPort: number, field: string): RedisAddress {
  const match = /^\[([^\]]+)\](?::(\d+))?$/.exec(raw) ?? /^([^:]+)(?::(\d+))?$/.exec(raw);
  if (!match) {
    throw new MemoryConfigError(
      `${field} is "${raw}", not host:port`,
      MEMORY_STEPS.hostPort(defaultPort),
    );
  }
  const port = match[2] === undefined ? defaultPort : Number(match[2]);
  if (port < 1 || port > 65535) {
    throw new MemoryConfigError(
      `${field} is "${raw}": ${port} is not a port number (1-65535)`,
      MEMORY_STEPS.hostPort(defaultPort),
    );
  }
  return { host: match[1], port };
}
