/**
 * patchbay's launcher: the entry point of `deno task start`, `deno task install` and the
 * installed `patchbay`. It starts the client (`main.ts`) under the narrowest Deno
 * permissions the configuration needs (`lib/permissions/launcher.ts`); `--unrestricted`
 * runs it under the broad flags instead.
 *
 * @module
 */

import { NAME, VERSION } from "./lib/version.ts";
// Loaded with the entry point: without read access (`deno run launch.ts`) nothing else
// could load to say what is missing.
import * as needs from "./lib/permissions/launcher_needs.ts";

/**
 * Loads one of the launcher's modules when it is needed. The address is built at run time
 * so Deno does not load it (and everything it imports) before the first line runs, as it
 * does for `import("./literal.ts")`: `--version` then costs little more than an empty
 * Deno program (docs/performance.md). Such an import needs read access to the file, which
 * the launcher has once `missingGrants` found nothing missing.
 */
function load<T>(path: string): Promise<T> {
  return import(new URL(path, import.meta.url).href);
}

if (import.meta.main) {
  // `--version` needs no plan and no client: answered here, it costs one Deno start.
  if (Deno.args.length === 1 && (Deno.args[0] === "--version" || Deno.args[0] === "-v")) {
    console.log(`${NAME} ${VERSION}`);
    Deno.exit(0);
  }
  // Started without its own grants (`deno run launch.ts`, `deno install -g` with no flags),
  // it says which and how to start it, rather than fail at the first with a stack trace.
  const missing = needs.missingGrants(Deno.args, new URL(import.meta.url));
  if (missing) {
    console.error(
      `error: ${missing.message}\n  cause:  ${missing.cause}\n  remedy: ${missing.remedy}`,
    );
    Deno.exit(1);
  }
  const notice = needs.unwritableStateNotice();
  if (notice) console.error(notice);
  const { handOverEarly, launch, plainLaunchArgs } = await load<
    typeof import("./lib/permissions/launcher.ts")
  >("./lib/permissions/launcher.ts");
  // `tools`, `prompts` and `resources` in their plain form need no declaration read, and
  // their servers start now, before the client (lib/transports/handoff.ts).
  const plain = plainLaunchArgs(Deno.args);
  const handover = plain ? await handOverEarly(plain) : undefined;
  // The commands' one declaration says what each needs (plain data: no commander, no npm).
  const grammar = plain ?? (await load<typeof import("./commands/_declarations.ts")>(
    "./commands/_declarations.ts",
  )).ROOT;
  Deno.exit(await launch(Deno.args, grammar, { handover }));
}
