/**
 * What reading the configuration's scopes needs of the permission plan (docs/configuration.md,
 * "Scopes"; docs/policy.md): the user's and the project's files, each .env, and the
 * administrator's policy, whose place is read at every start (a policy that cannot be read
 * stops patchbay). What the policy refuses is granted nothing: its servers are disabled,
 * and the other subsystems' needs leave them out.
 *
 * @module
 */

import type { Config } from "../config/types.ts";
import type { NeedsSink } from "../deno_permission/needs.ts";
import { managedFile } from "./place.ts";

/** What {@linkcode scopeNeeds} reads of the plan's inputs. */
export interface ScopeNeedsInputs {
  config: Pick<Config, "servers">;
  /** Every configuration file read, the policy's place among them. */
  configFiles?: readonly string[];
  /** Every .env file read. */
  envFiles?: readonly string[];
  /** @default Deno.build.os */
  os?: typeof Deno.build.os;
}

/** Adds the reads of every scope's files, and a note for each server the policy refuses. */
export function scopeNeeds(plan: NeedsSink, inputs: ScopeNeedsInputs): void {
  const policy = managedFile(inputs.os);
  for (const file of inputs.configFiles ?? []) {
    plan.add(
      "read",
      file,
      file === policy ? "the administrator's policy, if any (docs/policy.md)" : "the configuration",
    );
  }
  for (const file of inputs.envFiles ?? []) {
    plan.add("read", file, "the environment file (read at start-up)");
  }
  for (const server of inputs.config.servers.filter((s) => s.refused)) {
    plan.note(
      `server '${server.name}' is refused by the administrator's policy ` +
        `(${server.refused!.file}): nothing is granted for it.`,
    );
  }
}
