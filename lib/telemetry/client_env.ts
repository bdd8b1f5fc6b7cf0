/**
 * The launcher's side of telemetry: the variables it starts the client with when the plan
 * has telemetry. The module that computes them (`launch_env.ts`) is loaded only then, so a
 * launch without telemetry loads nothing more.
 *
 * @module
 */

import { DEFAULTS } from "../defaults.ts";
import type { PrintedTelemetry } from "./launch_env.ts";
import { DENO_SWITCH, ENDPOINT_VARIABLES, SDK_DISABLED } from "./settings.ts";

export type { PrintedTelemetry } from "./launch_env.ts";

/** The variables that turn Deno's exporter on for the client; none without telemetry. */
export async function telemetryEnv(
  telemetry: PrintedTelemetry | null | undefined,
): Promise<Record<string, string>> {
  if (!telemetry) return {};
  const { clientTelemetryEnv } = await import("./launch_env.ts");
  return clientTelemetryEnv(telemetry);
}

/**
 * Telemetry as the process environment alone asks for it (`--unrestricted`, which computes
 * no plan): an endpoint variable or `OTEL_DENO=true`; the `Telemetry` section needs the plan.
 */
export function fromEnvironment(
  get: (name: string) => string | undefined = (name) => Deno.env.get(name),
): PrintedTelemetry | null {
  const on = (name: string) => get(name)?.trim().toLowerCase() === "true";
  const endpoint = ENDPOINT_VARIABLES.map(get).find((value) => value);
  if (on(SDK_DISABLED) || (!endpoint && !on(DENO_SWITCH))) return null;
  return {
    from: "the environment",
    endpoint: endpoint ?? DEFAULTS.telemetry.endpoint,
    protocol: get("OTEL_EXPORTER_OTLP_PROTOCOL") ?? DEFAULTS.telemetry.protocol,
    service_name: get("OTEL_SERVICE_NAME") ?? DEFAULTS.telemetry.serviceName,
    variables: get("OTEL_SERVICE_NAME")
      ? {}
      : { OTEL_SERVICE_NAME: DEFAULTS.telemetry.serviceName },
    // No .env: the process's own variables are inherited as they are.
    env_file: "",
  };
}
