/**
 * The errors of secrets that never touch a file (docs/secrets.md): a helper program
 * (`headers_helper`, `LLM.api_key_helper`) that could not give what it is for, and a
 * `${keychain:NAME}` the keychain could not give.
 *
 * @module
 */

import { fill, type RemedyText, ROWS } from "./failure_table.ts";
import { PatchbayError } from "./base.ts";

/** Which helper failed: a server's `headers_helper`, or the model key's `api_key_helper`. */
export type HelperRole = { kind: "headers"; server: string } | { kind: "api_key" };

/** The field a helper is configured in, as a remedy names it. */
export function helperField(role: HelperRole): string {
  return role.kind === "headers"
    ? `mcpServers.${role.server}.headers_helper`
    : "LLM.api_key_helper";
}

/** A helper program failed, or printed what patchbay cannot use; nothing of it was sent. */
export class SecretHelperError extends PatchbayError {
  readonly role: HelperRole;
  constructor(
    role: HelperRole,
    info: { reason: string; remedy?: RemedyText; details?: string[] },
  ) {
    super(
      "secret_helper_failed",
      role.kind === "headers"
        ? fill(ROWS.secret_helper.messages[0], { server: role.server })
        : ROWS.secret_helper.messages[1],
      { ...info, remedy: info.remedy ?? ROWS.secret_helper.remedy },
    );
    this.role = role;
  }
}

/** Why a keychain entry could not be read. */
export type KeychainProblem = "missing" | "unavailable";

/**
 * `${keychain:NAME}` could not be read: no such entry (the remedy is the command that stores
 * it), or no keychain to ask (the tool is missing, locked, timed out or refused).
 */
export class KeychainError extends PatchbayError {
  readonly entry: string;
  readonly problem: KeychainProblem;
  constructor(
    entry: string,
    problem: KeychainProblem,
    info: { reason: string; remedy: RemedyText; details?: string[] },
  ) {
    super(
      "keychain_failed",
      fill(ROWS.keychain.messages[problem === "missing" ? 0 : 1], { name: entry }),
      info,
    );
    this.entry = entry;
    this.problem = problem;
  }
}
