/**
 * The early start (start-up cost): `tools`, `prompts` and `resources` connect every enabled
 * server, and a stdio server such as server-everything needs about half a second from spawn
 * to its first answer, more than patchbay needs to load the code that speaks to it. So the
 * entry point (`main.ts`) starts those servers' processes first, before it loads the
 * command tree, commander, zod and the configuration's schemas: they boot while all that
 * loads. The command's own start then takes them (`lib/transports/spawn.ts`) instead of
 * starting them again.
 *
 * Only under the launcher's plan: the launcher computed that plan by running the full
 * validation on these very files (and computes it again when one of them changes), so the
 * servers started here are the ones the command starts. A client started otherwise
 * (`--unrestricted`, a compiled binary, `deno run main.ts`) starts its servers once its
 * configuration is validated, as before; one whose plan could not be computed has no
 * `--allow-run` and starts nothing. The servers start under the same grants either way: it
 * is the same process, with the same flags.
 *
 * Imports only the root flags' reader: every command pays for loading this module, the
 * configuration's reader loads only when a server is to be started.
 *
 * @module
 */

import { flagLike, readRootFlags, type RootFlags } from "./cli/root_flags.ts";
import { startedByLauncher } from "./deno_permission/launched.ts";
import { PROJECT_DIR } from "./project_dir.ts";

/**
 * The commands that connect every enabled server before they act, whatever their words
 * say (their `[server]` chooses what is shown, not what is connected), and nothing else
 * before that.
 */
export const EARLY_START_COMMANDS: readonly string[] = ["tools", "prompts", "resources"];

/**
 * The root flags of `args` when it runs one of {@linkcode EARLY_START_COMMANDS} in its plain
 * form (plain root flags, the command, at most one server name and `--json`); else
 * `undefined`, and the servers start once the command has validated its configuration.
 */
export function earlyStartFlags(args: readonly string[]): RootFlags | undefined {
  const read = readRootFlags(args);
  if (!read) return undefined;
  const [command, ...words] = read.rest;
  if (!EARLY_START_COMMANDS.includes(command)) return undefined;
  let names = 0;
  for (const word of words) {
    if (word === "--json") continue;
    // `--help`, `--`, another flag, a second word: commander's to read.
    if (flagLike(word) || ++names > 1) return undefined;
  }
  return read.flags;
}

/**
 * Starts the processes of the stdio servers the command `args` will connect, when it is one
 * of {@linkcode EARLY_START_COMMANDS} run by the launcher under its plan. Returns how many
 * it started; never throws (anything it cannot do, the command does as before).
 */
export async function startServersEarly(args: readonly string[]): Promise<number> {
  const flags = earlyStartFlags(args);
  if (!flags || !startedByLauncher()) return 0;
  try {
    const [{ readStdioEntries }, { adoptHandedOff, prespawnAll, stdioSpawnSpecs }] = await Promise
      .all([
        import("./config/stdio_entries.ts"),
        import("./transports/spawn.ts"),
      ]);
    const read = await readStdioEntries(flags, PROJECT_DIR);
    if (!read) return 0;
    const specs = stdioSpawnSpecs(read.servers, (name) => read.env.get(name));
    // Those the launcher started are taken over; the others start here.
    const adopted = await adoptHandedOff(specs);
    return adopted + prespawnAll(specs, "early");
  } catch {
    return 0;
  }
}
