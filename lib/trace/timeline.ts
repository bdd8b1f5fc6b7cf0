/**
 * Reading a wire trace back (docs/trace.md): the lines of a trace file and its older
 * generations, a readable timeline of them (time, server, → / ←, method or result,
 * latency, size; errors and slow requests marked) and per server and method statistics.
 *
 * A trace holds what servers sent: every text shown here passes
 * {@linkcode stripTerminalEscapes}, so a hostile server's escape sequences cannot move
 * the terminal of whoever reads its trace.
 *
 * @module
 */

import { stripTerminalEscapes } from "../terminal.ts";
import { abridge } from "../text.ts";
import type { TraceLine } from "./record.ts";

/** A response slower than this is marked `SLOW` in the timeline. */
export const SLOW_MS = 1000;

/** What a trace file held. */
export interface ReadTrace {
  lines: TraceLine[];
  /** Lines that were not JSON objects (a torn last line, another file). */
  skipped: number;
}

/** Parses the text of a trace (one JSON object per line). */
export function parseTrace(text: string): ReadTrace {
  const lines: TraceLine[] = [];
  let skipped = 0;
  for (const raw of text.split("\n")) {
    if (raw.trim() === "") continue;
    try {
      const value = JSON.parse(raw);
      if (value && typeof value === "object" && typeof value.kind === "string") lines.push(value);
      else skipped++;
    } catch {
      skipped++;
    }
  }
  return { lines, skipped };
}

/** Which lines a timeline shows. */
export interface TimelineFilter {
  server?: string;
  method?: string;
  /** Only error responses, failed exchanges and failures. */
  errors?: boolean;
}

/** Whether `line` passes `filter`. */
export function matches(line: TraceLine, filter: TimelineFilter): boolean {
  if (filter.server !== undefined && line.server !== filter.server) return false;
  if (filter.method !== undefined) {
    if (line.kind !== "message" || line.method !== filter.method) return false;
  }
  if (filter.errors) return isError(line);
  return true;
}

/** The request that asks a server for the 2026-07-28 revision (`protocol: "auto"`). */
const VERSION_PROBE = "server/discover";

/** HTTP statuses with which a 2025-era server refuses the probe, before `initialize`. */
const PROBE_REFUSALS: readonly number[] = [400, 404, 405];

/**
 * A 2025-era server refusing the version probe (`server/discover`): an error answer, or an
 * HTTP 400/404/405 to its POST. Routine: the client goes on with `initialize`, so it is
 * marked expected and is not an error (a server that then fails `initialize` is).
 */
export function isProbeFallback(line: TraceLine): boolean {
  switch (line.kind) {
    case "message":
      return line.type === "error" && line.method === VERSION_PROBE;
    case "http":
      return line.request?.["mcp-method"] === VERSION_PROBE &&
        PROBE_REFUSALS.includes(line.status ?? 0);
    default:
      return false;
  }
}

/** An error response, a failed exchange, an HTTP error status, a failed connection. */
export function isError(line: TraceLine): boolean {
  if (isProbeFallback(line)) return false;
  switch (line.kind) {
    case "message":
      return line.type === "error";
    case "http":
      return line.failure !== undefined || (line.status ?? 0) >= 400;
    case "event":
      // A process patchbay ended itself exits by its signal: only an exit of its own counts.
      return line.state === "failed" ||
        (line.event === "exit" && line.code !== 0 && (line.signal ?? null) === null);
    default:
      return false;
  }
}

/** Text from the trace, safe for a terminal and of bounded length. */
function clean(value: unknown, max = 120): string {
  return abridge(stripTerminalEscapes(String(value ?? "")).replace(/\s+/g, " "), max);
}

function time(t: string): string {
  return clean(t.slice(11, 23), 12);
}

