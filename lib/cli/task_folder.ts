/**
 * The folder the person ran patchbay from. `deno task` runs a task in the folder of its
 * deno.json, so `deno task start` and `deno task --config <checkout>/deno.json start` both
 * start in the checkout; where the person was is `INIT_CWD`, which `deno task` sets only
 * when it is not set already. Under `npx deno task …`, npm has set it (to the same folder)
 * and the user agent names npm instead of Deno, so the agent cannot tell a task apart:
 * the rule is where the process starts instead.
 *
 * Imports nothing: the launcher reads it before anything else.
 *
 * @module
 */

/**
 * The folder to work in when this process was started as `deno task` starts tasks (in
 * `project`, the folder of patchbay's deno.json) with `INIT_CWD` naming an existing folder;
 * `undefined` otherwise (the installed command, `deno run` elsewhere: the working folder is
 * already the person's).
 */
export function taskWorkingDirectory(project: string): string | undefined {
  let invokedFrom: string | undefined;
  let cwd: string;
  try {
    invokedFrom = Deno.env.get("INIT_CWD");
    cwd = Deno.cwd();
  } catch {
    return undefined; // Not granted: not the launcher or a client it started.
  }
  if (!invokedFrom || !sameFolder(cwd, project)) return undefined;
  try {
    return Deno.statSync(invokedFrom).isDirectory ? invokedFrom : undefined;
  } catch {
    return undefined;
  }
}

function sameFolder(a: string, b: string): boolean {
  const trim = (path: string) => path.replace(/\/+$/, "");
  if (trim(a) === trim(b)) return true;
  try {
    return Deno.realPathSync(a) === Deno.realPathSync(b);
  } catch {
    return false;
  }
}
