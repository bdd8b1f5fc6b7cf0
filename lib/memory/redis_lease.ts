/**
 * Leases of the Redis store: one key per conversation, beside its messages, set with
 * `SET NX PX` (of two processes starting at once one gets it) and expiring on its own when
 * its holder stops renewing it; renewing and releasing check the holder's token in one
 * script, so a process never extends or removes a lease another process took over (see
 * `lease.ts`).
 *
 * @module
 */

import type { RedisClient } from "../redis/client.ts";
import { type LeaseHolder, type LeaseKeeper, type LeaseOutcome, parseHolder } from "./lease.ts";

const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0`;

const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
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
    if (found && ttl > 0) return { acquired: false, holder: found, expiresInMs: ttl };
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
