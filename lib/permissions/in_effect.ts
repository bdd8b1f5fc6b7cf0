/**
 * The grants this process runs with, as `/status` shows them: how the launcher started it
 * (`PATCHBAY_LAUNCHER`), and which kinds are granted without any limit, which is broader
 * than any plan (the plan never needs a whole kind, except every variable for Redis).
 *
 * @module
 */

import { compiledBinary, LAUNCHER_VARIABLE } from "../deno_permission/launched.ts";
import type { PermissionKind } from "./plan.ts";

/** How the launcher started this process; `undefined`: not by the launcher. */
export type LaunchMode = "narrow" | "unrestricted" | "bare";

const KINDS: readonly PermissionKind[] = ["env", "read", "write", "net", "run", "sys"];

/** The launcher's word, if it started this process. */
export function launchMode(): LaunchMode | undefined {
  try {
    const value = Deno.env.get(LAUNCHER_VARIABLE);
    return value === "narrow" || value === "unrestricted" || value === "bare" ? value : undefined;
  } catch {
    return undefined; // Not granted: not started by the launcher.
  }
}

/** The kinds granted without a list of values. */
export function unlimitedKinds(
  query: (descriptor: Deno.PermissionDescriptor) => Deno.PermissionState = (descriptor) =>
    Deno.permissions.querySync(descriptor).state,
): PermissionKind[] {
  return KINDS.filter((kind) => query({ name: kind }) === "granted");
}

/** The grants in effect, one line, and whether they are broader than the plan. */
export function describeGrants(
  options: { mode?: LaunchMode; unlimited?: PermissionKind[]; redis?: boolean } = {},
): { text: string; broader: boolean } {
  const mode = options.mode ?? launchMode();
  // Redis's client reads the whole environment when it loads: the plan grants all of it.
  const unlimited = (options.unlimited ?? unlimitedKinds()).filter((kind) =>
    !(kind === "env" && options.redis)
  );
  const flags = unlimited.map((kind) => `--allow-${kind}`).join(" ");
  if (unlimited.length === 0) {
    return {
      text: mode === "narrow"
        ? "narrow: the plan for this configuration (`patchbay permissions` lists each grant)"
        : "explicit lists only (`patchbay doctor` compares them with the plan)",
      broader: false,
    };
  }
  const how = mode === "unrestricted"
    ? "started with --unrestricted"
    : compiledBinary()
    ? "a compiled binary: its permissions were fixed when it was built"
    : mode === "narrow"
    ? "the launcher's plan was widened"
    : "not started by the launcher (`deno task start` or the installed patchbay narrow them)";
  return { text: `broader than the plan: ${flags} (${how})`, broader: true };
}
