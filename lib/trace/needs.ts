/**
 * What the wire trace needs of the permission plan (docs/trace.md): the variable that can
 * name its file, and the file with its older generations when a trace is chosen.
 *
 * @module
 */

import type { Config } from "../config/types.ts";
import { DEFAULTS } from "../defaults.ts";
import type { NeedsSink } from "../deno_permission/needs.ts";
import type { Environment } from "../env.ts";
import { chooseTrace, TRACE_VARIABLE } from "./choice.ts";

/** What {@linkcode traceNeeds} reads of the plan's inputs. */
export interface TraceNeedsInputs {
  config: Config;
  env: Environment;
  cwd: string;
  /** `--trace FILE`, absolute. */
  traceFile?: string;
}

/** Adds the trace variable, and the trace's files when one is chosen. */
export function traceNeeds(plan: NeedsSink, inputs: TraceNeedsInputs): void {
  plan.add("env", TRACE_VARIABLE, "names a wire trace file (docs/trace.md)");
  const choice = chooseTrace({ trace: inputs.traceFile }, inputs.env, inputs.config, inputs.cwd);
  if (!choice) return;
  const what = `the wire trace (${choice.from})`;
  plan.add("read", choice.file, what);
  plan.add("write", choice.file, what);
  // Rotation renames it to .1, .2, …; `patchbay trace show` reads them back.
  for (let i = 1; i < DEFAULTS.trace.files; i++) {
    plan.add("read", `${choice.file}.${i}`, "the wire trace's older generations");
    plan.add("write", `${choice.file}.${i}`, "the wire trace's older generations");
  }
}
