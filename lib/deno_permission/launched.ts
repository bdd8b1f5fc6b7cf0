/**
 * How this process was started: by the launcher (`launch.ts`) under its narrow plan, and
 * whether that launcher can restart it; or as a compiled binary (`deno task compile`),
 * whose permissions were fixed when it was built. Read from the environment the launcher sets, so
 * any module may ask without importing the launcher.
 *
 * A leaf: it imports nothing, so error wording and the launcher's restart both use it.
 *
 * @module
 */

/** The variable the launcher sets to `narrow` in the client it starts under its plan. */
export const LAUNCHER_VARIABLE = "PATCHBAY_LAUNCHER";

/** The variable naming the file the client writes its restart request to. */
export const RESTART_FILE_VARIABLE = "PATCHBAY_RESTART_FILE";

/** The value of `name`, `undefined` when unset or not readable under the grants. */
export function readVariable(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined; // Not granted: not set by a launcher.
  }
}

/** Whether the launcher (`launch.ts`) started this process under its plan. */
export function startedByLauncher(): boolean {
  return readVariable(LAUNCHER_VARIABLE) === "narrow";
}

/** The file the launcher named, if this process may ask for a restart. */
export function restartFile(): string | undefined {
  if (!startedByLauncher()) return undefined;
  return readVariable(RESTART_FILE_VARIABLE) || undefined;
}

/**
 * Whether this process is a compiled binary (`deno compile`): its permissions were fixed
 * when it was built, so no flag can be added to its command line and no launcher restarts
 * it; a remedy says what to do instead.
 */
export function compiledBinary(): boolean {
  return Deno.build.standalone === true;
}
