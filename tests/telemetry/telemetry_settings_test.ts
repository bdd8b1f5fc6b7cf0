/**
 * What turns telemetry on (the `Telemetry` section, OTEL_* variables in the process or
 * .env), the section's rules, and the variables the launcher starts the client with
 * (headers expanded from the environment and .env at launch, never kept with the plan).
 */

import assert from "node:assert/strict";
import { parseConfig } from "../../lib/config/load.ts";
import type { Config } from "../../lib/config/types.ts";
import { createEnvironment } from "../../lib/env.ts";
import { ConfigValidationError } from "../../lib/errors.ts";
import { type PermissionInputs, planPermissions } from "../../lib/permissions/plan.ts";
import { clientTelemetryEnv, type PrintedTelemetry } from "../../lib/telemetry/launch_env.ts";
import { fromEnvironment } from "../../lib/telemetry/client_env.ts";
import { telemetryLaunch } from "../../lib/telemetry/settings.ts";
import { VERSION } from "../../lib/version.ts";

const LLM = { provider: "openai", model: "gpt-4o-mini" };

function config(telemetry?: unknown, env = createEnvironment({ OTEL_TOKEN: "tok-123456" })) {
  return parseConfig(
    JSON.stringify({ LLM, mcpServers: {}, ...(telemetry ? { Telemetry: telemetry } : {}) }),
    "/p/servers_config.json",
    env,
  );
}

function problems(telemetry: unknown): string[] {
  try {
    config(telemetry, createEnvironment({}));
  } catch (error) {
    assert.ok(error instanceof ConfigValidationError, String(error));
    return error.problems.map((p) => p.message);
  }
  assert.fail("accepted");
}

Deno.test("Telemetry section: defaults, headers kept as written (their values secrets), faults named", () => {
  const parsed = config({
    endpoint: "http://collector:4318",
    headers: { Authorization: "Bearer ${OTEL_TOKEN}" },
  });
  assert.deepEqual(parsed.telemetry, {
    endpoint: "http://collector:4318",
    headers: { Authorization: "Bearer ${OTEL_TOKEN}" },
    captureContent: false,
  });
  assert.ok(parsed.secretValues?.includes("tok-123456"), "a header's ${VAR} value is masked");
  assert.equal(config().telemetry, undefined);
  assert.match(
    problems({ protocol: "grpc" }).join("\n"),
    /"http\/protobuf", "http\/json", got .*"grpc"/,
  );
  assert.match(problems({ endpoint: "collector:4318" }).join("\n"), /not an http\(s\) URL/);
  assert.match(problems({ headers: { A: "${UNSET_TOKEN}" } }).join("\n"), /UNSET_TOKEN is not set/);
  assert.match(problems({ sample: true }).join("\n"), /sample/);
});

const env = (process: Record<string, string>, file: Record<string, string> = {}) =>
  createEnvironment(process, new Map(Object.entries(file)), {
    path: "/p/.env",
    loaded: true,
    count: 0,
    problems: [],
  });

const plain = { file: "/p/servers_config.json" } as Pick<Config, "telemetry" | "file">;

Deno.test("telemetry is on for the section, an endpoint variable (process or .env), or OTEL_DENO", () => {
  assert.equal(telemetryLaunch(plain, env({})), undefined);
  const fromEnv = telemetryLaunch(
    plain,
    env({}, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }),
  )!;
  assert.equal(fromEnv.from, "OTEL_EXPORTER_OTLP_ENDPOINT");
  assert.equal(fromEnv.endpoint, "http://c:4318");
  // Handed on: Deno reads only the process's variables, not .env's.
  assert.equal(fromEnv.variables.OTEL_EXPORTER_OTLP_ENDPOINT, "http://c:4318");
  assert.equal(fromEnv.variables.OTEL_SERVICE_NAME, "patchbay");
  assert.equal(fromEnv.variables.OTEL_EXPORTER_OTLP_PROTOCOL, "http/protobuf");
  assert.equal(fromEnv.envFile, "/p/.env");
  const deno = telemetryLaunch(plain, env({ OTEL_DENO: "true" }))!;
  assert.equal(deno.endpoint, "http://localhost:4318");
  const section = telemetryLaunch(
    {
      ...plain,
      telemetry: {
        endpoint: "http://section:4318",
        protocol: "http/json",
        serviceName: "svc",
        headers: { "X-Key": "${K}" },
        captureContent: false,
      },
    },
    env({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://env:4318", OTEL_SERVICE_NAME: "env-svc" }),
  )!;
  assert.equal(section.from, "Telemetry in /p/servers_config.json");
  assert.equal(section.variables.OTEL_EXPORTER_OTLP_ENDPOINT, "http://section:4318");
  assert.equal(section.variables.OTEL_EXPORTER_OTLP_PROTOCOL, "http/json");
  assert.equal(section.variables.OTEL_SERVICE_NAME, "svc");
  assert.deepEqual(section.headers, { "X-Key": "${K}" });
  assert.equal(
    telemetryLaunch(plain, env({ OTEL_SDK_DISABLED: "true", OTEL_DENO: "true" })),
    undefined,
  );
});

Deno.test("the plan: OTEL_DENO only (Deno's exporter needs no net or env grant), a note, the launch", () => {
  const inputs = (cfg: Config): PermissionInputs => ({
    config: cfg,
    configFile: "/p/servers_config.json",
    envFile: "/p/.env",
    logFile: "/h/.local/state/patchbay/patchbay.log",
    dirs: { state: "/h/s", data: "/h/d", config: "/h/c" },
    env: env({}),
    os: "linux",
    configVariables: [],
    resolveCommand: () => undefined,
    cwd: "/p",
  });
  const off = planPermissions(inputs(config()));
  assert.equal(off.telemetry, undefined);
  assert.ok(!off.grants.some((g) => g.value === "OTEL_DENO"));
  const on = planPermissions(inputs(config({ endpoint: "http://collector.example:4318" })));
  assert.deepEqual(
    on.grants.filter((g) => g.value.startsWith("OTEL_")).map((g) => [g.kind, g.value]),
    [["env", "OTEL_DENO"]],
  );
  assert.ok(!on.grants.some((g) => g.kind === "net" && g.value.startsWith("collector.example")));
  assert.ok(on.notes.some((n) => n.startsWith("Telemetry (") && n.includes("no --allow-net")));
  assert.equal(on.telemetry?.endpoint, "http://collector.example:4318");
});

const printed: PrintedTelemetry = {
  from: "Telemetry in /p/servers_config.json",
  endpoint: "http://c:4318",
  protocol: "http/json",
  service_name: "patchbay",
  variables: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SERVICE_NAME: "patchbay" },
  headers: { Authorization: "Bearer ${TOKEN}", "X-Team": "${TEAM:-core, ops}" },
  env_file: "/p/.env",
};

