/**
 * Whether a session exports telemetry, and what the launcher must set for the client so
 * that Deno's own OpenTelemetry exporter does it (docs/telemetry.md). Telemetry is on when
 * the configuration has a `Telemetry` section, or the environment (process or .env) names
 * an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or a signal's own), or asks for Deno's
 * exporter itself (`OTEL_DENO=true`); `OTEL_SDK_DISABLED=true` keeps it off whatever else
 * says. A field of the section wins over its variable.
 *
 * Pure: the launcher reads the result from the plan (`patchbay permissions --json`), the
 * plan and `patchbay permissions` show it.
 *
 * @module
 */

import type { Config } from "../config/types.ts";
import { DEFAULTS } from "../defaults.ts";
import type { Environment } from "../env.ts";

/** Variables that name where OTLP data goes. */
export const ENDPOINT_VARIABLES = [
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
] as const;

/** The variable that switches Deno's exporter on, and the one that switches every SDK off. */
export const DENO_SWITCH = "OTEL_DENO";
export const SDK_DISABLED = "OTEL_SDK_DISABLED";
export const HEADERS_VARIABLE = "OTEL_EXPORTER_OTLP_HEADERS";

/**
 * The variables whose values decide telemetry, recorded with a remembered plan so that
 * setting one is in effect at the next start. Never the headers: they hold credentials.
 */
export const DECIDING_VARIABLES: readonly string[] = [
  ...ENDPOINT_VARIABLES,
  DENO_SWITCH,
  SDK_DISABLED,
  "OTEL_EXPORTER_OTLP_PROTOCOL",
  "OTEL_SERVICE_NAME",
];

/** What a session's telemetry is, when it is on. */
export interface TelemetryLaunch {
  /** What turned it on, for the listing (`Telemetry in …`, `OTEL_EXPORTER_OTLP_ENDPOINT`). */
  from: string;
  /** Where Deno sends it (the OTLP/HTTP base; Deno appends /v1/traces, /v1/metrics). */
  endpoint: string;
  protocol: string;
  serviceName: string;
  /** Variables the launcher sets for the client, as they are (nothing secret). */
  variables: Record<string, string>;
  /**
   * `Telemetry.headers` as written: each value's `${VAR}`s are expanded by the launcher
   * from its environment and the .env file, so no credential is kept with the plan.
   */
  headers?: Record<string, string>;
  /** The .env file (absolute) the launcher reads `${VAR}`s and OTEL_EXPORTER_OTLP_HEADERS from. */
  envFile: string;
}

/** The session's telemetry as the configuration and the environment ask for it. */
export function telemetryLaunch(
  config: Pick<Config, "telemetry" | "file">,
  env: Environment,
  envFile: string = env.file.path,
): TelemetryLaunch | undefined {
  if (isTrue(env.get(SDK_DISABLED))) return undefined;
  const section = config.telemetry;
  const endpointVariable = ENDPOINT_VARIABLES.find((name) => env.get(name));
  if (!section && !endpointVariable && !isTrue(env.get(DENO_SWITCH))) return undefined;
  const from = section ? `Telemetry in ${config.file}` : endpointVariable ?? `${DENO_SWITCH}=true`;
  const variables: Record<string, string> = {};
  const fromEnv = (name: string) => {
    const value = env.get(name);
    if (value !== undefined) variables[name] = value;
    return value;
  };
  // Every variable that can come from .env is handed on: Deno reads only the process's.
  for (const name of [...ENDPOINT_VARIABLES, "OTEL_RESOURCE_ATTRIBUTES"]) fromEnv(name);
  const endpoint = section?.endpoint ?? variables[ENDPOINT_VARIABLES[0]] ??
    (endpointVariable && variables[endpointVariable]) ?? DEFAULTS.telemetry.endpoint;
  if (section?.endpoint) variables[ENDPOINT_VARIABLES[0]] = section.endpoint;
  const protocol = section?.protocol ?? fromEnv("OTEL_EXPORTER_OTLP_PROTOCOL") ??
    DEFAULTS.telemetry.protocol;
  variables.OTEL_EXPORTER_OTLP_PROTOCOL = protocol;
  const serviceName = section?.serviceName ?? fromEnv("OTEL_SERVICE_NAME") ??
    DEFAULTS.telemetry.serviceName;
  variables.OTEL_SERVICE_NAME = serviceName;
  const headers = section && Object.keys(section.headers).length > 0
    ? { ...section.headers }
    : undefined;
  return {
    from,
    endpoint,
    protocol,
    serviceName,
    variables,
    ...(headers ? { headers } : {}),
    envFile,
  };
}

function isTrue(value: string | undefined): boolean {
  return value?.trim().toLowerCase() === "true";
}
