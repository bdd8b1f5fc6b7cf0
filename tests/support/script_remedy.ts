/**
 * What a scripting command shows for a remedy the interactive client showed: the slash
 * commands replaced by what a script offers (or dropped). patchbay keeps both wordings as
 * data (lib/failure_table.ts); this is the tests' independent reading of how the two
 * relate, so a script remedy that drifts from its interactive one is noticed.
 *
 * @module
 */

import type { Surface } from "../../lib/errors/failure_table.ts";

/** Each interactive phrase and its scripting counterpart, applied in this order. */
const SCRIPT_PHRASES: readonly (readonly [RegExp, string])[] = [
  [/ \(or run \/refresh once it is up\)/g, ""],
  [/; \/api_stats shows what was used/g, ""],
  [/; \/api_stats shows what the session has used/g, ""],
  [
    /patchbay restarts the server by itself \(see \/connections\); run the request again once it is connected, or use \/refresh/g,
    "run the command again once the server is up",
  ],
  [
    /run \/debug for details and retry; \/refresh reconnects the server/g,
    "run the command again with --debug for details",
  ],
  [
    /retry with \/refresh; if it keeps failing, run \/debug/g,
    "run the command again; if it keeps failing, add --debug",
  ],
  [/then retry with \/refresh/g, "then run the command again"],
  [/run \/debug and \/refresh/g, "run the command again with --debug"],
  [/turn persistence off with \/memory/g, 'turn persistence off with "Memory": {"backend": "off"}'],
  [/run \/debug for details/g, "run again with --debug for details"],
  [/check the tool exists with \/tools/g, "check the tool exists with `patchbay tools`"],
  [/run \/refresh to connect it/g, "run the command again"],
  [/retry the login \(\/refresh, or (patchbay auth login [^)]+)\)/g, "retry the login ($1)"],
  // Secrets (docs/secrets.md): a helper or the keychain fixed, then asked again.
  [/, then \/refresh$/g, ", then run the command again"],
  [/; the next message runs it again$/g, ", then run the command again"],
];

/** The remedy `repl` (as the interactive client showed it) as `surface` should show it. */
export function expectedRemedy(repl: string, surface: Surface): string {
  if (surface === "repl") return repl;
  return SCRIPT_PHRASES.reduce((text, [pattern, to]) => text.replace(pattern, to), repl);
}
