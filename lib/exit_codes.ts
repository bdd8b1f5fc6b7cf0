/**
 * The exit codes of every command, as shells and the launcher read them. A leaf: it
 * imports nothing, so the launcher, the restart request and the error types all use it
 * (`lib/errors.ts` re-exports it as before).
 *
 * @module
 */

/** Exit codes shared by every command. */
export const EXIT = {
  ok: 0,
  /** The command ran and something failed (a check, a connection, a tool). */
  failure: 1,
  /** The command line itself was wrong (unknown flag, missing argument). */
  usage: 2,
  /** Interrupted by the user (Ctrl+C), as shells report SIGINT. */
  interrupted: 130,
  /** The reader of our output went away (`| head`), as shells report SIGPIPE. */
  brokenPipe: 141,
  /** Asked to stop (SIGTERM), as shells report it. */
  terminated: 143,
  /**
   * `run`: configured servers failed to connect: every one of them (the model answered
   * without tools), or any one with `--require-servers` (the model was not asked).
   */
  serversFailed: 3,
  /**
   * `call`: the tool ran as an MCP task still running when `tool_call_timeout` passed; it
   * goes on on the server (`patchbay tasks result <id>` fetches its result).
   */
  taskPending: 4,
} as const;
