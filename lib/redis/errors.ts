/**
 * Turns what ioredis reports into `Could not connect to Redis at <host>:<port>: <problem>`
 * with the probable cause and a remedy. ioredis rejects with "Connection is closed."; the
 * useful cause is the last `error` event, which the caller passes here.
 *
 * Conversation memory and OAuth logins (`lib/oauth/redis_token_store.ts`) share the
 * diagnosis; the {@linkcode RedisPurpose} chooses how a remedy ends, since conversation
 * memory can be turned off for a session and logins cannot.
 *
 * @module
 */

import { join } from "node:path";
import {
  StoreAuthError,
  StoreConnectError,
  StoreDatabaseError,
  StoreFailedError,
} from "../errors.ts";
import { denoPermissionFlag } from "../deno_permission/denial.ts";
import { denoPermissionRemedy } from "../deno_permission/remedy.ts";
import { netProblem, netReason } from "../failure.ts";
import { configDir } from "../paths.ts";
import type { RedisSettings } from "./settings.ts";

/** What the caller keeps in Redis: conversation memory, or OAuth logins. */
export type RedisPurpose = "memory" | "logins";

/** What the diagnosis needs besides the error. */
export interface DiagnosisContext {
  settings: RedisSettings;
  /** The time the connection attempt was allowed, for the timeout message. */
  budgetMs: number;
  /** `CONFIG GET databases`, when the server told us. */
  databases?: number;
  /** A connection being made, or one that worked and broke. @default "connect" */
  phase?: "connect" | "session";
  /** What the store holds for the caller, which decides how the remedy ends. */
  purpose: RedisPurpose;
}

const PASSWORD_FIX = "set REDIS_PASSWORD (and REDIS_USERNAME for an ACL user) to the " +
  "store's credentials in .env or the environment";

/**
 * `fix`, then the way out that suits what the store holds. Conversation memory can be
 * turned off (`restart`: the fix only takes effect in a new run). Logins cannot: they can
 * move back to files, and no browser login replaces one while the store is away.
 */
function connectRemedy(fix: string, purpose: RedisPurpose, restart = false): string {
  if (purpose === "memory") {
    return `${fix}${restart ? " and restart patchbay" : ""}, or turn persistence off with /memory`;
  }
  return `${fix}, then run patchbay again (no browser login starts while the store is away, ` +
    'so a login kept there is not replaced); or set Memory.backend to "file" (or "auto") to ' +
    `keep OAuth logins in ${join(configDir(), "oauth")} instead`;
}

/** Logins have no journal: one that a refusing store did not take must be obtained again. */
const LOGIN_AGAIN = ", then log in again if a login could not be saved";

