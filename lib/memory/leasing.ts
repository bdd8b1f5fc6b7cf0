/**
 * The lease of the conversation this process has open (`lease.ts`): taken when one is
 * resumed or started, given up when another one is started and at close.
 *
 * @module
 */

import { ConversationHeldError } from "../errors.ts";
import type { Log } from "../log/log.ts";
import { HeldLease, LEASE_TTL_MS, thisProcess } from "./lease.ts";
import type { MemoryStore } from "./types.ts";

/** Holds at most one lease: the current conversation's. */
export class Leasing {
  readonly #log: Log | undefined;
  #held: HeldLease | undefined;

  constructor(log?: Log) {
    this.#log = log;
  }

  /** The conversation whose lease is held. */
  get sessionId(): string | undefined {
    return this.#held?.sessionId;
  }

  /**
   * Takes the lease on `sessionId` (giving up the one held before), or throws
   * {@linkcode ConversationHeldError} naming the process that holds it. A store that
   * cannot be asked (Redis away) does not stop the conversation: it is opened, and the
   * journal keeps its messages, as for any write.
   */
  async take(store: MemoryStore, sessionId: string): Promise<void> {
    const leases = store.leases;
    if (!leases || this.#held?.sessionId === sessionId) return;
    const holder = thisProcess();
    let outcome;
    try {
      outcome = await leases.acquire(sessionId, holder, LEASE_TTL_MS);
    } catch (error) {
      this.#log?.warn(`could not take the lease on conversation ${sessionId}`, { error });
      return;
    }
    if (!outcome.acquired) {
      throw new ConversationHeldError(sessionId, outcome.holder, outcome.expiresInMs);
    }
    await this.release();
    this.#held = new HeldLease(leases, sessionId, holder, (error) => {
      this.#log?.warn(
        error
          ? `could not renew the lease on conversation ${sessionId}; trying again`
          : `the lease on conversation ${sessionId} was taken by another process`,
        { error },
      );
    });
  }

  /** Gives the held lease up (at close, or for another conversation). */
  async release(): Promise<void> {
    const held = this.#held;
    this.#held = undefined;
    await held?.release().catch((error) => {
      this.#log?.warn(`could not release the lease on conversation ${held.sessionId}`, { error });
    });
  }
}
