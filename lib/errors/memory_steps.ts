/**
 * The remedies of conversation memory: a memory store configured wrongly
 * (`lib/redis/settings.ts`), a conversation that could not be saved, a stored session not
 * found (`lib/memory/`). Part of the failure table (`lib/errors/failure_table.ts`), kept in a
 * file of their own so the table stays within the size of a file. Each is one text for both
 * surfaces, or a function of the values only known when it fails (the variable's name, its
 * default, the path).
 *
 * @module
 */

import { perSurface, STEPS } from "./failure_table.ts";

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
  /** A conversation that could not be saved, for a reason patchbay does not name. */
  saveFailed: perSurface`run with --debug for details, or ${STEPS.memoryOff}`,
  /** A store's file or folder the operating system refused, at `path`. */
  ownFiles: (path: string): string =>
    `make ${path} and its folder belong to you (chmod 700 on the folder, 600 on files)`,
  /** A store's disk that is full. */
  diskFull: "free disk space; messages not yet saved are kept in memory and retried",
  /** A store's file that could not be written for another reason. */
  writableFolder: perSurface`check that the folder exists and is writable, or ${STEPS.memoryOff}`,
  /** A session id that is not one, or matches none: where the ids are listed. */
  listSessions: "`patchbay sessions` lists the stored sessions with their ids",
  /** A session id prefix that starts several ids. */
  longerId: "give more characters of the id",
  /** No session to resume in this folder, but some in others. */
  otherFolders: "`patchbay sessions --all` lists them; `patchbay --resume <id>` continues one " +
    "of them",
  /** No stored session at all to resume. */
  firstConversation: "start a conversation with `patchbay` (without --resume); it is saved as " +
    "you go",
} as const;
