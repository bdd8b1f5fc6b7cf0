/**
 * The log stays bounded during a session: a server writing 300 MB to stderr used to make
 * a 235 MB log in 8 s. The file is rotated by size while running (at most
 * `rotateBytes` × `files` on disk), and one server's stderr and log notifications are held
 * to a rate, with an exact count of what was dropped.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ConnectionManager } from "../../lib/connections/manager.ts";
import { DEFAULTS } from "../../lib/defaults.ts";
import { Logger } from "../../lib/log/log.ts";
import { DENO } from "../support/deps.ts";
import { eventually, stdioEntry } from "../support/servers.ts";
import { tempDir } from "../support/temp_dir.ts";

const HOSTILE = fileURLToPath(new URL("../fixtures/hostile_server.ts", import.meta.url));
const WRITER = fileURLToPath(new URL("../fixtures/log_writer.ts", import.meta.url));

function size(path: string): number | undefined {
  try {
    return Deno.statSync(path).size;
  } catch {
    return undefined;
  }
}

/** Line numbers (`line N`) in the files, oldest file first. */
function numbers(path: string, files: number): number[] {
  const found: number[] = [];
  for (let i = files - 1; i >= 0; i--) {
    const file = i === 0 ? path : `${path}.${i}`;
    if (size(file) === undefined) continue;
    for (const match of Deno.readTextFileSync(file).matchAll(/\bline (\d+) /g)) {
      found.push(Number(match[1]));
    }
  }
  return found;
}

Deno.test("the log rotates by size while running: never more than files × rotateBytes, newest lines kept in order", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "patchbay.log");
  const logger = new Logger({ file: path, rotateBytes: 10_000, files: 3 });
  const log = logger.child("test");
  for (let i = 0; i < 2000; i++) log.info(`line ${i} ${"x".repeat(60)}`);
  logger.close();
  for (const file of [path, `${path}.1`, `${path}.2`]) {
    assert.ok(size(file)! > 0 && size(file)! <= 10_000, `${file}: ${size(file)} bytes`);
  }
  assert.equal(size(`${path}.3`), undefined, "a fourth file");
  const kept = numbers(path, 3);
  assert.equal(kept.at(-1), 1999, "the newest line is in the current file");
  assert.deepEqual(kept, kept.map((_, i) => kept[0] + i), "contiguous, in order");
  assert.equal(Deno.statSync(`${path}.1`).mode! & 0o777, 0o600);

  // At start-up too: a file over the size is moved aside before writing.
  const again = new Logger({ file: path, rotateBytes: 100, files: 3 });
  again.child("test").info("line 5000 after a restart");
  again.close();
  assert.match(Deno.readTextFileSync(path), /line 5000/);
  assert.doesNotMatch(Deno.readTextFileSync(path), /line 1999/);
});

Deno.test("two processes on one log: a rotation by one is seen by the other, the bound holds", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "patchbay.log");
  const a = new Logger({ file: path, rotateBytes: 5_000, files: 3 });
  const b = new Logger({ file: path, rotateBytes: 5_000, files: 3 });
  for (let i = 0; i < 600; i++) (i % 2 ? a : b).child("t").info(`line ${i} ${"y".repeat(40)}`);
  a.close();
  b.close();
  for (const file of [path, `${path}.1`, `${path}.2`]) {
    assert.ok((size(file) ?? 0) <= 5_000, `${file}: ${size(file)} bytes`);
  }
  assert.equal(size(`${path}.3`), undefined);
  assert.ok(numbers(path, 3).includes(599), "the last line was written");
});

Deno.test("without permission to rotate (--allow-write for the log file only), the file is emptied instead", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "outside.log");
  const output = await new Deno.Command(DENO, {
    args: [
      "run",
      "--no-prompt",
      `--allow-read=${dir.path}`,
      `--allow-write=${path}`,
      WRITER,
      path,
      "5000",
      "500",
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  assert.ok(size(path)! <= 5_000, `${size(path)} bytes`);
  assert.equal(size(`${path}.1`), undefined);
  const text = Deno.readTextFileSync(path);
  assert.match(
    text,
    /WARN {2}\[log\] the log passed 5000 bytes and could not be rotated \(.*\); older lines were dropped/,
  );
  assert.match(text, /line 499 /);
});

/** A manager with one hostile server, logging through a real Logger into `path`. */
async function floodedLog(flags: string[], path: string, done: RegExp): Promise<string> {
  const logger = new Logger({ file: path });
  const manager = new ConnectionManager({
    servers: [stdioEntry("h", DENO, ["run", "--quiet", "--no-config", HOSTILE, ...flags])],
    log: logger.child("connections"),
  });
  try {
    const [state] = await manager.start();
    assert.equal(state.state, "connected", state.error?.message);
    await eventually(() => done.test(Deno.readTextFileSync(path)), `${done} in the log`, 120_000);
  } finally {
    await manager.close();
    logger.close();
  }
  return Deno.readTextFileSync(path);
}

Deno.test("a server flooding stderr (50 MB) is cut to the rate, with an exact count of what was dropped", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "patchbay.log");
  const text = await floodedLog(["--flood-stderr=50000000"], path, /flood done \d+ lines/);
  const sent = Number(/flood done (\d+) lines/.exec(text)![1]);
  const logged = text.split("\n").filter((line) => / flood x{90}$/.test(line)).length;
  const dropped = [
    ...text.matchAll(/(\d+) lines? of stderr dropped \(the server wrote more than 200 a second/g),
  ]
    .reduce((sum, match) => sum + Number(match[1]), 0);
  assert.ok(dropped > 0, "lines were dropped");
  assert.equal(logged + dropped, sent, `${logged} logged + ${dropped} dropped`);
  assert.ok(size(path)! < DEFAULTS.log.rotateBytes, `the log is ${size(path)} bytes`);
});

Deno.test("a server flooding stdout with lines that are not JSON-RPC is cut to the rate, counted", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "patchbay.log");
  const text = await floodedLog(["--flood-stdout=20000"], path, /stdout flood done/);
  const logged =
    text.split("\n").filter((line) => /not JSON-RPC \(ignored\): noise \d+$/.test(line))
      .length;
  const dropped = [...text.matchAll(/(\d+) stdout lines? that are not JSON-RPC dropped/g)]
    .reduce((sum, match) => sum + Number(match[1]), 0);
  assert.ok(dropped > 0, "lines were dropped");
  assert.equal(logged + dropped, 20_000, `${logged} logged + ${dropped} dropped`);
});

Deno.test("a server flooding log notifications is cut to the rate, and says how many were dropped", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "patchbay.log");
  const text = await floodedLog(
    ["--flood-notifications=5000"],
    path,
    /patchbay dropped \d+ log messages of this server/,
  );
  const logged =
    text.split("\n").filter((line) => /\] hostile: notification \d+/.test(line)).length;
  const dropped = [
    ...text.matchAll(
      /patchbay dropped (\d+) log messages? of this server \(it sent more than 200 a second\)/g,
    ),
  ]
    .reduce((sum, match) => sum + Number(match[1]), 0);
  assert.equal(logged + dropped, 5000, `${logged} logged + ${dropped} dropped`);
  assert.ok(logged <= 2 * DEFAULTS.log.linesPerSecond, `${logged} notifications logged`);
});
