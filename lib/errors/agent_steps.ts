/**
 * The remedies of the agent's own refusals (remembered approvals, a server's sampling
 * requests, images the model refuses) and of a hook that fails or refuses (`lib/agent/`,
 * `lib/hooks/`): part of the failure table (`lib/errors/failure_table.ts`), kept in a file
 * of their own so the table stays within the size of a file. A step naming a slash command
 * is worded per surface; a function takes the values only known when it fails.
 *
 * @module
 */

import { perSurface } from "./failure_table.ts";

/** Where a person sees a tool's input schema. */
const SCHEMA_SHOWN = { repl: "/tools", script: "`patchbay tools --json`" };

/** The first step for an `updatedInput` the tool's schema refuses. */
const FIT_THE_SCHEMA =
  perSurface`make the hook's updatedInput fit the tool's input schema (${SCHEMA_SHOWN} shows it)`;

/** How a person gets a hook's input logged. */
const DEBUG_LOG = { repl: "/debug", script: "--debug" };

/** Steps of the remedies of the agent's refusals and of hooks. */
export const AGENT_STEPS = {
  /** An approvals file past the size patchbay reads. */
  forgetApprovals: (path: string): string =>
    `delete it (rm ${path}), which forgets every remembered approval`,
  /** An approvals file that cannot be read. */
  fixApprovals: (path: string): string =>
    `fix or delete ${path} (deleting it forgets every remembered approval); ` +
    "it is left as it is meanwhile",
  /** A hook's question answered no, or that no one could answer. */
  hookQuestion: "answer the question at a terminal, or change the hook (the Hooks section of " +
    "servers_config.json)",
  /** A model that refused a request with images. */
  noVision: 'set "vision": false in the LLM section of servers_config.json (images are ' +
    "then described to the model in words), or choose a model that takes images",
  /** A sampling request from `server`, whose entry sets "sampling": "deny". */
  samplingDenied: (server: string): string =>
    `set "sampling" to "ask" (or "allow") in the entry of '${server}' to let it use the model`,
  /** A sampling request asking for tool use. */
  samplingTools: "the server must sample without tools",
  /** A sampling request from `server` the person declined. */
  samplingDeclined: (server: string): string =>
    `approve it when asked, or set "sampling": "allow" in the entry of '${server}' ` +
    "if you trust the server",
  /** A hook's updatedInput the tool's input schema refuses. */
  hookInputRefused:
    perSurface`${FIT_THE_SCHEMA}; run the hook by hand with the input ${DEBUG_LOG} logs for it`,
  /** A hook's program not found; `folder`: where a relative path is taken from. */
  hookNotFound: (program: string, folder: string): string =>
    `install '${program}' or fix the hook's "command" (a relative path is taken ` +
    `from ${folder}, a bare name from the PATH hooks get)`,
  /** A hook's program that cannot be executed. */
  hookNotExecutable: (program: string): string =>
    `make it executable (chmod +x ${program}), or run it through its ` +
    `interpreter in "command" (sh ${program})`,
  /** A hook that ran past its timeout of `seconds`. */
  hookTimeout: (seconds: number): string =>
    `make the hook finish sooner, or raise its "timeout" (now ${seconds} s) ` +
    "in the Hooks section",
} as const;
