import assert from "node:assert/strict";
import { parseConfig } from "../lib/config/load.ts";
import { createEnvironment } from "../lib/env.ts";
import { generateJsonSchema } from "../scripts/gen_schema.ts";

const root = new URL("../", import.meta.url);

Deno.test("servers_config.schema.json is generated from the zod schema (run `deno task schema`)", async () => {
  const committed = await Deno.readTextFile(new URL("servers_config.schema.json", root));
  assert.equal(committed, generateJsonSchema());
});

Deno.test("the JSON Schema requires what the loader requires", () => {
  const schema = JSON.parse(generateJsonSchema());
  assert.deepEqual(schema.required, ["LLM", "mcpServers"]);
  assert.deepEqual(schema.properties.LLM.required, ["provider", "model"]);
  assert.equal(schema.additionalProperties, false);
  const server = schema.properties.mcpServers.additionalProperties;
  assert.deepEqual(server.properties.transport_type.enum, ["stdio", "streamable_http", "sse"]);
  assert.equal(server.additionalProperties, false);
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
