/**
 * The remedies of a command line that cannot be run as given (`commands/`, the typed
 * errors of `lib/errors/run.ts`), and of a command to run again: part of the failure table
 * (`lib/errors/failure_table.ts`), kept in a file of their own so the table stays within the
 * size of a file. They name commands and flags, the same on both surfaces (usage errors
 * come from the command line only); a function takes the values only known when it fails
 * (the command tree's names, a usage line).
 *
 * @module
 */

/** Steps of the remedies of a command line, and of a command to run again. */
export const USAGE_STEPS = {
  /** A command line that could not be understood. */
  help: "run `patchbay --help` for usage",
  /** A usage line made from the command tree; `jsonArgs`: the command takes JSON arguments. */
  usage: (usage: string, jsonArgs: boolean): string =>
    `usage: ${usage}` +
    (jsonArgs ? `; JSON arguments are one word: quote them, e.g. '{"message": "hi"}'` : ""),
  /** An unknown command of the program `program`; `names`: its commands, listed. */
  commands: (names: string, program: string): string =>
    `commands: ${names}; run \`${program} --help\` for usage`,
  /** An unknown command of a group `where` (`patchbay mcp`); `names`: its commands, listed. */
  commandsOf: (where: string, names: string): string =>
    `the commands of ${where}: ${names}; \`${where} help\` lists them`,
  /** An unknown server named on the command line; `names`: the configured ones, listed. */
  configuredServers: (names: string): string => `servers in the configuration: ${names || "none"}`,
  /** `patchbay approvals revoke` without saying what. */
  revokeWhich: "patchbay approvals revoke <id|server|server/tool>, or --all for every one of " +
    "this folder",
  /** `patchbay completions` without a shell it knows. */
  completionsShell:
    "e.g. patchbay completions bash > ~/.local/share/bash-completion/completions/patchbay",
  /** `patchbay mcp import` without a source. */
  importWhich: "patchbay mcp import <client> (one of the names above), or patchbay mcp import " +
    "<path>",
  /** More servers in a source than one import adds. */
  importFewer: "keep only the servers you want in a copy of the file and import that, or add " +
    "them one at a time with `patchbay mcp add`",
  /** A source with no server that can be imported. */
  importNothing: "add servers with `patchbay mcp add`, or name another source",
  /** A prompt's required arguments not given to `patchbay prompt`. */
  promptArguments: "give each as name=value; `patchbay prompts` lists every prompt's arguments",
  /** `patchbay run` with no prompt. */
  runPrompt: 'e.g. patchbay run "what tools do you have?"  or  git diff | patchbay run ' +
    '"review this"',
  /** `--require-servers` and a server that did not connect. */
  requiredServers: "fix the servers (patchbay doctor), disable them in the configuration, or " +
    "run without --require-servers",
  /** `patchbay trace show --last` that is not a number. */
  traceLast: "e.g. patchbay trace show trace.jsonl --last 50",
  /** A condition patchbay does not handle: a bug to report. */
  internal: "run again with --debug and report the log (secrets are redacted) as an issue",
  /** A command the person cancelled. */
  cancelled: "run it again when ready",
  /** A command ended by a signal. */
  runAgain: "run the command again",
  /** A conversation `sessionId` open in another patchbay process. */
  openElsewhere: (sessionId: string): string =>
    "continue it there, or start patchbay --resume " + sessionId +
    " at a terminal, which offers to continue it as a new branch (a copy under a new id)",
} as const;
