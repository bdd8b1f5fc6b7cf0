/**
 * The remedies of a memory store configured wrongly (`lib/redis/settings.ts`): part of the
 * failure table (`lib/errors/failure_table.ts`), kept in a file of their own so the table
 * stays within the size of a file. Each is one text for both surfaces, or a function of the
 * values only known when it fails (the variable's name, its default).
 *
 * @module
 */

/** Where a REDIS_* variable is fixed, and when it is read. */
const FIX_VARS = "fix it in .env or the environment (.env is read only at start-up)";

/** Steps of the remedies of a memory store configured wrongly. */
export const MEMORY_STEPS = {
  /** Memory.sentinels and Memory.cluster_nodes both set. */
  sentinelsOrCluster: "keep the one your deployment uses: sentinels (with sentinel_name) for " +
    "Redis Sentinel, cluster_nodes for Redis Cluster",
  /** Memory.sentinels without Memory.sentinel_name. */
  sentinelName: 'add "sentinel_name": the master group name from `sentinel monitor <name> ...` ' +
    "(often mymaster)",
  /** A database other than 0 for Redis Cluster. */
  clusterDb: "remove REDIS_DB (or set it to 0) when Memory.cluster_nodes is set; keep " +
    "clusters apart with Memory.key_prefix instead",
  /** A port variable that is not a port number. */
  port: (name: string, defaultPort: number): string =>
    `set ${name} to the port the store listens on (${defaultPort} by default); ${FIX_VARS}`,
  /** A database variable that is not a database index. */
  db: (name: string, defaultDb: number): string =>
    `set ${name} to the database index to use (${defaultDb} by default); ${FIX_VARS}`,
  /** A variable that should be true or false. */
  flag: (name: string): string => `set ${name} to true or false; ${FIX_VARS}`,
  /** REDIS_URL that is not a redis:// or rediss:// URL. */
  url: "write it as redis://host[:port][/db], rediss:// for TLS, with user:password@ before " +
    `the host when the store needs credentials; ${FIX_VARS}`,
  /** An address of Memory.sentinels or Memory.cluster_nodes that is not host:port. */
  hostPort: (defaultPort: number): string =>
    `write each address as host:port, e.g. "127.0.0.1:${defaultPort}"`,
} as const;
