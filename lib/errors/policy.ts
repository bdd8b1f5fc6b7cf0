/**
 * The errors of the administrator's policy (docs/policy.md): something it refuses (a
 * server, a tool, `--yes`), and a policy file patchbay cannot use, which stops it rather
 * than let it run under a looser policy than the administrator wrote.
 *
 * @module
 */

import { fill, ROWS } from "./failure_table.ts";
import { PatchbayError } from "./base.ts";

/** `<subject> is refused by the administrator's policy (<file>)`. */
export class PolicyRefusedError extends PatchbayError {
  /** What is refused: `Server 'x'`, `Tool 'x.y'`, `--yes`. */
  readonly subject: string;
  /** The policy file. */
  readonly file: string;
  constructor(subject: string, file: string, reason: string) {
    super("policy_refused", fill(ROWS.policy_refused.messages[0], { subject, file }), {
      reason,
      remedy: ROWS.policy_refused.remedy,
    });
    this.subject = subject;
    this.file = file;
  }
}

/** `The administrator's policy <file> cannot be used`: patchbay does not start. */
export class PolicyInvalidError extends PatchbayError {
  readonly file: string;
  constructor(file: string, reason: string, details: string[] = [], cause?: unknown) {
    super("policy_invalid", fill(ROWS.policy_invalid.messages[0], { file }), {
      reason,
      remedy: ROWS.policy_invalid.remedy,
      details,
      cause,
    });
    this.file = file;
  }
}

/**
 * A server the administrator's policy refuses, as the error every surface shows (here, not
 * in lib/connections/, so the scripting commands show it without loading the SDK).
 */
export function policyRefusal(
  server: string,
  refused: { file: string; reason: string },
): PolicyRefusedError {
  return new PolicyRefusedError(
    `Server '${server}'`,
    refused.file,
    `${refused.reason}, so patchbay does not start it, and your configuration cannot change that`,
  );
}