Deno.test("the client's variables: Deno on, console kept out, a parent-based sampler, headers from the environment or .env", () => {
  const launched = clientTelemetryEnv(printed, {
    process: (name) => ({ TOKEN: "from process" } as Record<string, string>)[name],
    envFileText: () => "TOKEN=from-file\nTEAM=platform\n",
  });
  assert.equal(launched.OTEL_DENO, "true");
  assert.equal(launched.OTEL_DENO_CONSOLE, "ignore");
  assert.equal(launched.OTEL_TRACES_SAMPLER, "parentbased_always_on");
  // A collector that never answers holds the exit this long at most, not OTLP's 10 s.
  assert.equal(launched.OTEL_EXPORTER_OTLP_TIMEOUT, "3000");
  assert.equal(launched.OTEL_EXPORTER_OTLP_ENDPOINT, "http://c:4318");
  assert.equal(launched.OTEL_RESOURCE_ATTRIBUTES, `service.version=${VERSION}`);
  // The process wins over .env; values are percent-encoded as OTLP's header list wants.
  assert.equal(
    launched.OTEL_EXPORTER_OTLP_HEADERS,
    "Authorization=Bearer%20from%20process,X-Team=platform",
  );
  const chosen = clientTelemetryEnv({ ...printed, headers: undefined }, {
    process: (name) =>
      ({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_RESOURCE_ATTRIBUTES: "team=a" } as Record<
        string,
        string
      >)[name],
    envFileText: () => "OTEL_EXPORTER_OTLP_HEADERS=api-key=abc\n",
  });
  assert.equal(chosen.OTEL_TRACES_SAMPLER, "parentbased_traceidratio");
  assert.equal(chosen.OTEL_RESOURCE_ATTRIBUTES, `team=a,service.version=${VERSION}`);
  assert.equal(chosen.OTEL_EXPORTER_OTLP_HEADERS, "api-key=abc");
  const inherited = clientTelemetryEnv({ ...printed, headers: undefined }, {
    process: (name) => name === "OTEL_EXPORTER_OTLP_HEADERS" ? "a=b" : undefined,
    envFileText: () => "OTEL_EXPORTER_OTLP_HEADERS=api-key=abc\n",
  });
  assert.equal(inherited.OTEL_EXPORTER_OTLP_HEADERS, undefined, "the process's own is inherited");
});

Deno.test("--unrestricted computes no plan: telemetry from the process environment alone", () => {
  const get = (vars: Record<string, string>) => (name: string) => vars[name];
  assert.equal(fromEnvironment(get({})), null);
  assert.equal(fromEnvironment(get({ OTEL_DENO: "true", OTEL_SDK_DISABLED: "true" })), null);
  const on = fromEnvironment(
    get({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://t:4318/v1/traces" }),
  )!;
  assert.equal(on.endpoint, "http://t:4318/v1/traces");
  assert.deepEqual(on.variables, { OTEL_SERVICE_NAME: "patchbay" });
  const named = fromEnvironment(get({ OTEL_DENO: "TRUE", OTEL_SERVICE_NAME: "mine" }))!;
  assert.deepEqual(named.variables, {});
  assert.equal(clientTelemetryEnv(named, { process: () => undefined }).OTEL_DENO, "true");
});
