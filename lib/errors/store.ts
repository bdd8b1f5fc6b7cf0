/**
 * The errors of conversation memory: a store that cannot be reached or refuses us, that
 * fails an operation, a session that is not there, a conversation another process holds.
 *
 * @module
 */

import { fill, type RemedyText, ROWS } from "./failure_table.ts";
import { type ErrorDetails, PatchbayError } from "./base.ts";
import { USAGE_STEPS } from "./usage_steps.ts";

/**
 * `Could not connect to <store> at <target>: <problem>`: the memory store is unreachable or
 * refused us. `explain` gives a longer probable cause and a remedy fitted to the problem.
 */
export class StoreConnectError extends PatchbayError {
  readonly store: string;
  readonly target: string;
  /** What went wrong, the end of the message (`connection refused`). */
  readonly problem: string;
  constructor(
    store: string,
    target: string,
    problem: string,
    cause?: unknown,
    explain: { reason?: string; remedy?: RemedyText } = {},
  ) {
    super("store_unreachable", fill(ROWS.store.messages[0], { store, target, problem }), {
      reason: explain.reason ?? problem,
      remedy: explain.remedy ?? ROWS.store.remedy,
      cause,
    });
    this.store = store;
    this.target = target;
    this.problem = problem;
  }
}

/** The password (or ACL user) was rejected, or the store wants one and none was given. */
export class StoreAuthError extends StoreConnectError {}

/** `REDIS_DB` names a database the server does not have. */
export class StoreDatabaseError extends StoreConnectError {}

/** The store works but refused an operation, or holds data this version cannot read. */
export class StoreFailedError extends PatchbayError {
  constructor(message: string, info: ErrorDetails) {
    super("store_failed", message, info);
  }
}

/** `--resume <id>` or `patchbay sessions show <id>` named no stored session. */
export class SessionNotFoundError extends PatchbayError {
  constructor(message: string, reason: string, remedy: string) {
    super("session_not_found", message, { reason, remedy });
  }
}

/**
 * A conversation another patchbay process has open (it holds its lease): opening it too
 * would interleave the two processes' turns.
 */
export class ConversationHeldError extends PatchbayError {
  readonly sessionId: string;
  readonly holder: { pid: number; since: string };
  constructor(
    sessionId: string,
    holder: { pid: number; since: string },
    expiresInMs: number,
  ) {
    super("usage", `Conversation ${sessionId} is open in another patchbay`, {
      reason: `patchbay process ${holder.pid} has had it open since ${holder.since}; two ` +
        "processes writing one conversation would interleave their turns (if that process " +
        `has ended without closing it, it is free within ${Math.ceil(expiresInMs / 1000)} s)`,
      remedy: USAGE_STEPS.openElsewhere(sessionId),
    });
    this.sessionId = sessionId;
    this.holder = holder;
  }
}
