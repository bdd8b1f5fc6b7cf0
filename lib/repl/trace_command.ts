/**
 * `/trace`: the wire trace from the prompt (docs/trace.md). `/trace` turns recording on
 * (the file it names, else the session's last one, else a new file under patchbay's state
 * folder) or off; `/trace show [server] [n]` prints the last messages as a timeline.
 *
 * @module
 */

import { join, resolve } from "node:path";
import { stateDir } from "../paths.ts";
import { activeTrace } from "../trace/active.ts";
import type { TraceRecorder } from "../trace/recorder.ts";
import { startTrace, stopTrace } from "../trace/start.ts";
import { timeline } from "../trace/timeline.ts";
import type { ClientSession } from "../session/client_session.ts";
import type { SlashCommand } from "./slash.ts";
import { unknownServer } from "./unknown_server.ts";

/** Lines `/trace show` prints when not told how many. */
export const TRACE_SHOW_LINES = 20;

/** The recorder stopped last, so `/trace show` still has its lines after `/trace off`. */
let stopped: TraceRecorder | undefined;

/** A new trace file's path under patchbay's state folder (writable under the plan). */
function defaultTraceFile(): string {
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  return join(stateDir(), "traces", `trace-${stamp}.jsonl`);
}

function say(s: ClientSession, text: string): void {
  s.output.out(`${text}\n`);
}

function off(s: ClientSession): void {
  const recorder = activeTrace();
  if (!recorder) {
    say(s, "The wire trace is off.");
    return;
  }
  stopTrace();
  stopped = recorder;
  say(s, `Wire trace off (${recorder.lines} lines in ${recorder.path}).`);
}

function on(s: ClientSession, file: string | undefined): void {
  const path = file ? resolve(file) : stopped?.path ?? defaultTraceFile();
  const current = activeTrace();
  if (current?.path === path) {
    say(s, `The wire trace is already being recorded in ${path}.`);
    return;
  }
  // The trace being recorded goes on until the new file is open: a file that cannot be
  // written loses nothing.
  const notice = startTrace(
    {
      file: path,
      from: "/trace",
      // What --trace-model / Trace.model chose holds for every trace of the session.
      model: (current ?? stopped)?.model ?? false,
      modelBodies: (current ?? stopped)?.modelBodies ?? false,
    },
    s.runtime.logger.redactor,
  );
  if (activeTrace() === current) {
    s.output.err(`${notice}\n`);
    return;
  }
  if (current) {
    stopped = current;
    say(s, `Wire trace off (${current.lines} lines in ${current.path}).`);
  }
  say(s, `${notice.replace(" (/trace)", "")}; /trace again stops it.`);
}

function show(s: ClientSession, args: string[]): void {
  let server: string | undefined;
  let count = TRACE_SHOW_LINES;
  for (const word of args) {
    if (/^\d+$/.test(word)) count = Number(word);
    else server = word;
  }
  if (server !== undefined && !s.manager.states().some((st) => st.name === server)) {
    throw unknownServer(server, s.manager.states().map((st) => st.name));
  }
  const recorder = activeTrace() ?? stopped;
  if (!recorder) {
    say(s, "No wire trace in this session: /trace starts one (or start with --trace FILE).");
    return;
  }
  const lines = timeline(
    recorder.recent().filter((line) => line.kind !== "event" || line.event !== "trace"),
    { server },
    count,
  );
  if (lines.length === 0) {
    say(s, server ? `No trace lines of ${server} yet.` : "No trace lines yet.");
    return;
  }
  say(s, lines.join("\n"));
  say(s, s.style.dim(`trace file ${recorder.path}${activeTrace() ? "" : " (recording is off)"}`));
  if (recorder.writeError) {
    s.output.err(
      `Writing the trace stopped: ${recorder.writeError.message}; the lines above are the ` +
        "last ones kept in memory. Free some space, or /trace off then /trace with another file.\n",
    );
  }
}

/** The `/trace` slash command. */
export const traceCommand: SlashCommand<ClientSession> = {
  name: "trace",
  usage: "[on [file] | off | show [server] [n]]",
  summary: "record every message to and from every server in a file, or show the last ones",
  // The registry filters and replaces the word being typed, so each candidate is one word.
  complete: (s, partial) => {
    const words = partial.split(/\s+/);
    if (words.length <= 1) return ["on", "off", "show"];
    return words[0] === "show" && words.length === 2 ? s.manager.states().map((st) => st.name) : [];
  },
  run(s, args) {
    const words = args.split(/\s+/).filter((word) => word !== "");
    switch (words[0]) {
      case undefined:
        if (activeTrace()) off(s);
        else on(s, undefined);
        break;
      case "on":
        on(s, words[1]);
        break;
      case "off":
        off(s);
        break;
      case "show":
        show(s, words.slice(1));
        break;
      default:
        on(s, args);
    }
    return Promise.resolve();
  },
};

/**
 * The `/status` row of the wire trace: recording or not, where, how much, and the model's
 * traffic with it when `--trace-model` asked for it.
 */
export function traceStatus(): string {
  const recorder = activeTrace();
  if (!recorder) {
    return stopped
      ? `off (the last one is ${stopped.path}; /trace records again)`
      : "off (/trace or --trace FILE records one)";
  }
  const model = recorder.model ? ", the model's requests too" : "";
  const failed = recorder.writeError ? `; writing stopped: ${recorder.writeError.message}` : "";
  return `on: ${recorder.lines.toLocaleString("en-US")} lines in ${recorder.path}${model}${failed}`;
}
