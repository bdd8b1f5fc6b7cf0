/**
 * Where the administrator's policy file is: one fixed place per platform, read from no
 * variable, flag or configuration, so nothing a user's environment can set points patchbay
 * at another policy (or at none). The tests put a file there inside a mount namespace
 * (`tests/support/managed_policy.ts`), which no user's environment reaches either.
 *
 * No imports: the launcher reads it before every command.
 *
 * @module
 */

/**
 * The policy file by platform. Windows' is spelled out rather than taken from
 * `%ProgramData%`: a variable a user can set in their own environment.
 */
export const MANAGED_FILES: Readonly<Record<"linux" | "darwin" | "windows", string>> = {
  linux: "/etc/patchbay/managed.json",
  darwin: "/Library/Application Support/patchbay/managed.json",
  windows: "C:\\ProgramData\\patchbay\\managed.json",
};

/** The policy file on `os` (other Unix systems use Linux's place). */
export function managedFile(os: typeof Deno.build.os = Deno.build.os): string {
  return os === "darwin" || os === "windows" ? MANAGED_FILES[os] : MANAGED_FILES.linux;
}
