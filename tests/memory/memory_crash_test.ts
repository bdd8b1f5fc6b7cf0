import assert from "node:assert/strict";
import { join } from "node:path";
import { createEnvironment } from "../../lib/env.ts";
import { FileStore } from "../../lib/memory/file_store.ts";
import { parseJsonLines } from "../../lib/memory/json_lines.ts";
import { openMemory } from "../../lib/memory/open.ts";
import { DENO } from "../support/deps.ts";
import { tempDir } from "../support/temp_dir.ts";
import { assumingClosed } from "../support/servers.ts";
import { freePort, RedisServer } from "../support/redis.ts";

const WRITER = new URL("../fixtures/memory_writer.ts", import.meta.url).pathname;

/** What the writer acknowledged before it was killed. */
interface Run {
  session: string;
  acked: number[];
  statuses: Set<string>;
}

/**
 * Starts the writer, lets it acknowledge at least `minAcks` appends (and run on for a
 * random moment), then SIGKILLs it in the middle of whatever it is doing.
 */
async function runAndKill(
  dataDir: string,
  payloadBytes: number,
  minAcks: number,
  env: Record<string, string> = {},
): Promise<Run> {
  const child = new Deno.Command(DENO, {
    args: ["run", "--allow-all", WRITER, dataDir, String(payloadBytes)],
    env,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const run: Run = { session: "", acked: [], statuses: new Set() };
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let killAt: number | undefined;
  try {
    while (killAt === undefined || Date.now() < killAt) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      const lines = buffer.split("\n");
      buffer = lines.pop()!;
      for (const line of lines) {
        const [word, n, status] = line.split(" ");
        if (word === "session") run.session = n;
        if (word === "ack") {
          run.acked.push(Number(n));
          run.statuses.add(status);
        }
      }
      if (killAt === undefined && run.acked.length >= minAcks) {
        killAt = Date.now() + Math.random() * 50;
      }
    }
    child.kill("SIGKILL");
  } finally {
    // Whatever is still in the pipe was printed before the kill: those are acks too.
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
    }
    for (const line of buffer.split("\n")) {
      const [word, n] = line.split(" ");
      if (word === "ack") run.acked.push(Number(n));
    }
    reader.releaseLock();
    await child.stderr.cancel();
    await child.status;
  }
  assert.ok(run.session, "the writer never started its session");
  assert.ok(run.acked.length >= minAcks, `only ${run.acked.length} acks before exit`);
  return run;
}

/** Every acknowledged message present exactly once, in order; at most one unacknowledged after. */
function assertAllAcked(contents: string[], run: Run): void {
  const numbers = contents.map((c) => Number(/^msg-(\d+) /.exec(c)?.[1]));
  assert.equal(new Set(numbers).size, numbers.length, "a message is stored twice");
  const last = run.acked.at(-1)!;
  assert.deepEqual(numbers.slice(0, run.acked.length), run.acked, "acknowledged messages lost");
  assert.ok(numbers.length <= run.acked.length + 1, `unexpected extra messages after ${last}`);
  numbers.forEach((n, i) => assert.equal(n, i, "messages out of order"));
}

Deno.test("embedded store: SIGKILL of a writer mid-append keeps every acknowledged message", async () => {
  await using dir = await tempDir();
  // Large messages make the kill land inside a write more often than between two.
  for (const payloadBytes of [200_000, 40_000, 512]) {
    const run = await runAndKill(dir.path, payloadBytes, 20);
    assert.deepEqual([...run.statuses], ["written"]);
    const path = join(dir.path, "sessions", `${run.session}.jsonl`);
    const text = await Deno.readTextFile(path);
    // Every complete line parses; only an unterminated tail may be torn.
    const complete = text.slice(0, text.lastIndexOf("\n") + 1);
    assert.equal(parseJsonLines(complete).damaged, 0, "a complete line is corrupt");

    const store = new FileStore({ dir: join(dir.path, "sessions") });
    const records = (await store.load(run.session))!;
    assertAllAcked(records.map((r) => r.message.content!), run);
    // The next writer seals off any torn tail and appends cleanly after it.
    const next = records.length;
    await store.append(run.session, {
      id: "after-crash",
      seq: next,
      message: {
        role: "user",
        content: `msg-${next} resumed`,
        timestamp: new Date().toISOString(),
      },
    });
    await store.close();
    const sealed = await Deno.readTextFile(path);
    assert.ok(sealed.endsWith("\n"));
    assert.ok(parseJsonLines(sealed).damaged <= 1, "more than the one torn line is damaged");
    const again = (await new FileStore({ dir: join(dir.path, "sessions") }).load(run.session))!;
    assert.equal(again.length, records.length + 1);
  }
});

Deno.test("Redis journal: messages of a writer SIGKILLed during an outage reach Redis exactly once", async () => {
  await using dir = await tempDir();
  const port = freePort();
  await assumingClosed(port, async () => {
    const env = { REDIS_HOST: "127.0.0.1", REDIS_PORT: String(port) };
    // Redis is down the whole time the writer runs: everything goes to its journal.
    const run = await runAndKill(dir.path, 20_000, 30, env);
    assert.deepEqual([...run.statuses], ["journaled"]);

    await using redis = await RedisServer.start({ port });
    const memory = await openMemory(
      { backend: "auto", keyPrefix: "patchbay" },
      createEnvironment(env),
      { dataDir: dir.path, strict: true },
    );
    const { messages } = await memory.load(run.session);
    assertAllAcked(messages.map((m) => m.content!), run);
    await memory.close();
    // The journal was delivered and removed.
    const journals: string[] = [];
    for await (const folder of Deno.readDir(join(dir.path, "journal"))) {
      for await (const file of Deno.readDir(join(dir.path, "journal", folder.name))) {
        journals.push(file.name);
      }
    }
    assert.deepEqual(journals, []);
    assert.equal(
      Number(await redis.cli("LLEN", `patchbay:v1:session:{${run.session}}:messages`)),
      messages.length,
    );
  });
});
