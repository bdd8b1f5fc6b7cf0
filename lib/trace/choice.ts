/**
 * Which wire trace a session records (docs/trace.md): `--trace FILE` wins, then the
 * `PATCHBAY_TRACE` variable (process environment or .env), then the configuration's
 * `Trace.file` (relative to the configuration file's folder). Model requests are included
 * with `--trace-model` or `Trace.model`. No npm import: the permission plan reads it.
 *
 * @module
 */

import { dirname, resolve } from "node:path";
import type { Config } from "../config/types.ts";
import type { Environment } from "../env.ts";

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
  from: "--trace" | typeof TRACE_VARIABLE | "Trace.file" | "/trace";
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
