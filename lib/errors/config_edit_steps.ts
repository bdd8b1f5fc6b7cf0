/**
 * The remedies of a configuration edit that cannot be made (`patchbay mcp add`, `remove`,
 * `import`: `lib/config/edit.ts`, `commands/_config_edit.ts`): part of the failure table
 * (`lib/errors/failure_table.ts`), kept in a file of their own so the table stays within the
 * size of a file. They name the editing commands' flags, the same on both surfaces (the
 * edits are commands); a function takes the values only known when it fails (files, names).
 *
 * @module
 */

import { CONFIG_STEPS } from "./config_steps.ts";

/** Steps of the remedies of a configuration edit that cannot be made. */
export const CONFIG_EDIT_STEPS = {
  /** An unknown `--scope`; `userFile`: the user's configuration file. */
  scope: (userFile: string): string =>
    "--scope project (servers_config.json here, the default) or --scope user " +
    `(${userFile})`,
  /** `--scope user` and `--config` together. */
  scopeOrConfig: (userFile: string): string => "drop one of them: --scope user edits " + userFile,
  /** A configuration file past the size patchbay reads. */
  otherConfig: CONFIG_STEPS.otherConfig,
  /** An environment file past the size patchbay reads. */
  otherEnvFile: CONFIG_STEPS.otherEnvFile,
  /** A file that could not be read. */
  unreadable: CONFIG_STEPS.unreadable,
  /** The temporary file of another edit is there. */
  editUnderWay: (temporary: string): string =>
    `wait for the other edit, or remove ${temporary} if none is running`,
  /** A read-only file its owner protected. */
  readOnly: (path: string): string =>
    `chmod u+w ${path} to let patchbay edit it, then run the command again`,
  /** A file that could not be written. */
  unwritable: "make the file and its folder writable by you, then run the command again",
  /** A server name the configuration has already. */
  nameTaken: (name: string): string =>
    `remove it first (patchbay mcp remove ${name}) or pick another name; ` +
    "nothing was written",
  /** Secrets kept inline in a file others may read. */
  secretsInSharedFile: (envFile: string, file: string): string =>
    `let patchbay move them to ${envFile} (--move-secrets), or first ` +
    `chmod 600 ${file}`,
  /** `--move-secrets` with `--keep-secrets-inline`. */
  oneSecretsFlag: "give one of them",
  /** Secrets to place with nobody at a terminal to ask. */
  secretsFlag: (envFile: string, file: string): string =>
    `add --move-secrets to put them in ${envFile} (readable by you only) ` +
    "as the ${VARIABLE}s shown, or --keep-secrets-inline to write them into the " +
    `entries (then ${file} must be readable by you only)`,
  /** An answer to the secrets question that is neither yes nor no. */
  answerSecrets: "run the command again and answer y (or Enter) or n; nothing was written",
} as const;
