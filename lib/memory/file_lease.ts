/**
 * Leases of the embedded store: a `<id>.lease` file beside the conversation's
 * `<id>.jsonl`, holding its holder and its expiry (see `lease.ts`). Created with
 * `O_EXCL`, so of two processes starting at once one gets it; an expired one, or one whose
 * holder on this machine is gone, is replaced (renamed over) and read back, so of two
 * taking over at once the one whose file stayed holds it. A record is believed for at most
 * the lease's term after it was last written (its holder rewrites it at every renewal):
 * an expiry far in the future in a record nobody renews ends like any other.
 *
 * @module
 */

import { join } from "node:path";
import { replacePrivateFile } from "../files/private_file.ts";
import {
  judgeLease,
  LEASE_TTL_MS,
  type LeaseHolder,
  type LeaseKeeper,
  type LeaseOutcome,
  parseHolder,
} from "./lease.ts";
import { MAX_STATE_FILE_BYTES, readBoundedText } from "../files/bounded_read.ts";

/** {@linkcode LeaseKeeper} of a folder of conversation files. */
export class FileLeases implements LeaseKeeper {
  readonly #dir: string;

  constructor(dir: string) {
    this.#dir = dir;
  }

  async acquire(sessionId: string, holder: LeaseHolder, ttlMs: number): Promise<LeaseOutcome> {
    const path = this.#path(sessionId);
    const text = record(holder, ttlMs);
    await Deno.mkdir(this.#dir, { recursive: true, mode: 0o700 });
    try {
      await Deno.writeTextFile(path, text, { createNew: true, mode: 0o600 });
      return { acquired: true };
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    }
    const current = await read(path);
    if (current && current.token !== holder.token) {
      const judged = await judgeLease(current, remaining(current), holder);
      if (!judged.take) {
        return { acquired: false, holder: current, expiresInMs: judged.expiresInMs };
      }
    }
    await replacePrivateFile(path, text);
    const after = await read(path);
    if (after && after.token !== holder.token) {
      return { acquired: false, holder: after, expiresInMs: Math.max(0, remaining(after)) };
    }
    return { acquired: true };
  }

  async renew(sessionId: string, holder: LeaseHolder, ttlMs: number): Promise<boolean> {
    const path = this.#path(sessionId);
    const current = await read(path);
    if (current?.token !== holder.token) return false;
    await replacePrivateFile(path, record(holder, ttlMs));
    return true;
  }

  async release(sessionId: string, holder: LeaseHolder): Promise<void> {
    const path = this.#path(sessionId);
    if ((await read(path))?.token !== holder.token) return;
    await Deno.remove(path).catch(() => {});
  }

  #path(sessionId: string): string {
    return join(this.#dir, `${sessionId}.lease`);
  }
}

/** A lease record read back, and when its file was last written. */
type StoredLease = LeaseHolder & { expiresAt?: number; writtenAt: number };

/**
 * What is left of a lease: until its expiry, but never past the term after its file was
 * last written (a holder rewrites it at every renewal). A file stamped further in the
 * future than a term is no record a running holder wrote: it is expired.
 */
function remaining(lease: StoredLease, now = Date.now()): number {
  if (lease.writtenAt > now + LEASE_TTL_MS) return 0;
  const end = Math.min(lease.expiresAt ?? 0, Math.min(lease.writtenAt, now) + LEASE_TTL_MS);
  return end - now;
}

function record(holder: LeaseHolder, ttlMs: number): string {
  return JSON.stringify({ ...holder, expiresAt: Date.now() + ttlMs });
}

async function read(path: string): Promise<StoredLease | undefined> {
  try {
    const [text, info] = await Promise.all([
      readBoundedText(path, { what: "the lease", maxBytes: MAX_STATE_FILE_BYTES }),
      Deno.stat(path),
    ]);
    const holder = parseHolder(text);
    return holder && { ...holder, writtenAt: info.mtime?.getTime() ?? 0 };
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}
