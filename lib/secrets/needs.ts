/**
 * What secrets from programs need of the permission plan (docs/secrets.md): each helper's
 * command (`headers_helper`, `LLM.api_key_helper`), granted like a stdio server's by the
 * file it resolves to, and the keychain's tool with the variables it needs, only when the
 * configuration uses `${keychain:…}`. The `kill` program ends a helper that runs past its
 * time together with what it started.
 *
 * @module
 */

import type { Config, HelperCommand } from "../config/types.ts";
import type { MachineFacts, NeedsSink } from "../deno_permission/needs.ts";
import { keychainTool } from "./keychain.ts";
import { KILL_PROGRAM } from "../transports/process.ts";

/** What {@linkcode secretNeeds} reads of the plan's inputs. */
export interface SecretNeedsInputs extends MachineFacts {
  config: Pick<Config, "servers" | "llm" | "keychainEntries">;
}

/** Adds the grants of the configuration's helpers and keychain entries to `grants`. */
export function secretNeeds(grants: NeedsSink, inputs: SecretNeedsInputs): void {
  const { config } = inputs;
  const helpers: [HelperCommand, string][] = [];
  for (const server of config.servers) {
    if (server.disabled || server.transport === "stdio" || !server.headersHelper) continue;
    helpers.push([server.headersHelper, `runs the headers_helper of server '${server.name}'`]);
  }
  if (config.llm.apiKeyHelper) {
    helpers.push([config.llm.apiKeyHelper, "runs LLM.api_key_helper (it prints the model's key)"]);
  }
  for (const [helper, why] of helpers) {
    const searchPath = helper.env.PATH ?? inputs.env.get("PATH");
    const path = inputs.resolveCommand(helper.command, searchPath, helper.cwd);
    // As for a stdio server: a path is granted as written, a name only once it is found.
    const granted = path ?? (/[\\/]/.test(helper.command) ? helper.command : undefined);
    if (granted) grants.add("run", granted, why);
    else {
      grants.note(
        `'${helper.command}' (it ${why}) is not on PATH, so it is not granted: install it or ` +
          "write its path, then run `patchbay permissions` again.",
      );
    }
  }
  const entries = config.keychainEntries ?? [];
  const tool = entries.length > 0 ? keychainTool(inputs.os) : undefined;
  if (entries.length > 0 && !tool) {
    grants.note(
      `\${keychain:…}: patchbay knows no keychain tool on ${inputs.os ?? Deno.build.os}.`,
    );
  }
  if (tool) {
    const path = inputs.resolveCommand(tool.program, inputs.env.get("PATH"), inputs.cwd);
    const why = `reads ${entries.map((name) => `\${keychain:${name}}`).join(", ")} from ` +
      tool.label;
    if (path) grants.add("run", path, why);
    else {
      grants.note(
        `'${tool.program}' is not on PATH, so it is not granted (it ${why}): ${tool.install}.`,
      );
    }
    for (const name of tool.env) grants.add("env", name, `passed on to ${tool.program}`);
  }
  if (helpers.length > 0 || tool) {
    const kill = inputs.resolveCommand(KILL_PROGRAM, inputs.env.get("PATH"), inputs.cwd);
    if (kill) {
      grants.add("run", kill, "ends a helper or keychain tool that runs past its time");
    }
  }
}
