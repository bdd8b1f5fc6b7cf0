/**
 * The errors of hooks (docs/hooks.md): a hook that failed (its row `hook_failed`), and what
 * a hook refused or ended (`hook_blocked`).
 *
 * @module
 */

import { fill, type RemedyText, ROWS } from "./failure_table.ts";
import { PatchbayError } from "./base.ts";

/**
 * A hook that failed: it ran past its timeout, exited with another code than 0 or 2, could
 * not start, flooded its output, answered what cannot be read, or rewrote a tool's input
 * into one the tool refuses. `command` is shown as written (abridged by the caller).
 */
export class HookFailedError extends PatchbayError {
  readonly event: string;
  constructor(event: string, command: string, reason: string, remedy?: RemedyText) {
    super("hook_failed", fill(ROWS.hook_failed.messages[0], { event, command }), {
      reason,
      remedy: remedy ?? ROWS.hook_failed.remedy,
    });
    this.event = event;
  }
}

/**
 * What a hook refused (a tool call, a prompt) or ended (`"continue": false`): `what` names
 * it, `reason` gives the hook's own words.
 */
export class HookBlockedError extends PatchbayError {
  constructor(what: string, reason: string, options: { stopped?: boolean } = {}) {
    super(
      "hook_blocked",
      fill(ROWS.hook_blocked.messages[options.stopped ? 1 : 0], { what }),
      { reason, remedy: ROWS.hook_blocked.remedy },
    );
  }
}
