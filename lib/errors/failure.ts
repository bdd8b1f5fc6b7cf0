/**
 * The one classifier of failures: whatever went wrong — a thrown error (the runtime's,
 * fetch's, node:net's, ioredis's, an SDK's), an HTTP answer, a JSON-RPC error, a process
 * exit, a Deno permission denial — reduced to a {@linkcode Failure} kind, from which the
 * servers, the model, Redis, OAuth, the doctor, `call` and the REPL word their errors
 * (lib/errors.ts, their rows in lib/failure_table.ts). A refused port or a name DNS does not know is recognised here and only
 * here, and worded by {@linkcode netReason} the same for a server, the model and Redis.
 *
 * @module
 */

import { causeChain } from "../cause_chain.ts";
import { denoPermissionFlag } from "../deno_permission/denial.ts";
import { NET_ROWS, type NetLabel, type NetProblem, ROWS } from "./failure_table.ts";

export type { NetProblem } from "./failure_table.ts";

/**
 * What the runtimes say for each problem (Deno's Rust errors, Node's codes, ioredis),
 * tried in this order: the first match wins.
 */
const NET_PATTERNS: readonly (readonly [NetProblem, RegExp])[] = [
  ["tunnel", /unsuccessful tunnel|proxy (?:error|authentication)/i],
  ["refused", /connection refused|os error 111\b|ECONNREFUSED/i],
  // "invalid dns name": TLS refuses a name no resolver could look up (a label over 63).
  [
    "dns",
    /dns error|invalid dns name|failed to lookup|lookup address|name or service not known|nodename nor servname|no address associated|name resolution|ENOTFOUND|EAI_AGAIN/i,
  ],
  [
    "timeout",
    /timed? ?out|TimeoutError|aborted due to timeout|os error 110\b|ETIMEDOUT/i,
  ],
  [
    "unreachable",
    /network (?:is )?unreachable|host (?:is )?unreachable|no route to host|host is down|os error 10[01]\b|os error 113\b|ENETUNREACH|EHOSTUNREACH/i,
  ],
  [
    "tls",
    /\btls\b|certificate|handshake|\bssl\b|UnknownIssuer|InvalidContentType|CorruptMessage|ERR_TLS|ERR_SSL|SELF_SIGNED|UNABLE_TO_VERIFY|self[- ]signed|wrong version number/i,
  ],
  [
    "not_http",
    /invalid http|parse error|HTTP\/0\.9|invalid status|unexpected (?:eof|end)|connection closed before message completed|incomplete message/i,
  ],
  ["dropped", /reset|broken pipe|end of file|ECONNRESET|EPIPE|socket hang up/i],
];

/** An error and its causes as one line: `TypeError: fetch failed <- ConnectionRefused: …`. */
export function errorChain(error: unknown): string {
  return causeChain(error).map((e) => e instanceof Error ? `${e.name}: ${e.message}` : String(e))
    .join(" <- ");
}

/** The messages of an error and its causes, outermost first, empty ones left out. */
export function causeMessages(error: unknown): string[] {
  return causeChain(error).map((e) => e instanceof Error ? e.message : String(e)).filter((m) =>
    m !== ""
  );
}

/** Node-style error codes (`ECONNREFUSED`) along the chain. */
function codes(error: unknown): string {
  return causeChain(error).map((e) => (e as { code?: unknown })?.code).filter((c) =>
    typeof c === "string"
  ).join(" ");
}

/** The network problem behind `error`, if it is one. */
export function netProblem(error: unknown): NetProblem | undefined {
  const chain = causeChain(error);
  if (chain.some((e) => e instanceof Deno.errors.ConnectionRefused)) return "refused";
  const text = `${errorChain(error)} ${codes(error)}`;
  const found = NET_PATTERNS.find(([, pattern]) => pattern.test(text))?.[0];
  if (found) return found;
  if (chain.some((e) => e instanceof Deno.errors.TimedOut)) return "timeout";
  if (chain.some((e) => e instanceof Deno.errors.ConnectionReset)) return "dropped";
  return undefined;
}

/** Where a connection was going, for {@linkcode netReason}. */
export interface NetTarget {
  /** `host:port` (or a URL) as the user configured it. */
  address: string;
  /** The host name alone. */
  host: string;
  /** For `timeout`: the time the connection was given, in seconds. */
  seconds?: number;
}

/**
 * The label a network problem's message starts with (the table's `NET_ROWS`): the message
 * a model request fails with and the start of a server's cause.
 */
export function netLabel(problem: NetProblem): NetLabel {
  return NET_ROWS[problem].label;
}

/**
 * The one wording of a network problem, the same for a server, the model and Redis: each
 * puts its own words around it (which server, which variable, what patchbay does next).
 */
