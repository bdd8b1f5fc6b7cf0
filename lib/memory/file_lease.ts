/**
 * Leases of the embedded store: a `<id>.lease` file beside the conversation's
 * `<id>.jsonl`, holding its holder and its expiry (see `lease.ts`). Created with
 * `O_EXCL`, so of two processes starting at once one gets it; an expired one is replaced
 * (renamed over) and read back, so of two taking over at once the one whose file stayed
 * holds it.
 *
 * @module
 */

import { join } from "node:path";
import { replacePrivateFile } from "../private_file.ts";
import { type LeaseHolder, type LeaseKeeper, type LeaseOutcome, parseHolder } from "./lease.ts";
import { MAX_STATE_FILE_BYTES, readBoundedText } from "../bounded_read.ts";

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
    const now = Date.now();
    if (current && current.token !== holder.token && (current.expiresAt ?? 0) > now) {
      return { acquired: false, holder: current, expiresInMs: current.expiresAt! - now };
    }
    await replacePrivateFile(path, text);
    const after = await read(path);
    if (after && after.token !== holder.token) {
      return { acquired: false, holder: after, expiresInMs: (after.expiresAt ?? now) - now };
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

function record(holder: LeaseHolder, ttlMs: number): string {
  return JSON.stringify({ ...holder, expiresAt: Date.now() + ttlMs });
}

async function read(path: string) {
  try {
    return parseHolder(
      await readBoundedText(path, { what: "the lease", maxBytes: MAX_STATE_FILE_BYTES }),
    );
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}
