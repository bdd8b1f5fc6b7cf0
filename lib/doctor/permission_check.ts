/**
 * The Deno permissions this process has, against those the configuration needs
 * (`patchbay permissions` computes the same plan).
 *
 * @module
 */

import { compiledBinary } from "../deno_permission/launched.ts";
import { denoPermissionRemedy } from "../deno_permission/remedy.ts";
import { grantFlag } from "../permissions/flags.ts";
import { compareGrants } from "../permissions/grants.ts";
import type { PermissionPlan } from "../permissions/plan.ts";
import { plural } from "../text/text.ts";
import { type CheckResult, pass, warn } from "./check.ts";

/** Compares the grants in effect with `plan`. */
export function checkPermissions(
  plan: PermissionPlan,
  query?: (descriptor: Deno.PermissionDescriptor) => Deno.PermissionState,
): CheckResult {
  const name = "permissions";
  const report = compareGrants(plan, query);
  const missing = report.missing.map(grantFlag);
  if (report.missingAllEnv) missing.unshift("--allow-env");
  if (missing.length > 0) {
    const details = [
      ...(report.missingAllEnv ? [`--allow-env  ${plan.allEnv!.why}`] : []),
      ...report.missing.map((grant) => `${grantFlag(grant)}  ${grant.why}`),
    ];
    return {
      name,
      status: "fail",
      finding: `Permission denied: Deno does not grant ${plural(missing.length, "permission")} ` +
        `the configuration needs: ${missing.join(" ")}`,
      remedy: denoPermissionRemedy(missing.join(" ")),
      details,
    };
  }
  if (report.broader.length > 0) {
    return warn(
      name,
      "every permission the configuration needs is granted; broader than needed: " +
        report.broader.map((kind) => `--allow-${kind}`).join(" ") +
        " (`patchbay permissions` prints the narrowest set)",
      compiledBinary()
        // A binary's permissions were fixed when it was built: only the launcher narrows.
        ? "a compiled binary keeps the permissions it was built with; for the narrowest, run " +
          "patchbay through its launcher (`deno task start`, or the `patchbay` of " +
          "`deno task install`), which grants only the plan for the configuration in effect"
        : "start patchbay with `deno task start` or the installed `patchbay`, without " +
          "--unrestricted: they grant only the plan for the configuration in effect",
    );
  }
  return pass(name, "every permission the configuration needs is granted, and no more");
}
