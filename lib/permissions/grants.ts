/**
 * The permissions this process runs with, compared with a {@linkcode PermissionPlan}:
 * what is missing (each with the flag that grants it) and what is broader than needed.
 *
 * @module
 */

import type { Grant, PermissionKind, PermissionPlan } from "./plan.ts";

const KINDS: readonly PermissionKind[] = ["read", "write", "net", "run", "env", "sys"];

/** How this process stands against a plan. */
export interface GrantReport {
  /** Grants of the plan that Deno does not give this process. */
  missing: Grant[];
  /** The plan needs the whole environment and this process may not enumerate it. */
  missingAllEnv: boolean;
  /** Kinds granted without any restriction where the plan needs only some values. */
  broader: PermissionKind[];
}

/** Asks Deno about every grant of `plan`. */
export function compareGrants(
  plan: PermissionPlan,
  query: (descriptor: Deno.PermissionDescriptor) => Deno.PermissionState = (descriptor) =>
    Deno.permissions.querySync(descriptor).state,
): GrantReport {
  const granted = (descriptor: Deno.PermissionDescriptor) => query(descriptor) === "granted";
  const missing = plan.grants.filter((grant) => {
    if (grant.kind === "env" && plan.allEnv) return false;
    return !granted(descriptorOf(grant));
  });
  const broader = KINDS.filter((kind) =>
    granted({ name: kind }) && !(kind === "env" && plan.allEnv)
  );
  return {
    missing,
    missingAllEnv: plan.allEnv !== undefined && !granted({ name: "env" }),
    broader,
  };
}

/** The permission descriptor Deno checks for one grant. */
export function descriptorOf(grant: Grant): Deno.PermissionDescriptor {
  switch (grant.kind) {
    case "read":
    case "write":
      return { name: grant.kind, path: grant.value };
    case "net":
      return { name: "net", host: grant.value };
    case "run":
      return { name: "run", command: grant.value };
    case "env":
      return { name: "env", variable: grant.value };
    case "sys":
      return { name: "sys", kind: grant.value as Deno.SysPermissionDescriptor["kind"] };
  }
}
