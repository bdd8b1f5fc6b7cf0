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

import { stripTerminalEscapes } from "../terminal/terminal.ts";
import { abridge } from "../text/text.ts";
import { FALLBACK_EVENT, type TraceLine } from "./record.ts";
import { isTraceLine } from "./line_shape.ts";

/** A response slower than this is marked `SLOW` in the timeline. */
export const SLOW_MS = 1000;

/** What a trace file held. */
export interface ReadTrace {
  lines: TraceLine[];
  /**
   * Lines that are not trace lines: not JSON (a torn last line, another file), or JSON
   * whose fields have other types than a trace line's (`"t": 5`; see `line_shape.ts`).
   */
  skipped: number;
}

/** Parses the text of a trace (one JSON object per line); other lines are counted. */
export function parseTrace(text: string): ReadTrace {
  const lines: TraceLine[] = [];
  let skipped = 0;
  for (const raw of text.split("\n")) {
    if (raw.trim() === "") continue;
    try {
      const value = JSON.parse(raw);
      if (isTraceLine(value)) lines.push(value);
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

/** Whether `line` passes `filter`; `expected`: the routine lines of its trace. */
export function matches(
  line: TraceLine,
  filter: TimelineFilter,
  expected?: Expected,
): boolean {
  if (filter.server !== undefined && line.server !== filter.server) return false;
  if (filter.method !== undefined) {
    if (line.kind !== "message" || line.method !== filter.method) return false;
  }
  if (filter.errors) return isError(line, expected);
  return true;
}

/** Lines of a trace that are routine steps of a connection, not failures, each with why. */
export type Expected = ReadonlyMap<TraceLine, string>;

const PROBE_EXPECTED = "expected: a server of an earlier revision; initialize follows";
const SSE_EXPECTED = "expected: a legacy SSE server; patchbay falls back to SSE";

/** The request that asks a server for the 2026-07-28 revision (`protocol: "auto"`). */
const VERSION_PROBE = "server/discover";

/** HTTP statuses with which an earlier revision's server refuses the probe, before `initialize`. */
const PROBE_REFUSALS: readonly number[] = [400, 404, 405];

/**
 * A server of an earlier revision (2025-11-25 and before) refusing the version probe
 * (`server/discover`): an error answer, or an HTTP 400/404/405 to its POST. Routine: the
 * client goes on with `initialize`, so it is marked expected and is not an error (a server
 * that then fails `initialize` is).
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

/**
 * The routine lines of `lines`: the version probe's refusals ({@linkcode isProbeFallback}),
 * and the 4xx answers to a handshake's POSTs that made patchbay fall back to SSE (those of
 * a server between its last state change and its `fallback` event).
 */
export function expectedLines(lines: readonly TraceLine[]): Map<TraceLine, string> {
  const expected = new Map<TraceLine, string>();
  const refusals = new Map<string, TraceLine[]>();
  for (const line of lines) {
    const server = line.server ?? "";
    if (isProbeFallback(line)) expected.set(line, PROBE_EXPECTED);
    else if (line.kind === "event" && line.event === "state") refusals.delete(server);
    else if (
      line.kind === "http" && line.method === "POST" && !line.request?.["mcp-session-id"] &&
      PROBE_REFUSALS.includes(line.status ?? 0)
    ) {
      refusals.set(server, [...refusals.get(server) ?? [], line]);
    } else if (line.kind === "event" && line.event === FALLBACK_EVENT) {
      for (const refusal of refusals.get(server) ?? []) expected.set(refusal, SSE_EXPECTED);
      refusals.delete(server);
    }
  }
  return expected;
}

/**
 * An error response, a failed exchange, an HTTP error status, a failed connection; not a
 * routine step (`expected`, of the whole trace; the version probe's refusal always is).
 */
export function isError(line: TraceLine, expected?: Expected): boolean {
  if (isProbeFallback(line) || expected?.has(line)) return false;
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

/** One line of the timeline; `expected`: the routine lines of its trace. */
export function formatLine(line: TraceLine, expected?: Expected): string {
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
        expectedMark(line, expected);
    }
    case "http": {
      const status = line.status !== undefined
        ? String(line.status)
        : `FAILED ${clean(line.failure, 100)}`;
      const session = line.response?.["mcp-session-id"] ?? line.request?.["mcp-session-id"];
      const extra = session ? `  session ${clean(session, 40)}` : "";
      const mark = isError(line, expected) ? "  ERROR" : expectedMark(line, expected);
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

/** What a routine line is marked with instead of `ERROR`. */
function expectedMark(line: TraceLine, expected?: Expected): string {
  const why = expected?.get(line) ?? (isProbeFallback(line) ? PROBE_EXPECTED : undefined);
  return why ? `  ${why}` : "";
}

/**
 * What `--errors` leaves out of `lines` as routine ({@linkcode expectedLines}), said so the
 * person is not left wondering; `undefined` when it leaves out nothing.
 */
export function expectedNote(
  lines: readonly TraceLine[],
  filter: TimelineFilter,
): string | undefined {
  if (!filter.errors) return undefined;
  const { errors: _errors, ...others } = filter;
  const left = [...expectedLines(lines)].filter(([line]) => matches(line, others));
  const probes = left.filter(([, why]) => why === PROBE_EXPECTED).length;
  const sse = left.length - probes;
  const refusals = (count: number) => `${count} expected ${count === 1 ? "refusal" : "refusals"}`;
  const parts = [
    ...(probes > 0
      ? [
        `${refusals(probes)} of the version probe: a server of an earlier revision answers ` +
        "server/discover with an error, and initialize follows",
      ]
      : []),
    ...(sse > 0
      ? [
        `${refusals(sse)} of streamable HTTP: a legacy SSE server refuses it, and patchbay ` +
        "falls back to SSE",
      ]
      : []),
  ];
  return parts.length > 0 ? `(not shown: ${parts.join("; ")})` : undefined;
}

/** The timeline of `lines`: those `filter` keeps, the last `last` of them when given. */
export function timeline(
  lines: readonly TraceLine[],
  filter: TimelineFilter = {},
  last?: number,
): string[] {
  const expected = expectedLines(lines);
  const kept = lines.filter((line) => matches(line, filter, expected));
  const shown = last !== undefined && last >= 0
    ? kept.slice(Math.max(0, kept.length - last))
    : kept;
  return shown.map((line) => formatLine(line, expected));
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
  const expected = expectedLines(lines);
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
    if (isError(line, expected)) group.errors++;
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
