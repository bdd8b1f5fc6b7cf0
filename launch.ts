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
  // The launcher starts the client from the files beside it (main.ts, deno.json): from a
  // URL or a package there are none to start, so say what works instead of crashing.
  if (!import.meta.url.startsWith("file:")) {
    console.error(
      `error: patchbay's launcher runs from a checkout, not from ${import.meta.url}\n` +
        "  cause: it starts the client from the files on disk beside it, under the narrow " +
        "permissions of each configuration\n" +
        "  remedy: clone the repository and run `deno task install` in it, or install the " +
        "client itself with the flags `patchbay permissions` prints (docs/installation.md)",
    );
    Deno.exit(1);
  }
  const { launch } = await import("./lib/permissions/launcher.ts");
  Deno.exit(await launch(Deno.args));
}
