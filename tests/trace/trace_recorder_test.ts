/**
 * The wire trace's writer on its own (docs/trace.md): long messages kept up to the bound
 * with the cut marked (masked first, so a cut cannot leave half a secret), the size bound
 * with rotation and mode 0600, masking of keys as well as values, requests of either side
 * paired with their responses, the timeline and statistics read back from the file, and a
 * server's death and reconnection as lines of the same file.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { Redactor } from "../../lib/redact/redact.ts";
import type { EventLine, MessageLine } from "../../lib/trace/record.ts";
import { setActiveTrace } from "../../lib/trace/active.ts";
import { TraceRecorder } from "../../lib/trace/recorder.ts";
import { parseTrace, stats, timeline } from "../../lib/trace/timeline.ts";
import { eventually, fixtureEntry, startManager } from "../support/servers.ts";
import { tempDir as sharedTempDir } from "../support/temp_dir.ts";

async function tempDir(): Promise<string & AsyncDisposable> {
  const folder = await sharedTempDir("patchbay-trace-");
  return Object.assign(folder.path, {
    [Symbol.asyncDispose]: () => folder[Symbol.asyncDispose](),
  }) as unknown as string & AsyncDisposable;
}

function messages(path: string): MessageLine[] {
  return parseTrace(Deno.readTextFileSync(path)).lines.filter((l): l is MessageLine =>
    l.kind === "message"
  );
}

Deno.test("a long message is kept up to the bound, masked before the cut, the cut marked", async () => {
  await using dir = await tempDir();
  const path = join(String(dir), "t.jsonl");
  const redactor = new Redactor();
  const secret = "cut-secret-abcdefghij";
  redactor.addSecret(secret);
  const recorder = TraceRecorder.open(path, { redactor, maxMessageChars: 200 });
  // The secret straddles the bound: cutting first would keep its first half.
  const text = "x".repeat(150) + secret + "y".repeat(1000);
  recorder.message("s", "stdio", "in", {
    jsonrpc: "2.0",
    method: "notifications/message",
    params: { data: text },
  });
  recorder.close();
  const [line] = messages(path);
  assert.equal(typeof line.message, "string");
  assert.equal((line.message as string).length, 200);
  assert.ok(line.cut && line.cut.kept === 200 && line.cut.chars > 1000);
  assert.ok(line.bytes > 1000, "the size is the message's, not the kept part's");
  assert.ok(!(line.message as string).includes("cut-secret"), "no half of the secret");
  assert.match(timeline([line])[0], /\(cut\)/);
});

Deno.test("the trace rotates at its size bound, keeps its generations, and is its owner's only", async () => {
  await using dir = await tempDir();
  const path = join(String(dir), "t.jsonl");
  await Deno.writeTextFile(path, "", { mode: 0o644 });
  await Deno.chmod(path, 0o644);
  const recorder = TraceRecorder.open(path, {
    redactor: new Redactor(),
    rotateBytes: 2000,
    files: 3,
  });
  assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600, "an existing file is narrowed");
  for (let i = 0; i < 60; i++) {
    recorder.message("s", "stdio", "out", { jsonrpc: "2.0", id: i, method: "ping" });
  }
  recorder.close();
  for (const name of [path, `${path}.1`, `${path}.2`]) {
    const info = await Deno.stat(name);
    assert.ok(info.size <= 2000, `${name} holds at most the bound`);
    assert.equal(info.mode! & 0o777, 0o600, `${name} is 0600`);
  }
  await assert.rejects(Deno.stat(`${path}.3`), Deno.errors.NotFound);
  // The newest lines are in the current file, in order.
  const ids = messages(path).map((m) => m.id);
  assert.equal(ids.at(-1), 59);
});

Deno.test("keys and values are masked; requests of either side are paired with their answers", async () => {
  await using dir = await tempDir();
  const path = join(String(dir), "t.jsonl");
  const redactor = new Redactor();
  redactor.addSecret("key-secret-123456");
  const recorder = TraceRecorder.open(path, { redactor });
  recorder.message("s", "stdio", "out", {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { arguments: { "key-secret-123456": "Bearer abcdefghijklmnop1234" } },
  });
  // The server asks the client (sampling), the client answers with an error.
  recorder.message("s", "stdio", "in", { jsonrpc: "2.0", id: 1, method: "sampling/createMessage" });
  recorder.message("s", "stdio", "out", {
    jsonrpc: "2.0",
    id: 1,
    error: { code: -1, message: "declined" },
  });
  recorder.message("s", "stdio", "in", { jsonrpc: "2.0", id: 1, result: { content: [] } });
  recorder.close();
  const text = Deno.readTextFileSync(path);
  assert.ok(!text.includes("key-secret-123456") && !text.includes("abcdefghijklmnop1234"));
  const [call, ask, declined, answer] = messages(path);
  assert.equal(call.type, "request");
  assert.equal(ask.type, "request");
  assert.equal(declined.method, "sampling/createMessage");
  assert.equal(declined.type, "error");
  assert.deepEqual(declined.error, { code: -1, message: "declined" });
  assert.equal(typeof declined.ms, "number");
  assert.equal(answer.method, "tools/call");
  assert.equal(typeof answer.ms, "number");
  const rows = stats(messages(path));
  assert.deepEqual(
    rows.map((r) => [r.method, r.count, r.errors]),
    [["sampling/createMessage", 1, 1], ["tools/call", 1, 0]],
  );
  // The recent lines for /trace show are the masked ones.
  assert.ok(!JSON.stringify(recorder.recent()).includes("key-secret-123456"));
});

Deno.test("a server that dies mid-session: its exit, the loss and the reconnect are lines of the trace", async () => {
  await using dir = await tempDir();
  const path = join(String(dir), "t.jsonl");
  setActiveTrace(TraceRecorder.open(path, { redactor: new Redactor() }));
  try {
    await using session = await startManager({
      servers: [fixtureEntry("dying", ["--die-after-ms=300"])],
      backoff: { initialDelayMs: 50, maxAttempts: 3 },
    });
    await eventually(
      () => session.statesOf("dying").filter((s) => s === "connected").length >= 2,
      "the server connected again after dying",
    );
  } finally {
    setActiveTrace(undefined);
  }
  const lines = parseTrace(Deno.readTextFileSync(path)).lines;
  const events = lines.filter((l): l is EventLine => l.kind === "event" && l.server === "dying");
  const states = events.filter((l) => l.event === "state").map((l) => l.state);
  assert.deepEqual(states.slice(0, 4), ["connecting", "connected", "reconnecting", "connected"]);
  const spawns = events.filter((l) => l.event === "spawn");
  assert.ok(spawns.length >= 2 && spawns[0].pid !== spawns[1].pid, "each attempt's process");
  const died = events.find((l) => l.event === "exit" && l.pid === spawns[0].pid);
  assert.ok(died, "the first process's exit");
  assert.equal(died.code, 9);
  assert.ok(timeline(lines, { errors: true }).some((row) => /exit .*code=9/.test(row)));
  // What the connection said on its way down is there too, in order.
  assert.ok(
    lines.indexOf(died) < lines.findIndex((l) => l.kind === "event" && l.state === "reconnecting"),
  );
});
