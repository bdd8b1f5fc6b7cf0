/**
 * Where a command is, as Deno resolves it for `--allow-run`: a bare name is looked up on
 * PATH (the PATH the child process gets), a path with a slash is taken relative to the
 * child's working directory. Symbolic links are not followed: Deno matches the path found
 * on PATH (`/usr/bin/npx`), not the file it points to.
 *
 * @module
 */

import { delimiter, join, resolve } from "node:path";
import { startedByLauncher } from "../deno_permission/launched.ts";

/** Windows executables' extensions when PATHEXT is not readable. */
const DEFAULT_PATHEXT = [".COM", ".EXE", ".BAT", ".CMD"];

/**
 * The path of `command`, or `undefined` when it is not there or not executable. Where
 * this process may not look (no read permission for a PATH folder), a bare name is
 * returned as it is (Deno resolves names in `--allow-run` itself), unless Deno says it is
 * on no folder of `searchPath` ({@linkcode foundByDeno}).
 */
export function resolveCommandPath(
  command: string,
  searchPath: string | undefined,
  cwd: string,
  os: typeof Deno.build.os = Deno.build.os,
): string | undefined {
  if (command.includes("/") || (os === "windows" && command.includes("\\"))) {
    const path = resolve(cwd, command);
    return isExecutable(path, os) ? path : undefined;
  }
  const extensions = os === "windows" ? ["", ...DEFAULT_PATHEXT] : [""];
  for (const dir of (searchPath ?? "").split(os === "windows" ? ";" : delimiter)) {
    if (dir === "") continue;
    for (const extension of extensions) {
      const candidate = join(dir, command + extension);
      const found = isExecutable(candidate, os);
      if (found === "unknown") {
        return foundByDeno(command, searchPath) === false ? undefined : command;
      }
      if (found) return candidate;
    }
  }
  return undefined;
}

function isExecutable(path: string, os: typeof Deno.build.os): boolean | "unknown" {
  try {
    const info = Deno.statSync(path);
    if (!info.isFile) return false;
    // Windows has no execute bit; elsewhere some bit must be set for anyone to run it.
    return os === "windows" || info.mode === null || (info.mode & 0o111) !== 0;
  } catch (error) {
    return error instanceof Deno.errors.NotCapable ? "unknown" : false;
  }
}

/**
 * Whether Deno finds the bare name `command` on `searchPath`, asked of Deno itself for a
 * process that may not read the PATH folders (the client under its plan): Deno looks a
 * command up before it checks the grant, so starting a command this process may not run
 * fails with `NotFound` when it is on no folder and `NotCapable` when it is there, and runs
 * nothing either way. `undefined` when Deno cannot be asked so: the command is granted (it
 * would run), or Deno could prompt (a process the launcher did not start with
 * `--no-prompt`).
 */
export function foundByDeno(command: string, searchPath: string | undefined): boolean | undefined {
  if (!startedByLauncher()) return undefined;
  try {
    if (Deno.permissions.querySync({ name: "run", command }).state === "granted") return undefined;
    const child = new Deno.Command(command, {
      env: searchPath === undefined ? {} : { PATH: searchPath },
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    // Not expected under the launcher's --no-prompt; if it did start, it is there.
    child.kill("SIGKILL");
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    if (error instanceof Deno.errors.NotCapable) return true;
  }
  return undefined;
}