/** The connection failure as a typed error. */
export function diagnoseConnectError(error: unknown, context: DiagnosisContext): StoreConnectError {
  const { settings, purpose } = context;
  const message = errorText(error);
  const code = errorCode(error);
  const mode = settings.topology.mode;
  const storeRemedy = connectRemedy(
    mode === "standalone"
      ? "start the store, fix the REDIS_* variables (host, port, db, password)"
      : `start the store, fix ${
        mode === "sentinel" ? "Memory.sentinels and Memory.sentinel_name" : "Memory.cluster_nodes"
      } in servers_config.json (and REDIS_PASSWORD if the store needs one)`,
    purpose,
  );
  // The contract's message names the database too (`Could not connect to Redis at h:p db N`);
  // a Sentinel or Cluster target is named by its master or nodes instead.
  const at = mode === "standalone" ? `${settings.target} db ${settings.db}` : settings.target;
  const fail = (problem: string, reason: string, remedy: string = storeRemedy) =>
    new StoreConnectError(settings.store, at, problem, error, { reason, remedy });
  const vars = settings.source;

  const flag = denoPermissionFlag(error);
  if (flag) {
    return fail(
      `Permission denied: ${flag} was not granted`,
      `patchbay runs under explicit Deno permissions and ${flag} was not granted, so the ` +
        "connection to the store was refused before it was made",
      connectRemedy(denoPermissionRemedy(flag), purpose),
    );
  }

  if (/WRONGPASS|invalid password|invalid username-password/i.test(message)) {
    return new StoreAuthError(
      settings.store,
      at,
      settings.password ? "wrong password" : "wrong user name or password",
      error,
      {
        reason: `the server rejected the credentials (${firstLine(message)})`,
        remedy: connectRemedy(PASSWORD_FIX, purpose, true),
      },
    );
  }
  if (/NOAUTH|Authentication required/i.test(message)) {
    return new StoreAuthError(
      settings.store,
      at,
      "the server requires a password",
      error,
      {
        reason: settings.password
          ? `the server did not accept the password (${firstLine(message)})`
          : "REDIS_PASSWORD is not set, and this server accepts no command without it",
        remedy: connectRemedy(PASSWORD_FIX, purpose, true),
      },
    );
  }
  if (/NOPERM/i.test(message)) {
    return new StoreAuthError(
      settings.store,
      at,
      "permission denied",
      error,
      {
        reason: `the user may not run what patchbay needs (${firstLine(message)})`,
        remedy: connectRemedy(
          `grant the ACL user read, write and scripting commands on keys ` +
            `${settings.keyPrefix}:* (e.g. +@read +@write +@scripting ~${settings.keyPrefix}:*), ` +
            "use another REDIS_USERNAME",
          purpose,
        ),
      },
    );
  }
  if (/DB index is out of range|invalid DB index/i.test(message)) {
    const range = context.databases
      ? ` (this server has ${context.databases}: 0-${context.databases - 1})`
      : "";
    return new StoreDatabaseError(
      settings.store,
      at,
      `database ${settings.db} does not exist${range}`,
      error,
      {
        reason: `REDIS_DB is ${settings.db}, beyond the server's \`databases\` setting`,
        remedy: connectRemedy(
          `set REDIS_DB to a database the server has${
            context.databases ? ` (0 to ${context.databases - 1})` : " (0 always exists)"
          }`,
          purpose,
          true,
        ),
      },
    );
  }
  // Network problems are recognised by the one classifier (lib/failure.ts) and worded as
  // for a server or the model, followed by what the REDIS_* variables have to do with it.
  const net = netProblem(error);
  const where = { address: settings.target, host: settings.target.replace(/:\d+$/, "") };
  if (net === "refused") {
    return fail(
      "connection refused",
      `${netReason("refused", where)}: the store is not running, or ${vars} point at the ` +
        "wrong host or port",
    );
  }
  if (net === "dns") {
    return fail(
      "host name not found",
      `${netReason("dns", where)}: check the host named in ${vars.replace("/REDIS_PORT", "")}`,
    );
  }
  if (net === "unreachable") {
    return fail(
      /ENETUNREACH/.test(`${code} ${message}`) ? "network unreachable" : "host unreachable",
      "no route to the host: it is down, on another network, or a firewall rejects the " +
        "traffic",
    );
  }
  if (net === "tls") {
    return fail(
      `TLS handshake failed (${firstLine(message)})`,
      "the server's certificate was not accepted, or the port does not speak TLS",
      connectRemedy(
        "set REDIS_TLS_CA_FILE to the CA certificate that signed the server's certificate, " +
          "use redis:// for a port without TLS",
        purpose,
      ),
    );
  }
  if (net === "timeout") {
    return fail(
      `no answer within ${(context.budgetMs / 1000).toFixed(1)} s`,
      "the host did not answer in time: it is unreachable or overloaded, a firewall drops " +
        "the traffic, or the port belongs to something that is not Redis" +
        (settings.tls
          ? " (or it does not speak TLS: use redis:// and unset REDIS_TLS for a plain port)"
          : " (a TLS-only port needs rediss://)"),
    );
  }
  if (/No such master|master.*(not found|unknown)/i.test(message)) {
    return fail(
      "the sentinels know no such master",
      `the sentinels answered but do not monitor a master named in Memory.sentinel_name ` +
        `(${firstLine(message)})`,
      connectRemedy(
        "set Memory.sentinel_name to the name in `sentinel monitor <name> ...`",
        purpose,
      ),
    );
  }
  if (/All sentinels are unreachable/i.test(message)) {
    return fail(
      "no sentinel answered",
      `none of the addresses in Memory.sentinels accepted a connection (${firstLine(message)})`,
    );
  }
  if (/cluster support disabled/i.test(message)) {
    return fail(
      "the server is not part of a cluster",
      "Memory.cluster_nodes names a standalone server (it answered: cluster support disabled)",
      // Memory's wording (tested as it is) offers no way out here; logins get theirs.
      purpose === "memory"
        ? "remove Memory.cluster_nodes and use REDIS_HOST/REDIS_PORT for a standalone server, " +
          "or list the cluster's own nodes"
        : connectRemedy(
          "remove Memory.cluster_nodes and use REDIS_HOST/REDIS_PORT for a standalone " +
            "server, or list the cluster's own nodes",
          purpose,
        ),
    );
  }
  if (/None of startup nodes|Failed to refresh slots|CLUSTERDOWN|cluster/i.test(message)) {
    return fail(
      /CLUSTERDOWN/.test(message) ? "the cluster is down" : "no cluster node answered",
      `${firstLine(message)}; check Memory.cluster_nodes and that the cluster reports ` +
        "cluster_state:ok",
    );
  }
  if (/LOADING/.test(message)) {
    return fail(
      "the server is still loading its data",
      "Redis answers LOADING while it reads its data set from disk after a restart",
      // Conversation memory reconnects by itself; the token store tries again on next use.
      purpose === "memory"
        ? "wait a moment; patchbay keeps retrying"
        : connectRemedy("wait a moment", purpose),
    );
  }
  const foreign = foreignProtocol(message);
  if (foreign?.tls) {
    return fail(
      "the port expects TLS",
      `the service at ${settings.target} answered with a TLS alert: it speaks TLS, and ` +
        "patchbay connected without it",
      connectRemedy(
        "set REDIS_TLS=true (or use a rediss:// REDIS_URL) if it is Redis over TLS, otherwise " +
          "point the REDIS_* variables at the Redis server",
        purpose,
      ),
    );
  }
  if (foreign) {
    return fail(
      "not a Redis server",
      `something that is not Redis answers at ${settings.target} (${foreign.said})`,
    );
  }
  const lost = /ECONNRESET|EPIPE|Connection is closed|socket hang up|Stream isn't writeable/i;
  if (context.phase === "session" && lost.test(`${code} ${message}`)) {
    return fail(
      "the connection was lost",
      "the server closed the connection or stopped (a restart, a crash, a network cut)",
    );
  }
  if (lost.test(`${code} ${message}`)) {
    return fail(
      "the connection was closed during the handshake",
      "something accepted the connection and closed it: the port may belong to a service " +
        "that is not Redis, the server may expect TLS (rediss://), or it is out of " +
        "connections (maxclients)",
    );
  }
  return fail(firstLine(message), `the store reported: ${firstLine(message)}`);
}

