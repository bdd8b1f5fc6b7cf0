/**
 * Leases of the Redis store: one key per conversation, beside its messages, set with
 * `SET NX PX` (of two processes starting at once one gets it) and expiring on its own when
 * its holder stops renewing it; renewing and releasing check the holder's token in one
 * script, so a process never extends or removes a lease another process took over (see
 * `lease.ts`). A key that would live longer than the lease's term (an expiry far off, or
 * none) is set back to the term when read; one whose holder on this machine is gone is
 * taken over at once, by a script that takes it only if it is still that holder's.
 *
 * @module
 */

import type { RedisClient } from "../redis/client.ts";
import {
  judgeLease,
  LEASE_TTL_MS,
  type LeaseHolder,
  type LeaseKeeper,
  type LeaseOutcome,
  parseHolder,
} from "./lease.ts";

const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0`;

const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0`;

/** Sets the key's expiry back to ARGV[2] ms if it still holds ARGV[1] and would live longer. */
const BOUND = `if redis.call('get', KEYS[1]) == ARGV[1] then
  local left = redis.call('pttl', KEYS[1])
  if left == -1 or left > tonumber(ARGV[2]) then
    return redis.call('pexpire', KEYS[1], ARGV[2])
  end
end
return 0`;

/** Replaces the key by ARGV[2] (for ARGV[3] ms) if it still holds ARGV[1]. */
const TAKE_OVER = `if redis.call('get', KEYS[1]) == ARGV[1] then
  redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0`;

/** {@linkcode LeaseKeeper} over a Redis client; `keyOf` names a conversation's lease key. */
export class RedisLeases implements LeaseKeeper {
  readonly #client: () => RedisClient;
  readonly #keyOf: (sessionId: string) => string;

  constructor(client: () => RedisClient, keyOf: (sessionId: string) => string) {
    this.#client = client;
    this.#keyOf = keyOf;
  }

  async acquire(sessionId: string, holder: LeaseHolder, ttlMs: number): Promise<LeaseOutcome> {
    const client = this.#client();
    const key = this.#keyOf(sessionId);
    const value = JSON.stringify(holder);
    const set = await client.set(key, value, "PX", ttlMs, "NX");
    if (set === "OK") return { acquired: true };
    const [current, ttl] = await Promise.all([client.get(key), client.pttl(key)]);
    const found = parseHolder(current);
    if (found?.token === holder.token) {
      await this.renew(sessionId, holder, ttlMs);
      return { acquired: true };
    }
    // -2: the key went meanwhile; -1: it never expires, which no holder's renewal sets.
    if (found && current !== null && ttl !== -2) {
      const judged = await judgeLease(found, ttl === -1 ? Infinity : ttl, holder);
      if (!judged.take) {
        if (judged.bound) await client.eval(BOUND, 1, key, current, LEASE_TTL_MS);
        return { acquired: false, holder: found, expiresInMs: judged.expiresInMs };
      }
      if (await client.eval(TAKE_OVER, 1, key, current, value, ttlMs) === 1) {
        return { acquired: true };
      }
      // Taken or renewed meanwhile by someone else: ask again, once.
      const now = parseHolder(await client.get(key));
      if (now && now.token !== holder.token) {
        return { acquired: false, holder: now, expiresInMs: ttlMs };
      }
    }
    // Gone meanwhile, or damaged: take it.
    await client.set(key, value, "PX", ttlMs);
    return { acquired: true };
  }

  async renew(sessionId: string, holder: LeaseHolder, ttlMs: number): Promise<boolean> {
    const key = this.#keyOf(sessionId);
    const renewed = await this.#client().eval(RENEW, 1, key, JSON.stringify(holder), ttlMs);
    return renewed === 1;
  }

  async release(sessionId: string, holder: LeaseHolder): Promise<void> {
    await this.#client().eval(RELEASE, 1, this.#keyOf(sessionId), JSON.stringify(holder));
  }
}
