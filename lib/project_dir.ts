/**
 * The folder holding patchbay's own files (main.ts, the example configuration), which the
 * configuration is looked for in last. A leaf, so the early start (`lib/early_start.ts`)
 * finds the configuration as `startUp` does without loading it.
 *
 * @module
 */

import { fileURLToPath } from "node:url";

/** The folder holding patchbay's own files; the working folder when run from a URL. */
export const PROJECT_DIR: string = import.meta.url.startsWith("file:")
  ? fileURLToPath(new URL("..", import.meta.url))
  : Deno.cwd();
