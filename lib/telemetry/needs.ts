/**
 * What telemetry needs of the permission plan (docs/telemetry.md): Deno's exporter sends
 * it from outside the permission checks (measured: no --allow-net for the collector, no
 * --allow-env for its variables), so the client needs only to read the switch that tells
 * it Deno exports; the launcher learns what to set from the plan.
 *
 * @module
 */

import type { Config } from "../config/types.ts";
import type { NeedsSink } from "../deno_permission/needs.ts";
import type { Environment } from "../env.ts";
import { DENO_SWITCH, type TelemetryLaunch, telemetryLaunch } from "./settings.ts";

/** The plan's builder, which also carries what the launcher sets for telemetry. */
export interface TelemetrySink extends NeedsSink {
  telemetry(launch: TelemetryLaunch): void;
}

/** What {@linkcode telemetryNeeds} reads of the plan's inputs. */
export interface TelemetryNeedsInputs {
  config: Pick<Config, "telemetry" | "file">;
  env: Environment;
  envFile: string;
}

/** Adds the switch's variable and a note when the session exports telemetry. */
export function telemetryNeeds(plan: TelemetrySink, inputs: TelemetryNeedsInputs): void {
  const telemetry = telemetryLaunch(inputs.config, inputs.env, inputs.envFile);
  if (!telemetry) return;
  plan.add("env", DENO_SWITCH, "whether Deno exports telemetry (docs/telemetry.md)");
  plan.telemetry(telemetry);
  plan.note(
    `Telemetry (${telemetry.from}): Deno exports spans and metrics to ${telemetry.endpoint} ` +
      `(${telemetry.protocol}, service ${telemetry.serviceName}); the launcher starts the ` +
      `client with ${DENO_SWITCH}=true. Deno's exporter works outside the permission checks, ` +
      "so the collector needs no --allow-net.",
  );
}
