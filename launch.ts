/**
 * patchbay's launcher: the entry point of `deno task start`, `deno task install` and the
 * installed `patchbay`. It starts the client (`main.ts`) under the narrowest Deno
 * permissions the configuration needs (`lib/permissions/launcher.ts`); `--unrestricted`
 * runs it under the broad flags instead.
 *
 * @module
 */

import { NAME, VERSION } from "./lib/version.ts";

if (import.meta.main) {
  // `--version` needs no plan and no client: answered here, it costs one Deno start.
  if (Deno.args.length === 1 && (Deno.args[0] === "--version" || Deno.args[0] === "-v")) {
    console.log(`${NAME} ${VERSION}`);
    Deno.exit(0);
  }
  const { launch } = await import("./lib/permissions/launcher.ts");
  Deno.exit(await launch(Deno.args));
}
