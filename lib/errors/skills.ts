/**
 * The errors of Skills over MCP (SEP-2640, docs/skills.md): a skill refused because what its
 * server sent does not verify against the server's own entry for it, and a skill no
 * connected server lists.
 *
 * @module
 */

import { fill, type RemedyText, ROWS } from "./failure_table.ts";
import { PatchbayError } from "./base.ts";

/** Why a skill was refused: the check that failed. */
export type SkillRefusal =
  /** A file's bytes hash to another digest than its entry lists. */
  | "digest"
  /** A file's length differs from the size its entry lists. */
  | "size"
  /** SKILL.md's frontmatter differs from the entry's, or cannot be read. */
  | "frontmatter"
  /** A file the entry does not list. */
  | "unlisted"
  /** The entry itself: no digests (`dynamic`), invalid, or past patchbay's limits. */
  | "entry";

/** `Skill refused: <server>:<skill>`: nothing of it was used. */
export class SkillRefusedError extends PatchbayError {
  readonly server: string;
  readonly skill: string;
  readonly refusal: SkillRefusal;
  constructor(
    server: string,
    skill: string,
    refusal: SkillRefusal,
    reason: string,
    remedy: RemedyText = {
      repl: fill(ROWS.skill_refused.remedy.repl, { server }),
      script: fill(ROWS.skill_refused.remedy.script, { server }),
    },
  ) {
    super(
      "skill_refused",
      fill(ROWS.skill_refused.messages[0], { skill: `${server}:${skill}` }),
      { reason, remedy },
    );
    this.server = server;
    this.skill = skill;
    this.refusal = refusal;
  }
}

/** `Unknown skill: <name>`: no connected server lists it, or several do. */
export class SkillNotFoundError extends PatchbayError {
  constructor(skill: string, reason: string, remedy: RemedyText = ROWS.skill_not_found.remedy) {
    super("skill_not_found", fill(ROWS.skill_not_found.messages[0], { skill }), {
      reason,
      remedy,
    });
  }
}
