/**
 * The variables the launcher starts the client with when telemetry is on (the plan's
 * `telemetry`, `settings.ts`): Deno's exporter reads them from the process environment as
 * the process starts, and only for the client process (the launcher and the plan's
 * computation export nothing).
 *
 * - `OTEL_DENO=true`, and the endpoint, protocol and service name the plan names;
 * - `OTEL_DENO_CONSOLE=ignore`: what patchbay prints (answers, tool results) never becomes
 *   an OpenTelemetry log;
 * - a parent-based sampler (the person's choice kept, made parent-based), so that a request
 *   run under an unsampled parent (`Telemetry.guardFetch`) is not exported by Deno;
 * - `service.version` added to `OTEL_RESOURCE_ATTRIBUTES`;
 * - `OTEL_EXPORTER_OTLP_TIMEOUT` bounded (`DEFAULTS.telemetry.exportTimeoutSeconds`), unless
 *   the person set it: Deno waits that long for a collector that does not answer at exit;
 * - `OTEL_EXPORTER_OTLP_HEADERS` from `Telemetry.headers`, each `${VAR}` expanded here from
 *   the environment and the .env file, so the plan the launcher remembers holds no
 *   credential; or the .env file's own `OTEL_EXPORTER_OTLP_HEADERS`.
 *
 * Loaded by the launcher only when the plan has telemetry; no npm imports.
 *
 * @module
 */

import { MAX_ENV_FILE_BYTES, readBoundedTextSync } from "../files/bounded_read.ts";
import { expandVariables } from "../config/expand.ts";
import { DEFAULTS } from "../defaults.ts";
import { parseDotenv } from "../env.ts";
import { VERSION } from "../version.ts";
import { DENO_SWITCH, HEADERS_VARIABLE } from "./settings.ts";

/** The plan's `telemetry`, as `patchbay permissions --json` prints it. */
export interface PrintedTelemetry {
  from: string;
  endpoint: string;
  protocol: string;
  service_name: string;
  variables: Record<string, string>;
  /** `Telemetry.headers` as written (`${VAR}`s unexpanded). */
  headers?: Record<string, string>;
  env_file: string;
}

const TIMEOUT_VARIABLE = "OTEL_EXPORTER_OTLP_TIMEOUT";

/** Samplers of `OTEL_TRACES_SAMPLER` and the parent-based one each becomes. */
const PARENT_BASED: Readonly<Record<string, string>> = {
  always_on: "parentbased_always_on",
  traceidratio: "parentbased_traceidratio",
  always_off: "always_off",
};

/** Where the launcher reads variables. */
export interface LaunchEnvSources {
  /** @default Deno.env.get */
  process?: (name: string) => string | undefined;
  /** The .env file's text. @default read from `telemetry.env_file`, none if unreadable */
  envFileText?: () => string | undefined;
}

/** The variables to start the client with for `telemetry`. */
export function clientTelemetryEnv(
  telemetry: PrintedTelemetry,
  sources: LaunchEnvSources = {},
): Record<string, string> {
  const fromProcess = sources.process ?? ((name: string) => Deno.env.get(name));
  let dotenv: Map<string, string> | undefined;
  const fromFile = (name: string) => {
    dotenv ??= parseDotenv(
      (sources.envFileText ?? (() => readEnvFile(telemetry.env_file)))() ?? "",
    ).values;
    return dotenv.get(name);
  };
  const env: Record<string, string> = {
    ...telemetry.variables,
    [DENO_SWITCH]: "true",
    OTEL_DENO_CONSOLE: "ignore",
  };
  const sampler = fromProcess("OTEL_TRACES_SAMPLER")?.trim();
  env.OTEL_TRACES_SAMPLER = sampler ? PARENT_BASED[sampler] ?? sampler : "parentbased_always_on";
  if (fromProcess(TIMEOUT_VARIABLE) === undefined) {
    env[TIMEOUT_VARIABLE] = String(DEFAULTS.telemetry.exportTimeoutSeconds * 1000);
  }
  const resource = telemetry.variables.OTEL_RESOURCE_ATTRIBUTES ??
    fromProcess("OTEL_RESOURCE_ATTRIBUTES") ?? "";
  env.OTEL_RESOURCE_ATTRIBUTES = /(?:^|,)\s*service\.version\s*=/.test(resource)
    ? resource
    : [resource, `service.version=${VERSION}`].filter((part) => part.trim() !== "").join(",");
  if (telemetry.headers) {
    const lookup = (name: string) => fromProcess(name) ?? fromFile(name);
    env[HEADERS_VARIABLE] = Object.entries(telemetry.headers)
      .map(([name, value]) => `${name}=${encodeURIComponent(expandVariables(value, lookup).value)}`)
      .join(",");
  } else if (fromProcess(HEADERS_VARIABLE) === undefined) {
    const value = fromFile(HEADERS_VARIABLE);
    if (value !== undefined) env[HEADERS_VARIABLE] = value;
  }
  return env;
}

function readEnvFile(path: string): string | undefined {
  try {
    return readBoundedTextSync(path, {
      what: "the environment file",
      maxBytes: MAX_ENV_FILE_BYTES,
    });
  } catch {
    return undefined; // No .env (or an unreadable one: the client says why).
  }
}
