/**
 * One lock for every read-change-write of a file several patchbay processes may edit at
 * once (servers_config.json and its .env, approvals.json): an exclusive `flock` on a lock
 * file of its own, which the operating system releases when the holder ends however it
 * ends, so a lock can never outlive its process. The wait for it is bounded: a holder that
 * is stuck makes the waiter give up with who holds it and what to do
 * ({@linkcode FileLockedError}), never hang.
 *
 * The lock file is separate from the file it guards because that file is replaced by a
 * rename at each edit: a lock on it would guard a file that is no longer there.
 *
 * @module
 */

import { dirname } from "node:path";
import { delay } from "../async/delay.ts";
import { MAX_STATE_FILE_BYTES, readBoundedText, requireRegularFile } from "./bounded_read.ts";
import { FileLockedError, PatchbayError } from "../errors.ts";
import { CONFIG_STEPS } from "../errors/config_steps.ts";

/**
 * Longest wait for a lock, in seconds. An edit holds it for the few milliseconds of a read,
 * a validation and a rename (no question is asked while it is held), so twelve edits at
 * once on a busy machine are done well within it; a holder still there after it is stuck.
 */
export const LOCK_WAIT_SECONDS = 10;

/** First pause between two tries; it doubles up to {@linkcode MAX_RETRY_MS}. */
const FIRST_RETRY_MS = 5;
const MAX_RETRY_MS = 200;

/** Options of {@linkcode withFileLock}. */
export interface FileLockOptions {
  /** What the lock guards, for messages: `the configuration servers_config.json`. */
  what: string;
  /** What the command would have done, for messages: `add the server`. */
  doing: string;
  /** @default LOCK_WAIT_SECONDS */
  waitSeconds?: number;
  signal?: AbortSignal;
}

/** Who holds a lock, as its holder wrote it into the lock file. */
interface Holder {
  pid?: number;
  since?: string;
}

/**
 * Runs `work` holding the exclusive lock of `lockPath` (created owner-only, its folder
 * too, when missing), after waiting at most `waitSeconds` for another holder to end.
 */
export async function withFileLock<T>(
  lockPath: string,
  options: FileLockOptions,
  work: () => Promise<T>,
): Promise<T> {
  let file: Deno.FsFile;
  try {
    await Deno.mkdir(dirname(lockPath), { recursive: true, mode: 0o700 });
    try {
      // Opening a FIFO planted there would block: only a regular file is opened.
      await requireRegularFile(lockPath, {
        what: "the lock file",
        maxBytes: MAX_STATE_FILE_BYTES,
      });
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    file = await Deno.open(lockPath, { read: true, write: true, create: true, mode: 0o600 });
  } catch (error) {
    if (error instanceof PatchbayError) throw error;
    throw new PatchbayError(
      "permission_denied",
      `Could not ${options.doing}: its lock cannot be taken`,
      {
        reason: `${lockPath} cannot be created or opened: ${(error as Error).message}`,
        remedy: CONFIG_STEPS.lockFolder(dirname(lockPath)),
        cause: error,
      },
    );
  }
  try {
    await acquire(file, lockPath, options);
    await noteHolder(file);
    return await work();
  } finally {
    // Closing the file releases the lock.
    file.close();
  }
}

async function acquire(file: Deno.FsFile, lockPath: string, options: FileLockOptions) {
  const waitMs = (options.waitSeconds ?? LOCK_WAIT_SECONDS) * 1000;
  const started = Date.now();
  let pause = FIRST_RETRY_MS;
  while (!(await file.tryLock(true))) {
    if (Date.now() - started >= waitMs) {
      throw new FileLockedError(options.what, lockPath, {
        ...(await holderOf(lockPath)),
        waitedSeconds: waitMs / 1000,
        doing: options.doing,
      });
    }
    await delay(pause, { signal: options.signal });
    pause = Math.min(pause * 2, MAX_RETRY_MS);
  }
}

/** Writes who holds the lock into the lock file, for a waiter's message. */
async function noteHolder(file: Deno.FsFile): Promise<void> {
  const holder: Holder = { pid: Deno.pid, since: new Date().toISOString() };
  const bytes = new TextEncoder().encode(JSON.stringify(holder));
  await file.truncate(0);
  await file.seek(0, Deno.SeekMode.Start);
  let written = 0;
  while (written < bytes.length) written += await file.write(bytes.subarray(written));
}

/** What the lock file says of its holder; nothing when it says nothing readable. */
async function holderOf(lockPath: string): Promise<Holder> {
  try {
    const value = JSON.parse(
      await readBoundedText(lockPath, { what: "the lock file", maxBytes: MAX_STATE_FILE_BYTES }),
    );
    return {
      pid: Number.isSafeInteger(value?.pid) ? value.pid : undefined,
      since: typeof value?.since === "string" ? value.since.slice(0, 40) : undefined,
    };
  } catch {
    return {};
  }
}
