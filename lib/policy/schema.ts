/**
 * The schema of the administrator's policy file (docs/policy.md): which servers may run
 * (`allowed_servers`, `denied_servers`), which tools never run (`denied_tools`), whether
 * every tool call needs a person's answer (`require_approval`), and the configuration it
 * forces (`settings`: any top-level block of servers_config.json, field by field).
 *
 * `settings` is derived from the configuration's own schema ({@linkcode ConfigFileSchema}),
 * every block made partial, so a block added to servers_config.json can be forced here
 * without a change to this file. `scripts/gen_schema.ts` writes `managed.schema.json` from it.
 *
 * @module
 */

import { z } from "zod";
import { ConfigFileSchema, type RuleParams } from "../config/schema.ts";

/** The three ways a rule names servers. */
export const RULE_KINDS = ["name", "command", "url"] as const;

/** How a rule names servers: `name`, `command` or `url`. */
export type RuleKind = (typeof RULE_KINDS)[number];

const glob = (what: string) => z.string().min(1).describe(what);

/** One rule of `allowed_servers` or `denied_servers`: exactly one of its three fields. */
export const ServerRuleSchema = z.strictObject({
  name: glob("A server name, or a * glob of names (e.g. corp-*)").optional(),
  command: glob(
    "A stdio server's command line, the command and its arguments joined by single spaces, " +
      "as the entry starts it (e.g. npx -y @modelcontextprotocol/server-filesystem *); " +
      "* matches any run of characters",
  ).optional(),
  url: z.string().regex(
    /^[^:/?#\s]+:\/\/[^/?#\s]+/,
    'expected scheme://host[:port][/path], e.g. "https://mcp.corp.example/*"',
  ).describe(
    "A network server's URL, scheme://host[:port][/path]: * in the host matches within the " +
      "host, * in the path any run; without a path, every path of the host " +
      "(e.g. https://*.corp.example/*)",
  ).optional(),
}).superRefine((rule, ctx) => {
  const written = RULE_KINDS.filter((kind) => rule[kind] !== undefined);
  if (written.length === 1) return;
  ctx.addIssue({
    code: "custom",
    message: written.length === 0
      ? "a rule needs one of name, command or url"
      : `a rule takes one of name, command or url, not ${written.join(" and ")}`,
    params: {
      hint: 'write one rule per way of naming servers, e.g. {"name": "github"}',
    } satisfies RuleParams,
  });
}).describe("Servers named by name, command line or URL (exactly one of the three)");

/** A `denied_tools` pattern: `server.tool`, each side a name or a * glob. */
export const ToolPatternSchema = z.string().regex(
  /^[^.\s]+\.\S+$/,
  'expected server.tool, each side a name or a * glob ("github.delete_*", "*.write_file")',
).describe('A tool as server.tool; either side a name or a * glob ("*.delete_*")');

/** A block of servers_config.json as `settings` takes it: an object's fields all optional. */
function partialBlock(schema: z.ZodType): z.ZodType {
  const inner = schema instanceof z.ZodOptional ? schema.unwrap() as z.ZodType : schema;
  return (inner instanceof z.ZodObject ? inner.partial() : inner).optional();
}

/** Every top-level block of servers_config.json, each partial. */
export const SettingsSchema = z.strictObject(
  Object.fromEntries(
    Object.entries(ConfigFileSchema.shape)
      .filter(([block]) => block !== "$schema")
      .map(([block, schema]) => [block, partialBlock(schema as z.ZodType)]),
  ),
).describe(
  "Configuration forced over the user's and the project's: each block merged field by " +
    "field, the policy's value winning; mcpServers entries added (replacing any of the same " +
    "name); lists of hooks added to the user's",
);

export const ManagedFileSchema = z.strictObject({
  $schema: z.string().describe("JSON Schema reference for editors").optional(),
  allowed_servers: z.array(ServerRuleSchema).describe(
    "When present, only servers matching one of these rules may run (an empty list: none). " +
      "A stdio server must match a command rule when the list has any; a network server " +
      "a url rule when it has any; else a name rule is enough",
  ).optional(),
  denied_servers: z.array(ServerRuleSchema).describe(
    "Servers matching any of these rules never run, whatever allowed_servers says",
  ).optional(),
  denied_tools: z.array(ToolPatternSchema).describe(
    "Tools never offered nor called, as server.tool globs",
  ).optional(),
  require_approval: z.boolean().describe(
    'Every tool call and sampling request needs a person\'s answer: "trusted" and ' +
      '"sampling": "allow" of user and project entries are ignored, answers last one ' +
      "session (none remembered for the folder), and --yes is refused (default false)",
  ).optional(),
  settings: SettingsSchema.optional(),
}).describe("patchbay administrator's policy (managed.json)");

export type ManagedFile = z.infer<typeof ManagedFileSchema>;
export type ServerRule = z.infer<typeof ServerRuleSchema>;