export function netReason(problem: NetProblem, target: NetTarget, detail = ""): string {
  const said = detail ? ` (${detail})` : "";
  switch (problem) {
    case "refused":
      return `nothing is listening at ${target.address}`;
    case "dns":
      return `the host name '${target.host}' does not resolve (DNS lookup failed)`;
    case "timeout":
      return `no connection to ${target.address}` +
        (target.seconds !== undefined ? ` within ${target.seconds} s` : "");
    case "unreachable":
      return `no route to ${target.address}${said}`;
    case "tls":
      return `the TLS handshake with ${target.address} failed${said}`;
    case "tunnel":
      return `the proxy refused to open a connection to ${target.address}${said}`;
    case "not_http":
      return `${target.address} accepts connections but does not speak HTTP${said}`;
    case "dropped":
      return `the connection to ${target.address} broke${said}`;
  }
}

/** What a failure is, whatever it arrived as. */
export type Failure =
  /** Deno's sandbox refused an operation; `flag` would allow it. */
  | { kind: "deno_permission"; flag: string }
  /** The operating system refused access to a file. */
  | { kind: "file_permission" }
  | { kind: "network"; problem: NetProblem }
  /** An HTTP answer with an error status. */
  | { kind: "http"; status: number }
  /** A JSON-RPC error answer. */
  | { kind: "jsonrpc"; code: number }
  /** A process ended (`code`, or the `signal` that ended it). */
  | { kind: "exit"; code?: number; signal?: string }
  /** Aborted (Ctrl+C, or a signal's reason). */
  | { kind: "cancelled" }
  | { kind: "other" };

/** The wording operating systems and runtimes use for refused file access. */
const FILE_PERMISSION =
  /\bEACCES\b|\bEPERM\b|permission denied|operation not permitted|access is denied/i;

/** Whether `text` says the operating system refused access to a file. */
export function looksLikePermissionError(text: string): boolean {
  return FILE_PERMISSION.test(text);
}

/**
 * Classifies a failure. Accepts a thrown error, an HTTP `Response` (or `{ status }`), a
 * JSON-RPC error object (`{ code, message }`), or a process status (`Deno.CommandStatus`).
 */
export function classify(failure: unknown): Failure {
  const flag = denoPermissionFlag(failure);
  if (flag) return { kind: "deno_permission", flag };
  const chain = causeChain(failure);
  if (chain.some((e) => e instanceof DOMException && e.name === "AbortError")) {
    return { kind: "cancelled" };
  }
  if (failure instanceof Response) return { kind: "http", status: failure.status };
  if (failure && typeof failure === "object" && !(failure instanceof Error)) {
    const record = failure as Record<string, unknown>;
    if (typeof record.success === "boolean" && typeof record.code === "number") {
      return {
        kind: "exit",
        code: record.code,
        ...(typeof record.signal === "string" ? { signal: record.signal } : {}),
      };
    }
    if (typeof record.status === "number") return { kind: "http", status: record.status };
    if (typeof record.code === "number" && typeof record.message === "string") {
      return { kind: "jsonrpc", code: record.code };
    }
  }
  if (chain.some((e) => e instanceof Deno.errors.PermissionDenied)) {
    return { kind: "file_permission" };
  }
  const problem = netProblem(failure);
  if (problem) return { kind: "network", problem };
  const rpcCode = chain.map((e) => (e as { code?: unknown })?.code).find((c) =>
    typeof c === "number" && c < 0
  );
  if (typeof rpcCode === "number") return { kind: "jsonrpc", code: rpcCode };
  const status = chain.map((e) => (e as { status?: unknown })?.status).find((s) =>
    typeof s === "number" && s >= 400
  );
  if (typeof status === "number") return { kind: "http", status };
  if (looksLikePermissionError(`${errorChain(failure)} ${codes(failure)}`)) {
    return { kind: "file_permission" };
  }
  return { kind: "other" };
}

/**
 * A TLS failure because the certificate's issuer is not trusted (unknown issuer, a
 * self-signed certificate): behind a TLS-inspecting proxy, every HTTPS peer looks like
 * this until the proxy's CA certificate is trusted.
 */
export function untrustedCertificate(message: string): boolean {
  return /UnknownIssuer|unknown issuer|self[- ]signed|SELF_SIGNED|UNABLE_TO_VERIFY|invalid peer certificate: (?:UnknownIssuer|BadSignature)|certificate verify failed/i
    .test(message);
}

/** What to do about {@linkcode untrustedCertificate}: its row in the failure table. */
export const UNTRUSTED_CERTIFICATE_REMEDY: string = ROWS.untrusted_certificate.remedy.repl;
