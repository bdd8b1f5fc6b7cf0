/**
 * Starting and stopping the session's wire trace (docs/trace.md), and what a person is told
 * about it; which file is chosen is `choice.ts`.
 *
 * @module
 */

import { dirname } from "node:path";
import type { Config } from "../config/types.ts";
import type { Environment } from "../env.ts";
import { denoPermissionFlag } from "../deno_permission/denial.ts";
import { compiledBinary } from "../deno_permission/launched.ts";
import { binaryRemedy } from "../deno_permission/remedy.ts";
import type { Redactor } from "../redact/redact.ts";
import { VERSION } from "../version.ts";
import { activeTrace, setActiveTrace } from "./active.ts";
import { TraceRecorder } from "./recorder.ts";
import { TraceFileRefusedError } from "./trace_file.ts";
import { chooseTrace, type TraceChoice, type TraceFlags } from "./choice.ts";

export { chooseTrace, TRACE_VARIABLE, type TraceChoice, type TraceFlags } from "./choice.ts";

/**
 * Starts recording `choice` as the session's trace, in place of the one being recorded (which
 * gets its last line). Returns the notice to show: that the trace is recorded, or why it
 * cannot be (the session goes on as it was: with the trace it had, or without one).
 */
export function startTrace(choice: TraceChoice, redactor: Redactor): string {
  let recorder: TraceRecorder;
  try {
    recorder = TraceRecorder.open(choice.file, {
      redactor,
      model: choice.model,
      modelBodies: choice.modelBodies,
      onWriteError: (error) => reporter(traceWriteNotice(choice.file, choice.from, error)),
    });
  } catch (error) {
    const going = activeTrace();
    return traceOpenNotice(
      choice.file,
      choice.from,
      error,
      going ? `the trace goes on in ${going.path}` : undefined,
    );
  }
  activeTrace()?.record({ kind: "event", event: "trace", state: "stopped" });
  setActiveTrace(recorder);
  recorder.record({ kind: "event", event: "trace", state: "started", version: VERSION });
  return `Recording the wire trace in ${choice.file} (${choice.from})`;
}

/**
 * Why a trace file could not be opened, and what to do. `goesOn` says what continues.
 * @default goesOn "the session goes on without a trace"
 */
export function traceOpenNotice(
  file: string,
  from: string,
  error: unknown,
  goesOn = "the session goes on without a trace",
): string {
  if (error instanceof TraceFileRefusedError) {
    const link = error.kind === "a symbolic link";
    return `Cannot write the trace file ${file} (${from}): it is ${error.kind}` +
      `${error.target ? ` to ${error.target}` : ""}, and a trace is written only to a regular ` +
      `file${link ? ", never through a link" : ""}; ${goesOn}. ` +
      `Name a regular file${link ? ", not a link" : ""} (one that does not exist yet is ` +
      "created).";
  }
  const flag = denoPermissionFlag(error);
  if (flag && from === "/trace") {
    // At the prompt the launcher has already chosen the grants: only a restart adds one.
    return `Cannot write the trace file ${file} (${from}): patchbay runs without Deno write ` +
      `permission there; ${goesOn}. /trace with no file records under patchbay's state ` +
      `folder, which is always allowed; for this file, start patchbay with --trace ${file} ` +
      `(the launcher grants the file it is given).`;
  }
  if (flag && compiledBinary()) {
    return `Cannot write the trace file ${file} (${from}): patchbay runs without Deno write ` +
      `permission there; ${goesOn}. For this file, ${binaryRemedy(flag)}.`;
  }
  if (flag) {
    return `Cannot write the trace file ${file} (${from}): patchbay runs without Deno write ` +
      `permission there; ${goesOn}. Start patchbay through its ` +
      `launcher (\`deno task start\` or the installed command), which grants the file it ` +
      `is given, or add ${flag} to the deno command.`;
  }
  if (error instanceof Deno.errors.NotFound) {
    return `Cannot write the trace file ${file} (${from}): its folder ${dirname(file)} does ` +
      `not exist; ${goesOn}. Create the folder, or name a file in one that exists.`;
  }
  return `Cannot write the trace file ${file} (${from}: ${(error as Error).message}); ` +
    `${goesOn}. Name a writable file.`;
}

/**
 * Why writing the trace `file` stopped (a full disk, an input/output error, the size this
 * process may write), and what to do: recording has stopped, the session goes on, and the
 * lines written before are kept.
 */
export function traceWriteNotice(file: string, from: string, error: Error): string {
  const os = /\(os error (\d+)\)/.exec(error.message)?.[1];
  const [cause, remedy] = os === "28" || os === "122"
    ? ["the disk is full", "Free some space"]
    : os === "27"
    ? ["the file passed the size this process may write (ulimit -f)", "Raise the limit"]
    : os === "5"
    ? ["the disk reported an input/output error", "Check the disk"]
    : [error.message, "Check the file and its disk"];
  return `Writing the trace file ${file} (${from}) stopped: ${cause} (${error.message}); ` +
    "recording has stopped and the session goes on; the lines written before are kept. " +
    `${remedy}, or record elsewhere (--trace FILE, or /trace FILE in the interactive client).`;
}

/** Where a trace that stops writing is reported (the surface sets it). */
let reporter: (notice: string) => void = () => {};

/**
 * Makes `report` the way a trace's write failure reaches the person (stderr for a command,
 * above the prompt in the interactive client, a JSON notice for `run --json`).
 */
export function reportTraceFailures(report: (notice: string) => void): void {
  reporter = report;
}

/** Ends the session's trace, if any, with a last line. */
export function stopTrace(): void {
  const recorder = activeTrace();
  if (!recorder) return;
  recorder.record({ kind: "event", event: "trace", state: "stopped" });
  setActiveTrace(undefined);
}

/** Starts the trace `options`, the environment and the configuration ask for, if any. */
export function startSessionTrace(
  options: TraceFlags,
  runtime: { env: Environment; config: Config; logger: { redactor: Redactor } },
): string | undefined {
  const choice = chooseTrace(options, runtime.env, runtime.config);
  return choice && startTrace(choice, runtime.logger.redactor);
}
