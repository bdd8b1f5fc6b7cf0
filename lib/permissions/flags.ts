/**
 * A {@linkcode PermissionPlan} as Deno command-line flags, and as shell text a person can
 * paste after `deno run` or `deno install`.
 *
 * @module
 */

import type { Grant, PermissionKind, PermissionPlan } from "./plan.ts";

/** Flag order, as in the start task. */
const KINDS: readonly PermissionKind[] = ["env", "read", "write", "net", "run", "sys"];

/**
 * The flags, one argument each (for `Deno.Command` or JSON): `--no-prompt` first (a missing
 * permission then fails with a message naming the flag instead of stopping at a prompt),
 * then one `--allow-<kind>=<values>` per kind that is needed.
 */
export function permissionFlags(plan: PermissionPlan): string[] {
  const flags = ["--no-prompt"];
  for (const kind of KINDS) {
    if (kind === "env" && plan.allEnv) {
      flags.push("--allow-env");
      continue;
    }
    const values = plan.grants.filter((grant) => grant.kind === kind).map((grant) => grant.value);
    if (values.length > 0) flags.push(`--allow-${kind}=${values.join(",")}`);
  }
  return flags;
}

/** The flag that grants exactly `grant`. */
export function grantFlag(grant: Grant): string {
  return `--allow-${grant.kind}=${grant.value}`;
}

/** Characters a POSIX shell takes literally; anything else gets the argument quoted. */
const SHELL_SAFE = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** One argument quoted for a POSIX shell (`[` and `]` glob, so `[::1]:3000` is quoted). */
export function shellQuote(argument: string): string {
  if (SHELL_SAFE.test(argument)) return argument;
  return `'${argument.replaceAll("'", `'\\''`)}'`;
}

/** Values Deno cannot take in a comma-separated list. */
export function unlistableValues(plan: PermissionPlan): Grant[] {
  return plan.grants.filter((grant) => grant.value.includes(","));
}
