/**
 * The remedies of skills over MCP refused before or while they load (`lib/skills/`): part
 * of the failure table (`lib/errors/failure_table.ts`, around its row `skill_refused`),
 * kept in a file of their own so the table stays within the size of a file.
 *
 * @module
 */

import type { Remedy } from "./failure_table.ts";

/** Steps of the remedies of refused skills. */
export const SKILLS_STEPS = {
  /** A skill past patchbay's bounds (`maxFiles` files, 16 MB in all, 4 MB a file). */
  tooLarge: (maxFiles: number): string =>
    "ask the server's authors for a smaller skill: patchbay reads skills of " +
    `up to ${maxFiles} files and 16 MB in all, each file at most 4 MB`,
  /** A skill whose entry lists no files (`"resources": "dynamic"`), so nothing to verify. */
  listFiles: "patchbay loads only skills whose server lists every file with its digest and " +
    "size; ask the server's authors to publish this skill that way",
  /** A file asked for that the skill does not list: most often a path mistyped. */
  unlisted: {
    repl: "ask for a file the skill lists, by its path (`patchbay skills list --json` names " +
      "them); a file the server added since the listing needs /refresh <server> first",
    script: "ask for a file the skill lists, by its path (`patchbay skills list --json` names " +
      "them); a file the server added since the listing needs the command run again",
  } satisfies Remedy,
} as const;
