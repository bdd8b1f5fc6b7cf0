/**
 * `deno task install`: writes the `patchbay` command, a shell script that runs the launcher
 * (`launch.ts`) of this checkout with the Deno that ran the install, named by its absolute
 * path, so the command works without `deno` on PATH. The launcher then starts the client
 * under the narrowest permissions of the configuration in effect at each start.
 *
 * Where: `$DENO_INSTALL_ROOT/bin`, else `~/.deno/bin` (as `deno install` does).
 *
 * @module
 */

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PROJECT = fileURLToPath(new URL("../", import.meta.url));
const NAME = "patchbay";

/** One argument quoted for a POSIX shell. */
function quote(argument: string): string {
  return `'${argument.replaceAll("'", `'\\''`)}'`;
}

/** A directory npm may clear (npx's cache), where a Deno run by `npx deno` lives. */
function isTemporaryDeno(path: string): boolean {
  return /[\\/]_npx[\\/]/.test(path);
}

/**
 * The path the shim runs Deno by: `Deno.execPath()` (the file itself, links resolved), or
 * a link to that same file found on PATH (e.g. /usr/local/bin/deno), which outlives a
 * change of the file it points to.
 */
function stableDeno(exec: string): string {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (!dir) continue;
    const candidate = join(dir, "deno");
    try {
      if (Deno.realPathSync(candidate) === exec && !isTemporaryDeno(candidate)) return candidate;
    } catch {
      // Not there.
    }
  }
  return exec;
}

/**
 * patchbay's state folder as the shell finds it at each start (lib/paths.ts' rule): the
 * launcher writes its remembered plans and the client's restart requests there, so the
 * command restarts under a wider plan as `deno task start` does, for whoever runs it.
 */
export const STATE_FOLDER_AT_START = '"${XDG_STATE_HOME:-$HOME/.local/state}/patchbay"';

/** The shim's text. */
export function shim(deno: string, exec: string, launcher: string, manifest: string): string {
  const flags = [
    // Deno's own notices and progress-bar erasures stay off the person's terminal.
    "--quiet",
    "--no-prompt",
    "--allow-read",
    "--allow-env",
    `--allow-run=${exec}`,
  ];
  return [
    "#!/bin/sh",
    `# patchbay, installed by \`deno task install\` from ${PROJECT}`,
    "# The launcher starts the client under the narrowest permissions of the configuration,",
    "# and starts it again under a wider plan when it asks (/refresh after `patchbay mcp add`).",
    `exec ${quote(deno)} run ${flags.map(quote).join(" ")} ` +
    `--allow-write=${STATE_FOLDER_AT_START} --config ${quote(manifest)} ` +
    `${quote(launcher)} "$@"`,
    "",
  ].join("\n");
}

async function main(): Promise<number> {
  if (Deno.build.os === "windows") {
    console.error(
      "error: deno task install writes a POSIX shell script and does not support Windows yet\n" +
        "  fix: run `patchbay permissions` and install with the `deno install` line it prints",
    );
    return 1;
  }
  const exec = Deno.execPath();
  const deno = stableDeno(exec);
  const root = Deno.env.get("DENO_INSTALL_ROOT") ?? join(Deno.env.get("HOME") ?? "", ".deno");
  const bin = join(root, "bin");
  const manifest = join(PROJECT, "deno.json");
  const launcher = join(PROJECT, "launch.ts");
  // Fetch every module now, so the first start does not download.
  const cache = await new Deno.Command(exec, {
    args: ["cache", "--config", manifest, launcher, join(PROJECT, "main.ts")],
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (cache.code !== 0) {
    console.error("error: could not fetch patchbay's modules (see above); nothing was installed");
    return 1;
  }
  await Deno.mkdir(bin, { recursive: true });
  const path = join(bin, NAME);
  await Deno.writeTextFile(path, shim(deno, exec, launcher, manifest), { mode: 0o755 });
  await Deno.chmod(path, 0o755);
  console.error(`✓ Installed ${path} (runs ${deno})`);
  if (isTemporaryDeno(deno)) {
    console.error(
      `warning: this Deno is in npx's cache (${dirname(deno)}), which npm may clear; ` +
        "patchbay then stops starting.\n" +
        "  fix: install Deno (https://docs.deno.com/runtime/getting_started/installation/) " +
        "and run `deno task install` again with it",
    );
  }
  if (!(Deno.env.get("PATH") ?? "").split(":").includes(bin)) {
    console.error(`  add ${bin} to PATH to run it as \`${NAME}\``);
  }
  return 0;
}

if (import.meta.main) Deno.exit(await main());
