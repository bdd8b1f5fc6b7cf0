/**
 * The launcher's side of telemetry: the variables it starts the client with when the plan
 * has telemetry. The module that computes them (`launch_env.ts`) is loaded only then, so a
 * launch without telemetry loads nothing more.
 *
 * @module
 */

import type { PrintedTelemetry } from "./launch_env.ts";

export type { PrintedTelemetry } from "./launch_env.ts";

/** The variables that turn Deno's exporter on for the client; none without telemetry. */
export async function telemetryEnv(
  telemetry: PrintedTelemetry | null | undefined,
): Promise<Record<string, string>> {
  if (!telemetry) return {};
  const { clientTelemetryEnv } = await import("./launch_env.ts");
  return clientTelemetryEnv(telemetry);
}
