/**
 * Which wire trace a session records, and starting it: `--trace FILE` wins, then the
 * `PATCHBAY_TRACE` variable (process environment or .env), then the configuration's
 * `Trace.file` (relative to the configuration file's folder). Model requests are included
 * with `--trace-model` or `Trace.model`. See docs/trace.md.
 *
 * @module
 */

import { dirname, resolve } from "node:path";
import type { Config } from "../config/types.ts";
import type { Environment } from "../env.ts";
import { denoPermissionFlag } from "../permissions/denial.ts";
import type { Redactor } from "../redact.ts";
import { VERSION } from "../version.ts";
import { activeTrace, setActiveTrace } from "./active.ts";
import { TraceRecorder } from "./recorder.ts";

/** The variable naming a trace file. */
export const TRACE_VARIABLE = "PATCHBAY_TRACE";

/** The command-line side of the choice. */
export interface TraceFlags {
  /** `--trace FILE`. */
  trace?: string;
  /** `--trace-model`. */
  traceModel?: boolean;
}

/** The trace a session asks for: an absolute path, and whether model requests go in. */
export interface TraceChoice {
  file: string;
  /** Where the choice came from, for messages. */
  from: "--trace" | typeof TRACE_VARIABLE | "Trace.file";
  model: boolean;
  modelBodies: boolean;
}

/** The trace `flags`, `env` and `config` ask for, or `undefined` for none. */
export function chooseTrace(
  flags: TraceFlags,
  env: Pick<Environment, "get">,
  config: Pick<Config, "file" | "trace">,
  cwd: string = Deno.cwd(),
): TraceChoice | undefined {
  const model = flags.traceModel === true || config.trace?.model === true;
  const modelBodies = config.trace?.modelBodies === true;
  if (flags.trace) return { file: resolve(cwd, flags.trace), from: "--trace", model, modelBodies };
  const variable = readVariable(env);
  if (variable) {
    return { file: resolve(cwd, variable), from: TRACE_VARIABLE, model, modelBodies };
  }
  if (config.trace) {
    const file = resolve(dirname(resolve(cwd, config.file)), config.trace.file);
    return { file, from: "Trace.file", model, modelBodies };
  }
  return undefined;
}

function readVariable(env: Pick<Environment, "get">): string | undefined {
  try {
    return env.get(TRACE_VARIABLE) || undefined;
  } catch {
    return undefined; // Not granted: the plan grants it, so this is a hand-made flag set.
  }
}

/**
 * Starts recording `choice` as the session's trace. Returns the notice to show: that the
 * trace is recorded, or why it cannot be (the session goes on without it).
 */
export function startTrace(choice: TraceChoice, redactor: Redactor): string {
  let recorder: TraceRecorder;
  try {
    recorder = TraceRecorder.open(choice.file, { redactor, model: choice.model });
  } catch (error) {
    return traceOpenNotice(choice.file, choice.from, error);
  }
  setActiveTrace(recorder);
  recorder.record({ kind: "event", event: "trace", state: "started", version: VERSION });
  return `Recording the wire trace in ${choice.file} (${choice.from})`;
}

/** Why a trace file could not be opened, and what to do. */
export function traceOpenNotice(file: string, from: string, error: unknown): string {
  const flag = denoPermissionFlag(error);
  if (flag) {
    return `Cannot write the trace file ${file} (${from}): patchbay runs without Deno write ` +
      `permission there; the session goes on without a trace. Start patchbay through its ` +
      `launcher (\`deno task start\` or the installed command), which grants the file it ` +
      `is given, or add ${flag} to the deno command.`;
  }
  return `Cannot write the trace file ${file} (${from}: ${(error as Error).message}); the ` +
    "session goes on without a trace. Name a writable file.";
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