/**
 * What the first byte of a reply that is not RESP says about the service that sent it
 * (ioredis's parser reports no more than that byte: `Unknown RESP type 72 "H"`).
 */
const FOREIGN_FIRST_BYTES: Readonly<Record<string, string>> = {
  "H": "it sent HTTP: a web server listens there",
  "<": "it sent HTML: a web server listens there",
  "{": "it sent JSON: an HTTP or JSON-RPC service listens there",
  "S": "it sent what looks like an SSH banner",
};

/** TLS records open with their content type: 0x15 alert, 0x16 handshake. */
const TLS_FIRST_BYTES = new Set(["\u0015", "\u0016"]);

/** What the reply's first byte says about the service, when the reply was not RESP. */
function foreignProtocol(message: string): { said: string; tls: boolean } | undefined {
  const match = /Unknown RESP type (\d+)/.exec(message);
  if (!match) return undefined;
  const byte = String.fromCharCode(Number(match[1]));
  const printable = /^[\x21-\x7e]$/.test(byte)
    ? `"${byte}"`
    : `0x${byte.charCodeAt(0).toString(16).padStart(2, "0")}`;
  if (TLS_FIRST_BYTES.has(byte)) return { said: "a TLS alert", tls: true };
  return {
    said: FOREIGN_FIRST_BYTES[byte] ??
      `its reply began with ${printable}, which no Redis reply begins with`,
    tls: false,
  };
}

