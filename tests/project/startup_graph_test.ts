/**
 * What each path of the program loads before it runs (start-up cost): the module graph that
 * `deno info --json` reports, following only static imports (what Deno evaluates before
 * the first line of the entry point runs; a dynamic `import()` is loaded only when
 * reached). The paths that touch no server must not load an npm package they do not
 * use, and the configuration's validation must not load the MCP SDK.
 *
 * @module
 */

import assert from "node:assert/strict";
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/client";
import { LEGACY_REVISIONS } from "../../lib/revisions.ts";
import { DENO } from "../support/deps.ts";

const ROOT = new URL("../../", import.meta.url);

interface InfoModule {
  specifier: string;
  dependencies?: { code?: { specifier: string }; isDynamic?: boolean }[];
}

/**
 * The npm packages `entry` loads statically, each with the chain of project files that
 * brings it in (for the failure message).
 */
async function staticNpmPackages(entry: string): Promise<Map<string, string[]>> {
  const { code, stdout, stderr } = await new Deno.Command(DENO, {
    args: ["info", "--json", new URL(entry, ROOT).pathname],
    cwd: ROOT.pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(code, 0, `deno info ${entry} failed: ${new TextDecoder().decode(stderr)}`);
  const info = JSON.parse(new TextDecoder().decode(stdout)) as {
    roots: string[];
    modules: InfoModule[];
    redirects: Record<string, string>;
  };
  const modules = new Map(info.modules.map((m) => [m.specifier, m]));
  const resolve = (s: string) => info.redirects[s] ?? s;
  const parent = new Map<string, string>();
  const packages = new Map<string, string[]>();
  const chain = (from: string) => {
    const files = [from];
    for (let at = from; parent.has(at);) files.push(at = parent.get(at)!);
    return files.map((f) => f.replace(ROOT.href, ""));
  };
  const queue = [resolve(info.roots[0])];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const specifier = queue.shift()!;
    if (seen.has(specifier)) continue;
    seen.add(specifier);
    for (const dependency of modules.get(specifier)?.dependencies ?? []) {
      // Type-only imports have no `code`; dynamic ones load only when reached.
      if (!dependency.code || dependency.isDynamic) continue;
      const target = resolve(dependency.code.specifier);
      if (target.startsWith("npm:")) {
        const name = target.replace(/^npm:\/?/, "").replace(/^(@?[^@]+)@.*$/, "$1");
        if (!packages.has(name)) packages.set(name, chain(specifier));
      } else if (target.startsWith("file:")) {
        if (!parent.has(target)) parent.set(target, specifier);
        queue.push(target);
      }
    }
  }
  return packages;
}

function describe(packages: Map<string, string[]>): string {
  return [...packages].map(([name, files]) => `${name} via ${files.join(" <- ")}`).join("; ");
}

Deno.test("the entry point loads no npm package before it runs (--version answers at once)", async () => {
  const packages = await staticNpmPackages("main.ts");
  assert.equal(packages.size, 0, describe(packages));
});

Deno.test("the early start reads the servers to start without zod or any npm package", async () => {
  // lib/early_start.ts runs before the command tree loads; its reader and the pool of
  // processes started ahead must not bring in what it is there to overlap with.
  for (
    const entry of ["lib/early_start.ts", "lib/config/stdio_entries.ts", "lib/transports/spawn.ts"]
  ) {
    const packages = await staticNpmPackages(entry);
    assert.equal(packages.size, 0, `${entry}: ${describe(packages)}`);
  }
});

Deno.test("reading the configuration loads zod and no other npm package (no SDK, model client, Redis, commander)", async () => {
  // config check, sessions and permissions in their plain forms are read without commander
  // (commands/_chat_flags.ts), so their modules must not bring it in either.
  for (
    const entry of [
      "lib/cli/startup.ts",
      "commands/config_check.ts",
      "commands/sessions.ts",
      // --discover loads the doctor's server checks (the SDK) when it has something to ask.
      "commands/permissions.ts",
    ]
  ) {
    const packages = await staticNpmPackages(entry);
    assert.deepEqual([...packages.keys()], ["zod"], `${entry}: ${describe(packages)}`);
  }
});

Deno.test("the scripting commands' modules load no npm package but zod until their servers are started", async () => {
  for (
    const entry of [
      "commands/_connect.ts",
      "commands/tools.ts",
      "commands/call.ts",
      "commands/run.ts",
    ]
  ) {
    const packages = await staticNpmPackages(entry);
    assert.deepEqual([...packages.keys()], ["zod"], `${entry}: ${describe(packages)}`);
  }
});

Deno.test("the interactive session loads the servers' SDK but no model SDK, commander or Redis before its first turn", async () => {
  // main.ts reads the session's plain flags without commander (commands/_chat_flags.ts); the
  // model client is patchbay's own (lib/llm/chat_api.ts, no npm package), Redis comes only
  // with a Redis store.
  const packages = await staticNpmPackages("commands/chat.ts");
  assert.deepEqual(
    [...packages.keys()].sort(),
    ["@modelcontextprotocol/client", "eventsource-parser", "zod"],
    describe(packages),
  );
  // The model client needs only the event-stream framer the transports load anyway.
  const expected = {
    "lib/llm/openai_provider.ts": ["eventsource-parser"],
    "lib/llm/request_failures.ts": [],
  };
  for (const [entry, names] of Object.entries(expected)) {
    const packages = await staticNpmPackages(entry);
    assert.deepEqual([...packages.keys()], names, `${entry}: ${describe(packages)}`);
  }
});

Deno.test("the protocol revisions known without the SDK are the SDK's own", () => {
  assert.deepEqual([...LEGACY_REVISIONS], [...SUPPORTED_PROTOCOL_VERSIONS]);
});

Deno.test("OpenTelemetry's package is loaded only when telemetry is on (lib/telemetry/otel.ts, by import())", async () => {
  // The module that exports brings it in: the check below can see it.
  const exporting = await staticNpmPackages("lib/telemetry/otel.ts");
  assert.ok(exporting.has("@opentelemetry/api"), describe(exporting));
  // Every path without telemetry, the ids and the wire's trace context included, loads none.
  for (
    const entry of [
      "launch.ts",
      "lib/telemetry/start.ts",
      "lib/telemetry/telemetry.ts",
      "lib/telemetry/client_env.ts",
      "lib/telemetry/launch_env.ts",
    ]
  ) {
    const packages = await staticNpmPackages(entry);
    assert.equal(packages.size, 0, `${entry}: ${describe(packages)}`);
  }
  for (const entry of ["commands/chat.ts", "commands/run.ts", "lib/telemetry/mcp_requests.ts"]) {
    const packages = await staticNpmPackages(entry);
    assert.ok(!packages.has("@opentelemetry/api"), `${entry}: ${describe(packages)}`);
  }
});
