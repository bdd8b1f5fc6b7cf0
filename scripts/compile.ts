/**
 * `deno task compile`: builds patchbay as a standalone binary, for this machine or for every
 * platform `deno compile --target` knows.
 *
 * ```sh
 * deno task compile                                # dist/patchbay (this machine's platform)
 * deno task compile --all                          # dist/patchbay-<target>[.exe], every target
 * deno task compile --target aarch64-apple-darwin  # dist/patchbay-aarch64-apple-darwin
 * ```
 *
 * A binary cannot start itself again under other flags, as the launcher does, and its flags
 * are fixed when it is built: a path in them (a `$HOME` expanded by the task) would name the
 * building account's folders, not those of whoever runs it. So {@linkcode BINARY_FLAGS} hold
 * no path: writing is not limited by Deno, and patchbay itself writes only its own folders
 * (found at each start: HOME, XDG_STATE_HOME, XDG_DATA_HOME, XDG_CONFIG_HOME) and the files
 * named on its command line. docs/installation.md says what that trades away.
 *
 * Each build needs Deno's compile runtime (`denort`) for its target, which `deno compile`
 * downloads from dl.deno.land on first use.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CLIENT_V8_FLAGS } from "../lib/cli/v8_flags.ts";

const PROJECT = fileURLToPath(new URL("../", import.meta.url));

/** Every platform `deno compile --target` builds for (Deno 2.9). */
export const TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
  "aarch64-pc-windows-msvc",
] as const;

/** A platform {@linkcode TARGETS} names. */
export type Target = typeof TARGETS[number];

/**
 * The permissions baked into every binary: the broad set of `--unrestricted`, with writing
 * not limited to a path either (no path is right for every account that runs the binary),
 * and of system information only the host name (a conversation's lease tells a holder on
 * this machine from one elsewhere). No prompt: a refusal is a message.
 */
export const BINARY_FLAGS: readonly string[] = [
  "--no-prompt",
  "--allow-env",
  "--allow-read",
  "--allow-write",
  "--allow-net",
  "--allow-run",
  "--allow-sys=hostname",
];

/**
 * Files the binary reads beside its code: the example configuration (used when no
 * configuration exists yet) and its schema.
 */
export const INCLUDED: readonly string[] = [
  "servers_config.example.json",
  "servers_config.schema.json",
];

/** The file a build for `target` writes (no target: this machine's, `dist/patchbay`). */
export function outputFor(target?: Target): string {
  if (target === undefined) return join(PROJECT, "dist", "patchbay");
  return join(PROJECT, "dist", `patchbay-${target}${target.includes("windows") ? ".exe" : ""}`);
}

/** The `deno compile` arguments of one build. */
export function compileArgs(target?: Target): string[] {
  return [
    "compile",
    "--output",
    outputFor(target),
    ...(target ? ["--target", target] : []),
    CLIENT_V8_FLAGS,
    ...BINARY_FLAGS,
    "--config",
    join(PROJECT, "deno.json"),
    ...INCLUDED.flatMap((file) => ["--include", join(PROJECT, file)]),
    join(PROJECT, "main.ts"),
  ];
}

/** The targets a command line asks for; `undefined` for a wrong one (usage error). */
export function targetsFrom(args: readonly string[]): (Target | undefined)[] | undefined {
  if (args.length === 0) return [undefined];
  if (args.length === 1 && args[0] === "--all") return [...TARGETS];
  if (args.length === 2 && args[0] === "--target") {
    const target = TARGETS.find((known) => known === args[1]);
    return target ? [target] : undefined;
  }
  return undefined;
}

async function main(args: readonly string[]): Promise<number> {
  const targets = targetsFrom(args);
  if (!targets) {
    console.error(
      `error: unknown arguments: ${args.join(" ")}\n` +
        "  remedy: deno task compile [--all | --target <target>], a target of:\n" +
        TARGETS.map((target) => `    ${target}`).join("\n"),
    );
    return 2;
  }
  const failed: string[] = [];
  for (const target of targets) {
    const { success } = await new Deno.Command(Deno.execPath(), {
      args: compileArgs(target),
      stdin: "null",
      stdout: "inherit",
      stderr: "inherit",
    }).spawn().status;
    if (!success) failed.push(target ?? Deno.build.target);
  }
  if (failed.length > 0) {
    console.error(
      `error: deno compile failed for ${failed.join(", ")} (its message is above)\n` +
        "  remedy: a build downloads Deno's runtime for its target from dl.deno.land: " +
        "run it where that host is reachable",
    );
    return 1;
  }
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
