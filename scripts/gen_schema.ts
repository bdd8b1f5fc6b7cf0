/**
 * Writes servers_config.schema.json from the zod schema in lib/config/schema.ts, and
 * managed.schema.json (the administrator's policy, lib/policy/schema.ts), so editors
 * validate and complete them. Run `deno task schema` after changing either schema;
 * `tests/config/schema_json_test.ts` fails until the files are regenerated.
 *
 * @module
 */

import { z } from "zod";
import { ConfigFileSchema, EntryByTransportSchema } from "../lib/config/schema.ts";
import { ManagedFileSchema } from "../lib/policy/schema.ts";

/** The JSON Schema text for servers_config.json. */
export function generateJsonSchema(): string {
  const schema = z.toJSONSchema(ConfigFileSchema, { io: "input" }) as Record<string, unknown>;
  const properties = schema.properties as Record<string, Record<string, unknown>>;
  const servers = properties.mcpServers.additionalProperties as Record<string, unknown>;
  // What each transport needs (the loader's discriminated union), which one object of
  // every field cannot say; without transport_type, command or url says it.
  servers.allOf = [
    ...transportRequirements().map(({ transports, required }) => ({
      if: {
        properties: {
          transport_type: transports.length === 1 ? { const: transports[0] } : { enum: transports },
        },
        required: ["transport_type"],
      },
      then: { required },
    })),
    // Other clients' address fields (lib/config/dialect.ts) count as url.
    { anyOf: ["command", "url", "httpUrl", "serverUrl"].map((field) => ({ required: [field] })) },
  ];
  schema.title = "patchbay servers_config.json";
  return JSON.stringify(schema, null, 2) + "\n";
}

/** The JSON Schema text for the administrator's policy file, managed.json. */
export function generateManagedSchema(): string {
  const schema = z.toJSONSchema(ManagedFileSchema, { io: "input" }) as Record<string, unknown>;
  schema.title = "patchbay administrator's policy (managed.json)";
  return JSON.stringify(schema, null, 2) + "\n";
}

/** The fields each transport requires besides transport_type, transports alike grouped. */
function transportRequirements(): { transports: string[]; required: string[] }[] {
  const groups = new Map<string, { transports: string[]; required: string[] }>();
  for (const option of EntryByTransportSchema.options) {
    const json = z.toJSONSchema(option, { io: "input" }) as { required?: string[] };
    const required = (json.required ?? []).filter((field) => field !== "transport_type");
    const key = required.join(",");
    const group = groups.get(key) ?? { transports: [], required };
    group.transports.push(option.shape.transport_type.value);
    groups.set(key, group);
  }
  return [...groups.values()];
}

if (import.meta.main) {
  await Deno.writeTextFile(
    new URL("../servers_config.schema.json", import.meta.url),
    generateJsonSchema(),
  );
  await Deno.writeTextFile(
    new URL("../managed.schema.json", import.meta.url),
    generateManagedSchema(),
  );
  console.log("wrote servers_config.schema.json and managed.schema.json");
}
