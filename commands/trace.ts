/**
 * `patchbay trace show FILE` and `patchbay trace stats FILE`: a recorded wire trace read
 * back as a timeline or as figures per server and method (docs/trace.md). Older
 * generations the rotation kept (`FILE.2`, `FILE.1`) are read first, oldest first.
 *
 * @module
 */

import { DEFAULTS } from "../lib/defaults.ts";
import { EXIT, PatchbayError, UsageError } from "../lib/errors.ts";
import { safeJson } from "../lib/text/json_text.ts";
import type { TraceLine } from "../lib/trace/record.ts";
import { expectedNote, parseTrace, stats, statsTable, timeline } from "../lib/trace/timeline.ts";
import { readBoundedText } from "../lib/files/bounded_read.ts";
import { USAGE_STEPS } from "../lib/errors/usage_steps.ts";

/** Options of `trace show`. */
export interface TraceShowOptions {
  server?: string;
  method?: string;
  errors?: boolean;
  /** Only the last n lines shown, as typed (checked here, so the error shows it). */
  last?: string;
}

/** Options of `trace stats`. */
export interface TraceStatsOptions {
  json?: boolean;
}

/**
 * How a trace file is read: a regular file, and no larger than a rotation lets one grow
 * (one message past the threshold, kept to `maxMessageChars`), with room to spare.
 */
const TRACE_BOUND = {
  what: "the trace file",
  maxBytes: 2 * DEFAULTS.trace.rotateBytes,
  code: "usage" as const,
};

/** The lines of a trace and its older generations, and how many were no trace lines. */
export interface TraceFiles {
  lines: TraceLine[];
  /** Lines skipped: not JSON, or not of a trace line's shape (`lib/trace/line_shape.ts`). */
  skipped: number;
}

/** The lines of `file` and of the older generations beside it, oldest first. */
export async function readTraceFiles(file: string): Promise<TraceFiles> {
  const lines: TraceLine[] = [];
  let skipped = 0;
  for (let i = DEFAULTS.trace.files - 1; i >= 1; i--) {
    let text: string;
    try {
      text = await readBoundedText(`${file}.${i}`, TRACE_BOUND);
    } catch {
      continue; // That generation does not exist (or cannot be read): the newer ones tell.
    }
    const read = parseTrace(text);
    lines.push(...read.lines);
    skipped += read.skipped;
  }
  let text: string;
  try {
    text = await readBoundedText(file, TRACE_BOUND);
  } catch (error) {
    if (error instanceof PatchbayError) throw error;
    const missing = error instanceof Deno.errors.NotFound;
    throw new PatchbayError("usage", `Cannot read the trace file ${file}`, {
      reason: missing ? "there is no file at that path" : (error as Error).message,
      remedy: missing
        ? "record one first: `patchbay --trace FILE …`, PATCHBAY_TRACE=FILE, or /trace in " +
          "the interactive client; then name that file"
        : "check the path and that you may read the file",
      exitCode: EXIT.failure,
      cause: error,
    });
  }
  const read = parseTrace(text);
  lines.push(...read.lines);
  return { lines, skipped: skipped + read.skipped };
}

/**
 * Says on stderr how many lines were skipped, so a timeline or a table made of the others
 * is not taken for the whole trace.
 */
function reportSkipped(file: string, skipped: number): void {
  if (skipped === 0) return;
  console.error(
    `${skipped} line${skipped === 1 ? " of" : "s of"} ${file} ${skipped === 1 ? "was" : "were"} ` +
      "skipped: not a trace line (not JSON, cut off, or a field of the wrong type such as " +
      '"t": 5); the rest is shown',
  );
}

/** Prints the timeline of `file`. */
export async function traceShow(file: string, options: TraceShowOptions): Promise<number> {
  if (options.last !== undefined && !/^\d+$/.test(options.last.trim())) {
    throw new UsageError(
      `--last must be a whole number of lines, not '${options.last}'`,
      USAGE_STEPS.traceLast,
    );
  }
  const last = options.last === undefined ? undefined : Number(options.last);
  const { lines, skipped } = await readTraceFiles(file);
  reportSkipped(file, skipped);
  const filter = { server: options.server, method: options.method, errors: options.errors };
  const shown = timeline(lines, filter, last);
  const note = expectedNote(lines, filter);
  if (shown.length === 0) {
    console.error(
      lines.length === 0
        ? `${file} holds no trace lines`
        : `no line of ${file} matches (${lines.length} lines in all)`,
    );
    if (note) console.error(note);
    return EXIT.ok;
  }
  console.log(shown.join("\n"));
  if (note) console.error(note);
  return EXIT.ok;
}

/** Prints the figures of `file` per server and method. */
export async function traceStats(file: string, options: TraceStatsOptions): Promise<number> {
  const { lines, skipped } = await readTraceFiles(file);
  reportSkipped(file, skipped);
  const rows = stats(lines);
  if (options.json) {
    // Server and method names are the servers' own: no control or bidi character raw.
    console.log(safeJson(rows, 2));
    return EXIT.ok;
  }
  if (rows.length === 0) {
    console.error(`${file} holds no JSON-RPC messages`);
    return EXIT.ok;
  }
  console.log(statsTable(rows).join("\n"));
  return EXIT.ok;
}
