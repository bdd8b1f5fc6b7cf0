/**
 * Why a connection to Redis failed, as a table: each rule says when it applies (a Deno
 * denial, what Redis answered, a network problem named by the classifier, what ioredis
 * reports) and the problem, cause and remedy of the `Could not connect to <store>` row it
 * produces. Rules are tried in order; the first that applies wins.
 *
 * @module
 */

import { join } from "node:path";
import { StoreAuthError, StoreConnectError, StoreDatabaseError } from "../errors.ts";
import { denoPermissionFlag } from "../deno_permission/denial.ts";
import { denoPermissionRemedy } from "../deno_permission/remedy.ts";
import { type NetProblem, netProblem, netReason, type NetTarget } from "../errors/failure.ts";
import { perSurface, type RemedyText, STEPS } from "../errors/failure_table.ts";
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
function connectRemedy(fix: string, purpose: RedisPurpose, restart = false): RemedyText {
  if (purpose === "memory") {
    return perSurface`${fix}${restart ? " and restart patchbay" : ""}, or ${STEPS.memoryOff}`;
  }
  return `${fix}, then run patchbay again (no browser login starts while the store is away, ` +
    'so a login kept there is not replaced); or set Memory.backend to "file" (or "auto") to ' +
    `keep OAuth logins in ${join(configDir(), "oauth")} instead`;
}

/** What is known of one failure, for the rules. */
interface Facts extends DiagnosisContext {
  error: unknown;
  /** ioredis's message (with the last node's, for a cluster). */
  message: string;
  /** Node's error code (`ECONNREFUSED`), or "". */
  code: string;
  /** The Deno flag a denial names. */
  flag?: string;
  /** The network problem, by the classifier. */
  net?: NetProblem;
  /** Where the store is, for the network wording. */
  where: NetTarget;
  /** What a reply that is not RESP says about the service. */
  foreign?: { said: string; tls: boolean };
}

/** What a rule produces: the end of the message, the cause, and the remedy if not the store's. */
interface Finding {
  problem: string;
  reason: string;
  remedy?: RemedyText;
  /** @default StoreConnectError */
  type?: typeof StoreConnectError;
}

/** One rule: when it applies, and what it finds. */
type Rule = readonly [when: (f: Facts) => boolean, find: (f: Facts) => Finding];

/** The message says so. */
const says = (pattern: RegExp) => (f: Facts) => pattern.test(f.message);

/** The connection was lost (said by ioredis or by node:net). */
const LOST = /ECONNRESET|EPIPE|Connection is closed|socket hang up|Stream isn't writeable/i;

