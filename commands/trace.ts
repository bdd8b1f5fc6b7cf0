/**
 * `patchbay trace show FILE` and `patchbay trace stats FILE`: a recorded wire trace read
 * back as a timeline or as figures per server and method (docs/trace.md). Older
 * generations the rotation kept (`FILE.2`, `FILE.1`) are read first, oldest first.
 *
 * @module
 */

import { DEFAULTS } from "../lib/defaults.ts";
import { EXIT, PatchbayError, UsageError } from "../lib/errors.ts";
import type { TraceLine } from "../lib/trace/record.ts";
import { expectedNote, parseTrace, stats, statsTable, timeline } from "../lib/trace/timeline.ts";

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

/** The lines of `file` and of the older generations beside it, oldest first. */
export async function readTraceFiles(file: string): Promise<TraceLine[]> {
  const lines: TraceLine[] = [];
  for (let i = DEFAULTS.trace.files - 1; i >= 1; i--) {
    try {
      lines.push(...parseTrace(await Deno.readTextFile(`${file}.${i}`)).lines);
    } catch {
      // That generation does not exist (or cannot be read): the newer ones still tell.
    }
  }
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (error) {
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
  return lines;
}

/** Prints the timeline of `file`. */
export async function traceShow(file: string, options: TraceShowOptions): Promise<number> {
  if (options.last !== undefined && !/^\d+$/.test(options.last.trim())) {
    throw new UsageError(
      `--last must be a whole number of lines, not '${options.last}'`,
      "e.g. patchbay trace show trace.jsonl --last 50",
    );
  }
  const last = options.last === undefined ? undefined : Number(options.last);
  const lines = await readTraceFiles(file);
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
  const rows = stats(await readTraceFiles(file));
  if (options.json) {
    console.log(JSON.stringify(rows, null, 2));
    return EXIT.ok;
  }
  if (rows.length === 0) {
    console.error(`${file} holds no JSON-RPC messages`);
    return EXIT.ok;
  }
  console.log(statsTable(rows).join("\n"));
  return EXIT.ok;
}
