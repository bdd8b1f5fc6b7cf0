/**
 * The one bounded reader: a regular file is read whole within its bound; a FIFO, a device,
 * a link to either, and a file past the bound are refused with what they are and what to
 * do, at once (a FIFO is never opened, so nothing waits for a writer).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  readBoundedFile,
  readBoundedText,
  readBoundedTextSync,
  requireRegularFile,
} from "../../lib/files/bounded_read.ts";
import { UnreadableFileError } from "../../lib/errors.ts";
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

const bound = { what: "the test file", maxBytes: 1024, remedy: "name another" };

/** A FIFO at `path` (mkfifo through Deno's own FFI-free way: the `mkfifo` of coreutils). */
async function mkfifo(path: string): Promise<void> {
  const { code } = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.equal(code, 0, "mkfifo");
}

Deno.test("a regular file within the bound is read whole, a byte-order mark kept", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "a.json");
  await Deno.writeTextFile(file, '\ufeff{"a": 1}');
  assert.equal(await readBoundedText(file, bound), '\ufeff{"a": 1}');
  assert.equal(readBoundedTextSync(file, bound), '\ufeff{"a": 1}');
  await assert.rejects(readBoundedText(join(dir.path, "none"), bound), Deno.errors.NotFound);
  await assert.rejects(readBoundedText(dir.path, bound), Deno.errors.IsADirectory);
});

Deno.test("a link to /dev/zero is refused as a character device, naming where it leads", async () => {
  await using dir = await tempDir();
  const link = join(dir.path, "servers_config.json");
  await Deno.symlink("/dev/zero", link);
  for (
    const read of [
      () => readBoundedFile(link, bound),
      () => Promise.resolve().then(() => readBoundedTextSync(link, bound)),
    ]
  ) {
    const error = await failure(read(), UnreadableFileError);
    assert.equal(
      error.message,
      `Refusing to read the test file ${link}: it links to /dev/zero, a character device`,
    );
    assert.match(error.reason, /reads only regular files/);
    assert.match(error.remedy, /ls -lL .*servers_config\.json.*, or name another$/);
  }
});

Deno.test("a FIFO is refused without being opened (no writer is ever waited for)", async () => {
  await using dir = await tempDir();
  const fifo = join(dir.path, ".env");
  await mkfifo(fifo);
  await assert.rejects(readBoundedText(fifo, bound), /it is a named pipe \(FIFO\)/);
  assert.throws(() => readBoundedTextSync(fifo, bound), /it is a named pipe \(FIFO\)/);
  await assert.rejects(requireRegularFile(fifo, bound), UnreadableFileError);
});

Deno.test("a file past the bound is refused, with its size and the bound", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "big.json");
  await Deno.writeTextFile(file, "x".repeat(2048));
  const error = await failure(readBoundedText(file, bound), UnreadableFileError);
  assert.match(error.message, /it is larger than 1 KiB$/);
  assert.match(error.reason, /it holds 2048 bytes or more, and the test file is read up to 1 KiB/);
  // Exactly at the bound is fine.
  await Deno.writeTextFile(file, "x".repeat(1024));
  assert.equal((await readBoundedText(file, bound)).length, 1024);
});

Deno.test("a file that claims no size (/proc) is still read, and still bounded", async () => {
  const text = await readBoundedText("/proc/self/status", { what: "status", maxBytes: 1 << 20 });
  assert.match(text, /^Name:/m);
  await assert.rejects(
    readBoundedText("/proc/self/status", { what: "status", maxBytes: 16 }),
    /larger than 16 bytes/,
  );
});
