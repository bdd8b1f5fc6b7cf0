/**
 * Turns the session's telemetry on when Deno exports it: the launcher started the client
 * with `OTEL_DENO=true` (docs/telemetry.md), or the person did under `deno run`. Only then
 * is the exporting implementation, and `npm:@opentelemetry/api` with it, loaded; otherwise
 * this costs one permission query.
 *
 * @module
 */

import type { Config } from "../config/types.ts";
import type { Redactor } from "../redact/redact.ts";
import { DENO_SWITCH } from "./settings.ts";
import { activeTelemetry, setActiveTelemetry } from "./telemetry.ts";

/**
 * Whether Deno exports OpenTelemetry data in this process: `OTEL_DENO` is `true` (read
 * only where this process may read it, so a client the plan did not grant it to stays off
 * without a denial).
 */
export function denoExports(): boolean {
  try {
    if (Deno.permissions.querySync({ name: "env", variable: DENO_SWITCH }).state !== "granted") {
      return false;
    }
    return Deno.env.get(DENO_SWITCH)?.trim().toLowerCase() === "true";
  } catch {
    return false;
  }
}

/** Starts exporting when Deno does; a no-op otherwise, and when already started. */
export async function startTelemetry(
  config: Pick<Config, "telemetry">,
  redactor: Redactor,
): Promise<void> {
  if (activeTelemetry().exporting || !denoExports()) return;
  const { OtelTelemetry } = await import("./otel.ts");
  setActiveTelemetry(
    new OtelTelemetry({ redactor, captureContent: config.telemetry?.captureContent }),
  );
}
