/**
 * The one lock of files several processes edit: work runs one holder at a time, and a
 * holder that stays gives the waiter a bounded wait and then an error naming it, never a
 * hang. Two handles of one process conflict as two processes do (flock locks an open
 * file), so this runs in one process; the CLI tests hold it from another.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { delay } from "../../lib/async/delay.ts";
import { FileLockedError } from "../../lib/errors.ts";
import { withFileLock } from "../../lib/files/file_lock.ts";
import { tempDir } from "../support/temp_dir.ts";

/** The error `promise` rejects with, checked to be a `type`. */
async function failure<T extends Error>(
  promise: Promise<unknown>,
  type: abstract new (...args: never[]) => T,
): Promise<T> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof type, String(error));
    return error;
  }
  assert.fail("expected a failure");
}

const options = { what: "the test file", doing: "change it" };

Deno.test("work under the lock runs one at a time, in full", async () => {
  await using dir = await tempDir();
  const lock = join(dir.path, "sub", "f.lock");
  let inside = 0;
  let most = 0;
  const order: number[] = [];
  await Promise.all(Array.from({ length: 8 }, (_, i) =>
    withFileLock(lock, options, async () => {
      inside++;
      most = Math.max(most, inside);
      await delay(5);
      order.push(i);
      inside--;
    })));
  assert.equal(most, 1, "never two holders at once");
  assert.equal(order.length, 8);
  assert.equal((await Deno.stat(lock)).mode! & 0o777, 0o600);
});

Deno.test("a holder that stays: the waiter gives up after its bound, naming the holder", async () => {
  await using dir = await tempDir();
  const lock = join(dir.path, "f.lock");
  let release!: () => void;
  const held = new Promise<void>((resolve) => release = resolve);
  let entered!: () => void;
  const holding = new Promise<void>((resolve) => entered = resolve);
  const holder = withFileLock(lock, options, () => {
    entered();
    return held;
  });
  await holding;
  let ran = false;
  const error = await failure(
    withFileLock(lock, { ...options, waitSeconds: 0.3 }, () => {
      ran = true;
      return Promise.resolve();
    }),
    FileLockedError,
  );
  assert.equal(ran, false, "nothing was done");
  assert.equal(
    error.message,
    "Could not change it: the test file is being changed by another patchbay",
  );
  assert.match(
    error.reason,
    new RegExp(`process ${Deno.pid} \\(holding it since .*\\) held its lock`),
  );
  assert.match(error.reason, /0\.3 s this command waits, so nothing was changed/);
  assert.match(error.remedy, /run the command again once the other one has finished/);
  release();
  await holder;
  // Released: taken at once.
  assert.equal(await withFileLock(lock, options, () => Promise.resolve(7)), 7);
});

Deno.test("a lock file that is a FIFO is refused, not opened", async () => {
  await using dir = await tempDir();
  const lock = join(dir.path, "f.lock");
  const { code } = await new Deno.Command("mkfifo", { args: [lock] }).output();
  assert.equal(code, 0);
  await assert.rejects(withFileLock(lock, options, () => Promise.resolve()), /named pipe/);
});
