/**
 * Writes servers_config.schema.json from the zod schema in lib/config/schema.ts, so
 * editors validate and complete the configuration. Run `deno task schema` after
 * changing the schema; `tests/schema_json_test.ts` fails until the file is regenerated.
 *
 * @module
 */

import { z } from "zod";
import { ConfigFileSchema } from "../lib/config/schema.ts";

/** The JSON Schema text for servers_config.json. */
export function generateJsonSchema(): string {
  const schema = z.toJSONSchema(ConfigFileSchema, { io: "input" }) as Record<string, unknown>;
  const properties = schema.properties as Record<string, Record<string, unknown>>;
  const servers = properties.mcpServers.additionalProperties as Record<string, unknown>;
  // What each transport needs, which the zod object alone cannot say.
  servers.allOf = [
    {
      if: { properties: { transport_type: { const: "stdio" } }, required: ["transport_type"] },
      then: { required: ["command"] },
    },
    {
      if: {
        properties: { transport_type: { enum: ["streamable_http", "sse"] } },
        required: ["transport_type"],
      },
      then: { required: ["url"] },
    },
    { anyOf: [{ required: ["command"] }, { required: ["url"] }] },
  ];
  schema.title = "patchbay servers_config.json";
  return JSON.stringify(schema, null, 2) + "\n";
}

if (import.meta.main) {
  await Deno.writeTextFile(
    new URL("../servers_config.schema.json", import.meta.url),
    generateJsonSchema(),
  );
  console.log("wrote servers_config.schema.json");
}
