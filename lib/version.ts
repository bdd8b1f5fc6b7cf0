/**
 * patchbay's version, read from deno.json so `--version` and the package can never
 * disagree.
 *
 * @module
 */

import manifest from "../deno.json" with { type: "json" };

export const VERSION: string = manifest.version;
export const NAME = "patchbay";