/** The rules, in the order they are tried. */
const RULES: readonly Rule[] = [
  [(f) => f.flag !== undefined, (f) => ({
    problem: `Permission denied: ${f.flag} was not granted`,
    reason: `patchbay runs under explicit Deno permissions and ${f.flag} was not granted, so ` +
      "the connection to the store was refused before it was made",
    remedy: connectRemedy(denoPermissionRemedy(f.flag!), f.purpose),
  })],
  [says(/WRONGPASS|invalid password|invalid username-password/i), (f) => ({
    type: StoreAuthError,
    problem: f.settings.password ? "wrong password" : "wrong user name or password",
    reason: `the server rejected the credentials (${firstLine(f.message)})`,
    remedy: connectRemedy(PASSWORD_FIX, f.purpose, true),
  })],
  [says(/NOAUTH|Authentication required/i), (f) => ({
    type: StoreAuthError,
    problem: "the server requires a password",
    reason: f.settings.password
      ? `the server did not accept the password (${firstLine(f.message)})`
      : "REDIS_PASSWORD is not set, and this server accepts no command without it",
    remedy: connectRemedy(PASSWORD_FIX, f.purpose, true),
  })],
  [says(/NOPERM/i), (f) => ({
    type: StoreAuthError,
    problem: "permission denied",
    reason: `the user may not run what patchbay needs (${firstLine(f.message)})`,
    remedy: connectRemedy(
      `grant the ACL user read, write and scripting commands on keys ` +
        `${f.settings.keyPrefix}:* (e.g. +@read +@write +@scripting ~${f.settings.keyPrefix}:*), ` +
        "use another REDIS_USERNAME",
      f.purpose,
    ),
  })],
  [says(/DB index is out of range|invalid DB index/i), (f) => ({
    type: StoreDatabaseError,
    problem: `database ${f.settings.db} does not exist${
      f.databases ? ` (this server has ${f.databases}: 0-${f.databases - 1})` : ""
    }`,
    reason: `REDIS_DB is ${f.settings.db}, beyond the server's \`databases\` setting`,
    remedy: connectRemedy(
      `set REDIS_DB to a database the server has${
        f.databases ? ` (0 to ${f.databases - 1})` : " (0 always exists)"
      }`,
      f.purpose,
      true,
    ),
  })],
  // Network problems are named by the classifier and worded as for a server or the model,
  // followed by what the REDIS_* variables have to do with it.
  [(f) => f.net === "refused", (f) => ({
    problem: "connection refused",
    reason: `${netReason("refused", f.where)}: the store is not running, or ` +
      `${f.settings.source} point at the wrong host or port`,
  })],
  [(f) => f.net === "dns", (f) => ({
    problem: "host name not found",
    reason: `${netReason("dns", f.where)}: check the host named in ${
      f.settings.source.replace("/REDIS_PORT", "")
    }`,
  })],
  [(f) => f.net === "unreachable", (f) => ({
    problem: /ENETUNREACH/.test(`${f.code} ${f.message}`)
      ? "network unreachable"
      : "host unreachable",
    reason: "no route to the host: it is down, on another network, or a firewall rejects the " +
      "traffic",
  })],
  [(f) => f.net === "tls", (f) => ({
    problem: `TLS handshake failed (${firstLine(f.message)})`,
    reason: "the server's certificate was not accepted, or the port does not speak TLS",
    remedy: connectRemedy(
      "set REDIS_TLS_CA_FILE to the CA certificate that signed the server's certificate, " +
        "use redis:// for a port without TLS",
      f.purpose,
    ),
  })],
  [(f) => f.net === "timeout", (f) => ({
    problem: `no answer within ${(f.budgetMs / 1000).toFixed(1)} s`,
    reason: "the host did not answer in time: it is unreachable or overloaded, a firewall " +
      "drops the traffic, or the port belongs to something that is not Redis" +
      (f.settings.tls
        ? " (or it does not speak TLS: use redis:// and unset REDIS_TLS for a plain port)"
        : " (a TLS-only port needs rediss://)"),
  })],
  [says(/No such master|master.*(not found|unknown)/i), (f) => ({
    problem: "the sentinels know no such master",
    reason: `the sentinels answered but do not monitor a master named in ` +
      `Memory.sentinel_name (${firstLine(f.message)})`,
    remedy: connectRemedy(
      "set Memory.sentinel_name to the name in `sentinel monitor <name> ...`",
      f.purpose,
    ),
  })],
  [says(/All sentinels are unreachable/i), (f) => ({
    problem: "no sentinel answered",
    reason: `none of the addresses in Memory.sentinels accepted a connection (${
      firstLine(f.message)
    })`,
  })],
  [says(/cluster support disabled/i), (f) => {
    const fix = "remove Memory.cluster_nodes and use REDIS_HOST/REDIS_PORT for a standalone " +
      "server, or list the cluster's own nodes";
    return {
      problem: "the server is not part of a cluster",
      reason: "Memory.cluster_nodes names a standalone server (it answered: cluster support " +
        "disabled)",
      // Memory's wording (tested as it is) offers no way out here; logins get theirs.
      remedy: f.purpose === "memory" ? fix : connectRemedy(fix, f.purpose),
    };
  }],
  [says(/None of startup nodes|Failed to refresh slots|CLUSTERDOWN|cluster/i), (f) => ({
    problem: /CLUSTERDOWN/.test(f.message) ? "the cluster is down" : "no cluster node answered",
    reason: `${firstLine(f.message)}; check Memory.cluster_nodes and that the cluster reports ` +
      "cluster_state:ok",
  })],
  [says(/LOADING/), (f) => ({
    problem: "the server is still loading its data",
    reason: "Redis answers LOADING while it reads its data set from disk after a restart",
    // Conversation memory reconnects by itself; the token store tries again on next use.
    remedy: f.purpose === "memory"
      ? "wait a moment; patchbay keeps retrying"
      : connectRemedy("wait a moment", f.purpose),
  })],
  [(f) => f.foreign?.tls === true, (f) => ({
    problem: "the port expects TLS",
    reason: `the service at ${f.settings.target} answered with a TLS alert: it speaks TLS, ` +
      "and patchbay connected without it",
    remedy: connectRemedy(
      "set REDIS_TLS=true (or use a rediss:// REDIS_URL) if it is Redis over TLS, otherwise " +
        "point the REDIS_* variables at the Redis server",
      f.purpose,
    ),
  })],
  [(f) => f.foreign !== undefined, (f) => ({
    problem: "not a Redis server",
    reason: `something that is not Redis answers at ${f.settings.target} (${f.foreign!.said})`,
  })],
  [(f) => f.phase === "session" && LOST.test(`${f.code} ${f.message}`), () => ({
    problem: "the connection was lost",
    reason: "the server closed the connection or stopped (a restart, a crash, a network cut)",
  })],
  [(f) => LOST.test(`${f.code} ${f.message}`), () => ({
    problem: "the connection was closed during the handshake",
    reason: "something accepted the connection and closed it: the port may belong to a " +
      "service that is not Redis, the server may expect TLS (rediss://), or it is out of " +
      "connections (maxclients)",
  })],
];

