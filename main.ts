/**
 * patchbay: an interactive client for the Model Context Protocol.
 *
 * The entry point. It loads as little as it can before it acts (start-up cost,
 * docs/performance.md): `--version` answers at once, and the servers of `tools`, `prompts`
 * and `resources` start (`lib/early_start.ts`) before the command tree, commander, zod and
 * the rest load (`commands/_program.ts`), so they boot meanwhile.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { startServersEarly } from "./lib/early_start.ts";
import { taskWorkingDirectory } from "./lib/cli/task_folder.ts";
import { NAME, VERSION } from "./lib/version.ts";

/**
 * `deno task` runs tasks in the folder of deno.json; INIT_CWD is where the user ran it.
 * Working from there lets `deno task --config <patchbay>/deno.json start` pick up the
 * user's own servers_config.json and .env, as npm scripts do (lib/task_folder.ts).
 * Returns the error of a move that failed (the program reports it).
 */
function adoptTaskWorkingDirectory(): unknown {
  // Run from a URL (an install from a web server), there is no checkout to start in.
  if (!import.meta.url.startsWith("file:")) return undefined;
  try {
    const invokedFrom = taskWorkingDirectory(fileURLToPath(new URL(".", import.meta.url)));
    if (invokedFrom && invokedFrom !== Deno.cwd()) Deno.chdir(invokedFrom);
    return undefined;
  } catch (error) {
    return error;
  }
}

if (import.meta.main) {
  // The commonest call that needs nothing else answers before anything is loaded.
  if (Deno.args.length === 1 && (Deno.args[0] === "--version" || Deno.args[0] === "-v")) {
    console.log(`${NAME} ${VERSION}`);
    Deno.exit(0);
  }
  // The folder first: the configuration is found from it.
  const failure = adoptTaskWorkingDirectory();
  const started = failure === undefined ? await startServersEarly(Deno.args) : 0;
  const { run } = await import("./commands/_program.ts");
  Deno.exit(await run(Deno.args, { failure, started }));
}
