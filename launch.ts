/**
 * patchbay's launcher: the entry point of `deno task start`, `deno task install` and the
 * installed `patchbay`. It starts the client (`main.ts`) under the narrowest Deno
 * permissions the configuration needs (`lib/permissions/launcher.ts`); `--unrestricted`
 * runs it under the broad flags instead.
 *
 * @module
 */

import { launch } from "./lib/permissions/launcher.ts";

if (import.meta.main) {
  Deno.exit(await launch(Deno.args));
}