function size(bytes: number | undefined): string {
  if (bytes === undefined) return "";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * What a request is about, when its parameters name it: the tool or prompt (`name`) or the
 * resource (`uri`), so a timeline says which call or read a line is.
 */
function subject(line: TraceLine & { kind: "message" }): string {
  if (line.type !== "request" || typeof line.message !== "object" || line.message === null) {
    return "";
  }
  const params = (line.message as { params?: Record<string, unknown> }).params;
  const named = params?.name ?? params?.uri;
  return typeof named === "string" ? ` ${clean(named, 80)}` : "";
}

/** One line of the timeline. */
export function formatLine(line: TraceLine): string {
  const server = clean(line.server ?? (line.kind === "model" ? "model" : "patchbay"), 24)
    .padEnd(14);
  const head = `${time(line.t)}  ${server}`;
  switch (line.kind) {
    case "message": {
      const arrow = line.dir === "out" ? "→" : "←";
      const id = line.id !== undefined ? ` #${clean(line.id, 24)}` : "";
      const method = clean(line.method ?? "(unpaired)", 60);
      let what = `${method}${id}${subject(line)}`;
      if (line.type === "result") what += " result";
      if (line.type === "error") {
        what += ` ${isProbeFallback(line) ? "refused" : "ERROR"} ${clean(line.error?.code, 12)} ${
          clean(line.error?.message, 100)
        }`;
      }
      const latency = line.ms !== undefined ? `  ${line.ms} ms` : "";
      const slow = (line.ms ?? 0) >= SLOW_MS ? "  SLOW" : "";
      const cut = line.cut ? "  (cut)" : "";
      return `${head}  ${arrow}  ${what}${latency}${slow}  ${size(line.bytes)}${cut}` +
        expectedMark(line);
    }
    case "http": {
      const status = line.status !== undefined
        ? String(line.status)
        : `FAILED ${clean(line.failure, 100)}`;
      const session = line.response?.["mcp-session-id"] ?? line.request?.["mcp-session-id"];
      const extra = session ? `  session ${clean(session, 40)}` : "";
      const mark = isError(line) ? "  ERROR" : expectedMark(line);
      return `${head}  ⇄  ${clean(line.method, 8)} ${
        clean(line.url, 80)
      } ${status}  ${line.ms} ms` +
        `${size(line.response_bytes) ? `  ${size(line.response_bytes)}` : ""}${extra}${mark}`;
    }
    case "event": {
      const { t: _t, kind: _k, server: _s, event, ...fields } = line;
      const detail = Object.entries(fields)
        .filter(([, value]) => value !== undefined && value !== null)
        .map(([key, value]) => `${clean(key, 20)}=${clean(value, 80)}`)
        .join(" ");
      const mark = isError(line) ? "  ERROR" : "";
      return `${head}  ·  ${clean(event, 20)} ${detail}${mark}`;
    }
    default: {
      const { t: _t, kind: _k, server: _s, ...fields } = line;
      const detail = Object.entries(fields)
        .filter(([key]) => !["request", "response"].includes(key))
        .map(([key, value]) => `${clean(key, 20)}=${clean(value, 60)}`)
        .join(" ");
      return `${head}  ⇢  ${detail}`;
    }
  }
}

/** What a routine refusal of the version probe is marked with instead of `ERROR`. */
function expectedMark(line: TraceLine): string {
  return isProbeFallback(line) ? "  expected: a 2025-era server; initialize follows" : "";
}

/**
 * What `--errors` leaves out of `lines` as routine ({@linkcode isProbeFallback}), said so
 * the person is not left wondering; `undefined` when it leaves out nothing.
 */
export function expectedNote(
  lines: readonly TraceLine[],
  filter: TimelineFilter,
): string | undefined {
  if (!filter.errors) return undefined;
  const { errors: _errors, ...others } = filter;
  const count = lines.filter((line) => isProbeFallback(line) && matches(line, others)).length;
  if (count === 0) return undefined;
  return `(${count} expected ${count === 1 ? "refusal" : "refusals"} of the version probe ` +
    "not shown: a 2025-era server answers server/discover with an error, and initialize " +
    "follows)";
}

/** The timeline of `lines`: those `filter` keeps, the last `last` of them when given. */
export function timeline(
  lines: readonly TraceLine[],
  filter: TimelineFilter = {},
  last?: number,
): string[] {
  const kept = lines.filter((line) => matches(line, filter));
  const shown = last !== undefined && last >= 0
    ? kept.slice(Math.max(0, kept.length - last))
    : kept;
  return shown.map(formatLine);
}

/** Figures of one server and method. */
export interface MethodStats {
  server: string;
  method: string;
  /** Requests seen (either direction). */
  count: number;
  /** Responses that were errors. */
  errors: number;
  /** Latencies of the paired responses, in ms. */
  p50?: number;
  p95?: number;
  /** Bytes of requests and responses together. */
  bytes: number;
}

/** Per server and method: count, p50/p95 latency, errors, bytes; sorted by server, method. */
export function stats(lines: readonly TraceLine[]): MethodStats[] {
  const groups = new Map<string, MethodStats & { latencies: number[] }>();
  for (const line of lines) {
    if (line.kind !== "message" || line.method === undefined) continue;
    const key = `${line.server}\u0000${line.method}`;
    let group = groups.get(key);
    if (!group) {
      group = {
        server: line.server,
        method: line.method,
        count: 0,
        errors: 0,
        bytes: 0,
        latencies: [],
      };
      groups.set(key, group);
    }
    group.bytes += line.bytes ?? 0;
    if (line.type === "request" || line.type === "notification") group.count++;
    if (isError(line)) group.errors++;
    if (line.ms !== undefined) group.latencies.push(line.ms);
  }
  return [...groups.values()]
    .sort((a, b) => a.server.localeCompare(b.server) || a.method.localeCompare(b.method))
    .map(({ latencies, ...group }) => {
      const sorted = latencies.sort((a, b) => a - b);
      return sorted.length === 0
        ? group
        : { ...group, p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95) };
    });
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];
}

/** The statistics as a table. */
export function statsTable(rows: readonly MethodStats[]): string[] {
  const header = ["server", "method", "count", "p50 ms", "p95 ms", "errors", "bytes"];
  const body = rows.map((row) => [
    clean(row.server, 24),
    clean(row.method, 40),
    String(row.count),
    row.p50 === undefined ? "-" : String(row.p50),
    row.p95 === undefined ? "-" : String(row.p95),
    String(row.errors),
    size(row.bytes),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const render = (row: string[]) =>
    row.map((cell, i) => i >= 2 ? cell.padStart(widths[i]) : cell.padEnd(widths[i])).join("  ")
      .trimEnd();
  return [render(header), ...body.map(render)];
}
