/**
 * The steps that remedies share beyond the rows of the failure table
 * (`./failure_table.ts`, which re-exports them as `STEPS`), kept in a file of their own so
 * the table stays within the size of a file.
 *
 * @module
 */

import type { Remedy } from "./remedy.ts";

/**
 * Steps that remedies share beyond the rows, worded per surface: the interactive client
 * names its slash commands, a scripting command what it offers instead.
 */
export const STEPS = {
  /** A server request lost with its connection. */
  reconnect: {
    repl: "patchbay restarts the server by itself (see /connections); " +
      "run the request again once it is connected, or use /refresh",
    script: "run the command again once the server is up",
  },
  /** A server request failed for a reason patchbay cannot name. */
  requestFailed: {
    repl: "run /debug for details and retry; /refresh reconnects the server",
    script: "run the command again with --debug for details",
  },
  /** An MCP session that failed at an address that speaks MCP. */
  sessionFailed: {
    repl: "retry with /refresh; if it keeps failing, run /debug and check the server's own logs",
    script:
      "run the command again; if it keeps failing, add --debug and check the server's own logs",
  },
  /** A server that failed with a 5xx answer. */
  serverFault: {
    repl: "check the server's own logs, then retry with /refresh",
    script: "check the server's own logs, then run the command again",
  },
  /** A connection attempt that failed in a way patchbay does not handle. */
  unexpected: {
    repl: "run /debug and /refresh; if it persists, report the log as an issue",
    script: "run the command again with --debug; if it persists, report the log as an issue",
  },
  /** A server not connected now, for no reason patchbay recorded. */
  connect: { repl: "run /refresh to connect it", script: "run the command again" },
  /** Conversation memory can be switched off. */
  memoryOff: {
    repl: "turn persistence off with /memory",
    script: 'turn persistence off with "Memory": {"backend": "off"}',
  },
  /** A name that matched no `kind` (tool, prompt, resource): where the list of them is. */
  listOf: (kind: string): Remedy => ({
    repl: `see the list with /${kind}s`,
    script: `see the list with \`patchbay ${kind}s\``,
  }),
  /** Nothing offered at all: which servers failed to connect, and why. */
  serverStates: {
    repl: "check /connections for servers that failed to connect",
    script: "`patchbay tools` shows each server's state, and why one failed",
  },
  /** An OAuth login to try again. */
  retryLogin: (server: string): Remedy => ({
    repl: `retry the login (/refresh, or patchbay auth login ${server})`,
    script: `retry the login (patchbay auth login ${server})`,
  }),
  /** A model request that failed in a way patchbay does not handle. */
  modelUnexpected: {
    repl: "run /debug and try again; report the log if it repeats",
    script: "run the command again with --debug; report the log if it repeats",
  },
  /** A model request the provider rejected for one of the LLM settings. */
  modelSettings: {
    repl: "correct the LLM settings named in the provider's message (servers_config.json); " +
      "run /debug and try again to see the full request in the log",
    script: "correct the LLM settings named in the provider's message (servers_config.json); " +
      "run the command again with --debug to see the full request in the log",
  },
} as const;
