/**
 * patchbay run under an administrator's policy at its real, fixed place
 * (`/etc/patchbay/managed.json`, lib/policy/place.ts), without touching the machine's
 * `/etc`: the process gets a user and mount namespace of its own (`unshare`) where an
 * overlay puts a folder of the test's over `/etc`. Nothing a user's environment can set
 * reaches this seam, and it is gone when the process ends.
 *
 * @module
 */

import { join } from "node:path";
import { type CliResult, runCommand, type Sandbox } from "./cli.ts";
import { DENO } from "./deps.ts";

const PROJECT = new URL("../../", import.meta.url).pathname;

/** What the namespace runs: `/etc` overlaid with `$1` (upper) and `$2` (work), then `$@`. */
const OVERLAY_ETC = 'mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1,workdir=$2" /etc ' +
  '&& shift 2 && exec "$@"';

/** Whether this machine lets a process overlay `/etc` in a namespace of its own. */
export async function canPlacePolicy(): Promise<boolean> {
  if (Deno.build.os !== "linux") return false;
  const dir = await Deno.makeTempDir({ prefix: "patchbay-policy-probe-" });
  try {
    await Deno.mkdir(join(dir, "upper"));
    await Deno.mkdir(join(dir, "work"));
    const probe = await new Deno.Command("unshare", {
      args: namespaceArgs(join(dir, "upper"), join(dir, "work"), ["true"]),
      stdout: "null",
      stderr: "null",
    }).output();
    return probe.success;
  } catch {
    return false;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** Options of {@linkcode runUnderPolicy}. */
export interface PolicyRunOptions {
  /** The policy file's mode. @default 0o644 */
  mode?: number;
  /** The mode of its folder, /etc/patchbay. @default 0o755 */
  folderMode?: number;
}

/**
 * Runs `deno task start <args>` in `box` with `policy` (JSON text, or an object written as
 * JSON) at `/etc/patchbay/managed.json`, as an administrator would have put it there.
 */
export async function runUnderPolicy(
  box: Sandbox,
  policy: string | Record<string, unknown>,
  args: string[],
  options: PolicyRunOptions = {},
): Promise<CliResult> {
  const root = join(box.home, ".policy-overlay");
  const upper = join(root, "upper");
  const work = join(root, "work");
  await Deno.remove(root, { recursive: true }).catch(() => {});
  await Deno.mkdir(join(upper, "patchbay"), { recursive: true });
  await Deno.mkdir(work);
  // The upper folder's own mode becomes /etc's: the machine's.
  await Deno.chmod(upper, (await Deno.stat("/etc")).mode! & 0o7777);
  const file = join(upper, "patchbay", "managed.json");
  await Deno.writeTextFile(
    file,
    typeof policy === "string" ? policy : JSON.stringify(policy, null, 2),
  );
  await Deno.chmod(file, options.mode ?? 0o644);
  await Deno.chmod(join(upper, "patchbay"), options.folderMode ?? 0o755);
  const command = [DENO, "task", "--quiet", "--config", join(PROJECT, "deno.json"), "start"];
  return await runCommand("unshare", namespaceArgs(upper, work, [...command, ...args]), {
    cwd: box.cwd,
    env: box.env,
  });
}

function namespaceArgs(upper: string, work: string, command: string[]): string[] {
  return [
    "--user",
    "--map-root-user",
    "--mount",
    "sh",
    "-c",
    OVERLAY_ETC,
    "sh",
    upper,
    work,
    ...command,
  ];
}
