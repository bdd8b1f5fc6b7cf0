/**
 * The remedies of secrets read at run time (`lib/secrets/`): a helper command that prints
 * a key or headers, and the system keychain. Part of the failure table
 * (`lib/errors/failure_table.ts`, around its rows `secret_helper` and `keychain`), kept in
 * a file of their own so the table stays within the size of a file. What reads the secret
 * again differs by surface: `/refresh` (or the next message) in the interactive client, the
 * command run again in a script.
 *
 * @module
 */

import type { Remedy } from "./failure_table.ts";

/** The way around the keychain: a variable of `.env`, named where the value is used. */
const FROM_ENV = "take the value from .env with ${NAME} instead";

/** Steps of the remedies of secrets read at run time. */
export const SECRETS_STEPS = {
  /** A helper stopped before it answered (cancelled). */
  runAgain: "run it again",
  /** A keychain entry whose name patchbay will not pass to a program. */
  renameEntry: "rename the entry",
  /** No keychain tool on this system. */
  fromEnv: FROM_ENV,
  /** The end of a keychain fix: the way around it. */
  orFromEnv: `or ${FROM_ENV}`,
  /**
   * `fix`, then what runs a helper again: `/refresh` for headers (read at connection), the
   * next message for the model's key; a script runs the command again.
   */
  helperThen: (fix: string, headers: boolean): Remedy =>
    headers ? { repl: `${fix}, then /refresh`, script: `${fix}, then run the command again` } : {
      repl: `${fix}; the next message runs it again`,
      script: `${fix}, then run the command again`,
    },
  /** `fix`, then what reads the keychain again. */
  keychainThen: (fix: string): Remedy => ({
    repl: `${fix}, then /refresh`,
    script: `${fix}, then run the command again`,
  }),
} as const;
