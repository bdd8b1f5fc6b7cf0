import assert from "node:assert/strict";
import { parseConfig } from "../../lib/config/load.ts";
import { createEnvironment } from "../../lib/env.ts";
import { ConfigValidationError } from "../../lib/errors.ts";
import { generateJsonSchema, generateManagedSchema } from "../../scripts/gen_schema.ts";

const root = new URL("../../", import.meta.url);

Deno.test("servers_config.schema.json is generated from the zod schema (run `deno task schema`)", async () => {
  const committed = await Deno.readTextFile(new URL("servers_config.schema.json", root));
  assert.equal(committed, generateJsonSchema());
});

Deno.test("managed.schema.json is generated from the policy's zod schema (run `deno task schema`)", async () => {
  const committed = await Deno.readTextFile(new URL("managed.schema.json", root));
  assert.equal(committed, generateManagedSchema());
  const schema = JSON.parse(committed);
  // The policy's settings take every block of servers_config.json.
  const settings = Object.keys(schema.properties.settings.properties);
  const blocks = Object.keys(JSON.parse(generateJsonSchema()).properties);
  assert.deepEqual(settings.sort(), blocks.filter((b) => b !== "$schema").sort());
});

/** The field paths the loader complains about for `value`; none when it loads. */
function loaderProblems(value: unknown): string[] {
  try {
    parseConfig(JSON.stringify(value), "servers_config.json", createEnvironment({}));
    return [];
  } catch (error) {
    if (!(error instanceof ConfigValidationError)) throw error;
    return error.problems.map((p) => `${p.path}: ${p.message}`);
  }
}

/** The keys of `object` the loader reports missing when each is left out of `whole`. */
function loaderRequired(whole: Record<string, unknown>, at: string[] = []): string[] {
  const object = at.reduce((o, key) => o[key] as Record<string, unknown>, whole);
  return Object.keys(object).filter((key) => {
    const copy = structuredClone(whole);
    const inner = at.reduce((o, k) => o[k] as Record<string, unknown>, copy);
    delete inner[key];
    const field = [...at, key].join(".");
    return loaderProblems(copy).includes(`${field}: Missing required field: ${field}`);
  });
}

Deno.test("the JSON Schema requires what the loader requires", () => {
  const schema = JSON.parse(generateJsonSchema());
  // Every field the schema requires, and nothing else: the loader takes it.
  const minimal = {
    LLM: Object.fromEntries(schema.properties.LLM.required.map((k: string) => [k, "openai"])),
    mcpServers: {},
    ...Object.fromEntries(
      schema.required.filter((k: string) => k !== "LLM" && k !== "mcpServers").map((
        k: string,
      ) => [k, {}]),
    ),
  };
  assert.deepEqual(loaderProblems(minimal), []);
  // Each of them left out, the loader reports it missing (and the schema requires the
  // same ones: a field the loader insists on but the schema does not would be missed here).
  assert.deepEqual(loaderRequired(minimal).toSorted(), schema.required.toSorted());
  assert.deepEqual(
    loaderRequired(minimal, ["LLM"]).toSorted(),
    schema.properties.LLM.required.toSorted(),
  );
  // Unknown fields: the schema forbids them where the loader refuses them.
  assert.equal(schema.additionalProperties, false);
  assert.deepEqual(loaderProblems({ ...minimal, Extra: 1 }), ['Extra: unknown field "Extra"']);
  const server = schema.properties.mcpServers.additionalProperties;
  assert.equal(server.additionalProperties, false);
  assert.deepEqual(loaderProblems({ ...minimal, mcpServers: { a: { command: "x", bogus: 1 } } }), [
    'mcpServers.a.bogus: unknown field "bogus"',
  ]);
  // The transports the schema lists are the ones the loader accepts, and only those.
  const entryFor: Record<string, Record<string, string>> = {
    stdio: { command: "x" },
    streamable_http: { url: "http://127.0.0.1:1/mcp" },
    sse: { url: "http://127.0.0.1:1/sse" },
  };
  const transports: string[] = server.properties.transport_type.enum;
  assert.deepEqual(transports.toSorted(), Object.keys(entryFor).toSorted());
  for (const transport of transports) {
    const entry = { transport_type: transport, ...entryFor[transport] };
    assert.deepEqual(loaderProblems({ ...minimal, mcpServers: { a: entry } }), [], transport);
  }
  const refused = loaderProblems({
    ...minimal,
    mcpServers: { a: { transport_type: "websocket", url: "http://127.0.0.1:1/mcp" } },
  });
  assert.deepEqual(refused, [
    `mcpServers.a.transport_type: expected one of ${
      transports.map((t) => JSON.stringify(t)).join(", ")
    }, got the string "websocket"`,
  ]);
});

Deno.test("the example configuration is valid, references the schema and uses servers from npm", async () => {
  const text = await Deno.readTextFile(new URL("servers_config.example.json", root));
  const config = parseConfig(text, "servers_config.example.json", createEnvironment({}));
  assert.equal(JSON.parse(text).$schema, "./servers_config.schema.json");
  assert.deepEqual(config.servers.map((s) => s.name), ["everything", "filesystem"]);
  for (const server of config.servers) {
    assert.ok(server.transport === "stdio");
    assert.equal(server.command, "npx");
    assert.match(server.args.join(" "), /^-y @modelcontextprotocol\/server-\w+@\d/);
  }
});
