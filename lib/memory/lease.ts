/**
 * One process per conversation. Two patchbay processes resuming the same conversation
 * (`--resume`, on Redis or the embedded store) used to interleave their turns silently.
 * The process that has a conversation open now holds a lease on it in the store: renewed
 * every {@linkcode LEASE_HEARTBEAT_MS}, it expires {@linkcode LEASE_TTL_MS} after its
 * holder stops renewing it (a crash, a kill, a machine gone), so a dead holder never
 * locks a conversation for longer than that. A second process is told who holds it and
 * may continue the conversation as a new branch (a copy under a new id); nothing is
 * written to the held conversation, and nothing is lost (docs/security-limits.md).
 *
 * What a store holds is read as untrusted: a lease never has more than
 * {@linkcode LEASE_TTL_MS} left, whatever its record says (an expiry in 2100, a Redis key
 * without one), and the store is set back to that bound when read; a holder on this
 * machine whose process is gone loses its lease at once (`lease_holder.ts`).
 *
 * @module
 */

import { holderGone, hostName } from "./lease_holder.ts";

/** How long a lease lasts without renewal. */
export const LEASE_TTL_MS = 30_000;

/** How often its holder renews it: three chances before it expires. */
export const LEASE_HEARTBEAT_MS = 10_000;

/** Who holds a conversation. */
export interface LeaseHolder {
  /** A value unique to the holding process: only it renews or releases the lease. */
  token: string;
  /** The holder's process id. */
  pid: number;
  /** When the holder took it (ISO time). */
  since: string;
  /** The holder's machine, when it could be read: a holder here can be checked on. */
  host?: string;
}

/** What a store answered to a request for a lease. */
export type LeaseOutcome =
  | { acquired: true }
  | { acquired: false; holder: LeaseHolder; expiresInMs: number };

/** Leases of a store: each store keeps them beside its conversations. */
export interface LeaseKeeper {
  /** Takes the lease on `sessionId` for `holder` unless another live holder has it. */
  acquire(sessionId: string, holder: LeaseHolder, ttlMs: number): Promise<LeaseOutcome>;
  /** Extends `holder`'s lease; `false` when it is no longer `holder`'s. */
  renew(sessionId: string, holder: LeaseHolder, ttlMs: number): Promise<boolean>;
  /** Gives the lease up if `holder` has it. */
  release(sessionId: string, holder: LeaseHolder): Promise<void>;
}

/** This process as a lease holder (one per process: its token is fixed at start). */
export function thisProcess(): LeaseHolder {
  if (!holder) {
    const host = hostName();
    holder = {
      token: crypto.randomUUID(),
      pid: Deno.pid,
      since: new Date().toISOString(),
      ...(host ? { host } : {}),
    };
  }
  return holder;
}
let holder: LeaseHolder | undefined;

/** What to do about a lease another holder has. */
export type LeaseJudgement =
  /** It has expired, or its holder on this machine is gone. */
  | { take: true; gone: boolean }
  /**
   * It is held for `expiresInMs` more (at most {@linkcode LEASE_TTL_MS}); `bound`: the
   * store said more than that, and the store's expiry is to be set back to the bound.
   */
  | { take: false; expiresInMs: number; bound: boolean };

/**
 * Judges a lease `current` holds with `remainingMs` left by its store's account (`Infinity`
 * for one that never expires): taken when expired or its holder is gone; else held for
 * what is left, never more than {@linkcode LEASE_TTL_MS}.
 */
export async function judgeLease(
  current: LeaseHolder,
  remainingMs: number,
  self: LeaseHolder = thisProcess(),
): Promise<LeaseJudgement> {
  if (!(remainingMs > 0)) return { take: true, gone: false };
  if (await holderGone(current, self)) return { take: true, gone: true };
  return {
    take: false,
    expiresInMs: Math.min(remainingMs, LEASE_TTL_MS),
    bound: remainingMs > LEASE_TTL_MS,
  };
}

/** A value read back from a store, if it is a lease holder record. */
export function parseHolder(text: string | null | undefined):
  | (LeaseHolder & {
    expiresAt?: number;
  })
  | undefined {
  if (!text) return undefined;
  try {
    const value = JSON.parse(text);
    if (
      typeof value?.token === "string" && typeof value.pid === "number" &&
      typeof value.since === "string" &&
      (value.host === undefined || typeof value.host === "string") &&
      (value.expiresAt === undefined || typeof value.expiresAt === "number")
    ) {
      return value;
    }
  } catch {
    // A damaged lease is no lease: it is taken over.
  }
  return undefined;
}

/** A lease this process holds, renewed in the background until released. */
export class HeldLease {
  readonly sessionId: string;
  readonly #keeper: LeaseKeeper;
  readonly #holder: LeaseHolder;
  readonly #timer: ReturnType<typeof setInterval>;
  #released = false;

  constructor(
    keeper: LeaseKeeper,
    sessionId: string,
    holder: LeaseHolder,
    onLost: (error?: unknown) => void,
  ) {
    this.#keeper = keeper;
    this.sessionId = sessionId;
    this.#holder = holder;
    this.#timer = setInterval(async () => {
      try {
        if (!(await keeper.renew(sessionId, holder, LEASE_TTL_MS)) && !this.#released) {
          onLost();
        }
      } catch (error) {
        // The store is away for now: the next heartbeat tries again.
        onLost(error);
      }
    }, LEASE_HEARTBEAT_MS);
    // The heartbeat never keeps patchbay running on its own.
    Deno.unrefTimer(this.#timer as unknown as number);
  }

  /** Stops renewing and gives the lease up. */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    clearInterval(this.#timer);
    await this.#keeper.release(this.sessionId, this.#holder);
  }
}
