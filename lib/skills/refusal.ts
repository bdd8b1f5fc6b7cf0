/**
 * A failed verification of a skill's file, as the SDK's `SkillsClient` reports it
 * (`SkillVerificationError`: unlisted, size, digest, frontmatter; an answer that holds no
 * usable content), turned into the `SkillRefusedError` a person reads: what failed, why,
 * and what to do (the failure table's `skill_refused` row).
 *
 * @module
 */

import { SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import { type SkillRefusal, SkillRefusedError } from "../errors.ts";
import { SKILLS_STEPS } from "../errors/skills_steps.ts";
import { showName } from "../text/names.ts";
import { abridge } from "../text/text.ts";

/** Characters of the SDK's account of a mismatch kept in the reason (it quotes the server). */
const ACCOUNT_CHARS = 600;

/** What each check that failed means, said before the SDK's account of it. */
const MEANING: Readonly<Record<SkillRefusal, string>> = {
  digest: "the file's content does not match the SHA-256 digest the server lists for it",
  size: "the file's length differs from the size the server lists for it",
  frontmatter: "SKILL.md's frontmatter differs from the server's entry for the skill",
  unlisted: "the file is not one the skill's entry lists",
  entry: "the server's answer cannot be verified",
};

/**
 * The refusal `error` means for `server`'s skill at `skill` (its path), or `undefined` when
 * `error` is no verification failure (a request that failed stays that failure).
 */
export function refusal(
  server: string,
  skill: string,
  error: unknown,
): SkillRefusedError | undefined {
  const account = (message: string) => abridge(showName(message), ACCOUNT_CHARS);
  if (error instanceof Error && error.name === "SkillVerificationError") {
    const reason = (error as Error & { reason?: string }).reason;
    const kind: SkillRefusal = reason === "digest" || reason === "size" ||
        reason === "frontmatter" || reason === "unlisted"
      ? reason
      : "entry";
    return new SkillRefusedError(
      server,
      skill,
      kind,
      `${MEANING[kind]}: ${account(error.message)}`,
      kind === "unlisted" ? SKILLS_STEPS.unlisted : undefined,
    );
  }
  if (error instanceof SdkError && error.code === SdkErrorCode.InvalidResult) {
    return new SkillRefusedError(
      server,
      skill,
      "entry",
      `${MEANING.entry}: ${account(error.message)}`,
    );
  }
  return undefined;
}