/**
 * A failure of a command on a working connection (out of memory, wrong key type, ...).
 * Conversation memory keeps what it could not write in its journal; a login that could not
 * be saved has to be repeated.
 */
export function diagnoseCommandError(
  error: unknown,
  settings: RedisSettings,
  purpose: RedisPurpose,
): StoreFailedError {
  const message = errorText(error);
  const memory = purpose === "memory";
  if (/^OOM|maxmemory/i.test(message)) {
    const fix = "raise maxmemory or free space in the store";
    return new StoreFailedError(`${settings.description} is out of memory`, {
      reason: `the server refused the write (${firstLine(message)})`,
      remedy: memory
        ? `${fix}; messages are kept in the local journal and written once it accepts them`
        : fix + LOGIN_AGAIN,
      cause: error,
    });
  }
  if (/WRONGTYPE/.test(message)) {
    return new StoreFailedError(`${settings.description} holds other data under patchbay's keys`, {
      reason: `a key under ${settings.keyPrefix}: is not what patchbay wrote (${
        firstLine(message)
      })`,
      remedy: `set Memory.key_prefix to a prefix nothing else uses${memory ? "" : LOGIN_AGAIN}`,
      cause: error,
    });
  }
  if (/READONLY/.test(message)) {
    const fix = "point patchbay at the master (or use Memory.sentinels)";
    return new StoreFailedError(`${settings.description} is read-only`, {
      reason: "the server is a replica (a failover may be in progress)",
      remedy: memory
        ? `${fix}; messages are kept in the local journal meanwhile`
        : fix + LOGIN_AGAIN,
      cause: error,
    });
  }
  return new StoreFailedError(`${settings.description} refused a command`, {
    reason: (error as Error)?.message ?? String(error),
    remedy: `run with --debug for details${
      memory ? ", or turn persistence off with /memory" : LOGIN_AGAIN
    }`,
    cause: error,
  });
}

/** Whether the failure is about the connection rather than the command. */
export function isConnectionProblem(error: unknown): boolean {
  // Network problems by the one classifier; then what only ioredis and Redis say.
  const net = netProblem(error);
  if (net === "refused" || net === "dns" || net === "timeout" || net === "unreachable") {
    return true;
  }
  const text = `${errorCode(error)} ${errorText(error)}`;
  return /Connection is closed|Stream isn't writeable|ECONN|EPIPE|MaxRetriesPerRequest|CLUSTERDOWN|TRYAGAIN|LOADING|None of startup nodes|All sentinels|Failed to refresh|enableOfflineQueue|not (?:yet )?connected|socket/i
    .test(text);
}

function errorText(error: unknown): string {
  if (error instanceof Error) {
    const nested = (error as Error & { lastNodeError?: unknown }).lastNodeError;
    return nested instanceof Error ? `${error.message} (${nested.message})` : error.message;
  }
  return String(error);
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" ? code : "";
}

/** The message's first line, without ioredis's "Please report this." (not a bug to report). */
function firstLine(text: string): string {
  return text.split("\n")[0].replace(/\.?\s*Please report this\.?$/i, "").replace(/\.$/, "");
}
