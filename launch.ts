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
  // Started without its own grants (`deno run launch.ts`, `deno install -g` with no flags),
  // it says which and how to start it, rather than fail at the first with a stack trace.
  const needs = await import("./lib/permissions/launcher_needs.ts");
  const missing = needs.missingGrants(Deno.args, new URL(import.meta.url));
  if (missing) {
    console.error(
      `error: ${missing.message}\n  cause:  ${missing.cause}\n  remedy: ${missing.remedy}`,
    );
    Deno.exit(1);
  }
  const notice = needs.unwritableStateNotice();
  if (notice) console.error(notice);
  const { launch } = await import("./lib/permissions/launcher.ts");
  // The commands' one declaration says what each needs (plain data: no commander, no npm).
  const { ROOT } = await import("./commands/_declarations.ts");
  Deno.exit(await launch(Deno.args, ROOT));
}