/** The connection failure as a typed error. */
export function diagnoseConnectError(error: unknown, context: DiagnosisContext): StoreConnectError {
  const { settings, purpose } = context;
  const mode = settings.topology.mode;
  const message = errorText(error);
  const facts: Facts = {
    ...context,
    error,
    message,
    code: errorCode(error),
    flag: denoPermissionFlag(error),
    net: netProblem(error),
    where: { address: settings.target, host: settings.target.replace(/:\d+$/, "") },
    foreign: foreignProtocol(message),
  };
  const found = RULES.find(([when]) => when(facts))?.[1](facts) ??
    { problem: firstLine(message), reason: `the store reported: ${firstLine(message)}` };
  const storeRemedy = connectRemedy(
    mode === "standalone"
      ? "start the store, fix the REDIS_* variables (host, port, db, password)"
      : `start the store, fix ${
        mode === "sentinel" ? "Memory.sentinels and Memory.sentinel_name" : "Memory.cluster_nodes"
      } in servers_config.json (and REDIS_PASSWORD if the store needs one)`,
    purpose,
  );
  // The message names the database too (`Could not connect to Redis at h:p db N`); a
  // Sentinel or Cluster target is named by its master or nodes instead.
  const at = mode === "standalone" ? `${settings.target} db ${settings.db}` : settings.target;
  const Type = found.type ?? StoreConnectError;
  return new Type(settings.store, at, found.problem, error, {
    reason: found.reason,
    remedy: found.remedy ?? storeRemedy,
  });
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

/** ioredis's message, with the last node's for a cluster. */
export function errorText(error: unknown): string {
  if (error instanceof Error) {
    const nested = (error as Error & { lastNodeError?: unknown }).lastNodeError;
    return nested instanceof Error ? `${error.message} (${nested.message})` : error.message;
  }
  return String(error);
}

/** Node's error code (`ECONNREFUSED`), or "". */
export function errorCode(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" ? code : "";
}

/** The message's first line, without ioredis's "Please report this." (not a bug to report). */
export function firstLine(text: string): string {
  return text.split("\n")[0].replace(/\.?\s*Please report this\.?$/i, "").replace(/\.$/, "");
}
