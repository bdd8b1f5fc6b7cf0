import assert from "node:assert/strict";
import { join } from "node:path";
import { createEnvironment } from "../../lib/env.ts";
import { PatchbayError, SessionNotFoundError } from "../../lib/errors.ts";
import { FileStore } from "../../lib/memory/file_store.ts";
import { parseJsonLines } from "../../lib/memory/json_lines.ts";
import { type MemoryEvent, openMemory } from "../../lib/memory/mod.ts";
import type { MemorySettings } from "../../lib/config/types.ts";
import { Redactor } from "../../lib/redact/redact.ts";
import { appendEach, conversation, exchange, tick } from "../support/conversation.ts";
import { tempDir } from "../support/temp_dir.ts";
import { rejection } from "../support/errors.ts";

const FILE: MemorySettings = { backend: "auto", keyPrefix: "patchbay" };
const noRedis = createEnvironment({});

function open(dir: string, settings: MemorySettings = FILE, events: MemoryEvent[] = []) {
  return openMemory(settings, noRedis, { dataDir: dir, onEvent: (e) => events.push(e) });
}

async function filesUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  async function walk(path: string) {
    for await (const entry of Deno.readDir(path)) {
      const child = join(path, entry.name);
      if (entry.isDirectory) await walk(child);
      else found.push(child);
    }
  }
  await walk(dir).catch((error) => {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  });
  return found;
}

Deno.test("embedded store: a conversation with tool calls round-trips and resumes after restart", async () => {
  await using dir = await tempDir();
  const messages = conversation(2);
  const first = await open(dir.path);
  assert.deepEqual(first.status().kind, "file");
  const session = first.newSession();
  await appendEach(session, messages, "written");
  await first.close();

  // A new instance, as after a restart of patchbay.
  const second = await open(dir.path);
  const resumed = await second.resume();
  assert.deepEqual(resumed.id, session.id);
  assert.ok(resumed.resumed);
  assert.deepEqual(resumed.messages, messages);
  const [summary] = await second.sessions();
  assert.deepEqual(summary, {
    id: session.id,
    started: summary.started,
    lastMessageAt: messages.at(-1)!.timestamp,
    messages: messages.length,
    turns: 2,
    model: "gpt-4o-mini",
    title: "Question 1?",
  });
  // Resuming by a prefix of the id, then continuing the same session.
  const again = await second.resume(session.id.slice(0, 5));
  await again.append({ role: "user", content: "One more", timestamp: tick() });
  await second.close();

  const third = await open(dir.path);
  const loaded = await third.load(session.id);
  assert.deepEqual(loaded.messages.length, messages.length + 1);
  assert.deepEqual(loaded.summary.turns, 3);
  await third.close();
});

Deno.test("embedded store: files are owner-only and appends never rewrite earlier bytes", async () => {
  await using dir = await tempDir();
  const memory = await open(dir.path);
  const session = memory.newSession();
  await session.append(conversation(1)[0]);
  const path = (memory.store as FileStore).pathOf(session.id);
  const before = await Deno.readFile(path);
  const inode = (await Deno.stat(path)).ino;
  await session.append(exchange("Second?")[0]);
  const after = await Deno.readFile(path);
  assert.deepEqual(after.subarray(0, before.length), before);
  assert.deepEqual((await Deno.stat(path)).ino, inode, "the file was replaced, not appended to");
  await memory.close();

  assert.deepEqual((await Deno.stat(path)).mode! & 0o777, 0o600);
  assert.deepEqual((await Deno.stat(join(dir.path, "sessions"))).mode! & 0o777, 0o700);
});

Deno.test("embedded store: a torn last line is skipped, then sealed off by the next writer", async () => {
  await using dir = await tempDir();
  const memory = await open(dir.path);
  const session = memory.newSession();
  const messages = conversation(1);
  for (const message of messages) await session.append(message);
  await memory.close();

  // What a writer killed in the middle of an append leaves behind.
  const path = join(dir.path, "sessions", `${session.id}.jsonl`);
  await Deno.writeTextFile(path, '{"id":"zzzz","seq":5,"turns":1,"message":{"role":"us', {
    append: true,
  });

  const reader = await open(dir.path);
  assert.deepEqual((await reader.resume(session.id)).messages, messages);
  const extra = { role: "user" as const, content: "after the crash", timestamp: tick() };
  await reader.session.append(extra);
  await reader.close();

  const text = await Deno.readTextFile(path);
  assert.ok(text.endsWith("\n"));
  const parsed = parseJsonLines(text);
  assert.equal(parsed.damaged, 1, "the torn line stands alone, skipped by readers");
  assert.ok(text.includes('"role":"us\n{"id":'), "the new record starts on a line of its own");
  const check = await open(dir.path);
  assert.deepEqual((await check.load(session.id)).messages, [...messages, extra]);
  await check.close();
});

Deno.test("embedded store: a record glued behind a torn line is salvaged", () => {
  const good = JSON.stringify({ id: "b", seq: 1, turns: 1, message: { role: "user" } });
  const text = `{"id":"a","seq":0,"tur${good}\n`;
  const parsed = parseJsonLines(text, '{"id":"');
  assert.deepEqual(parsed.values, [JSON.parse(good)]);
  assert.deepEqual(parsed.damaged, 0);
});

Deno.test("memory off: nothing is written, and /memory turns it on and off", async () => {
  await using dir = await tempDir();
  const memory = await open(dir.path, { ...FILE, backend: "off" });
  assert.deepEqual(memory.enabled, false);
  assert.match(memory.status().text, /^Memory off: .*not saved.*sessions\)$/);
  const session = memory.newSession();
  await appendEach(session, conversation(1), "off");
  assert.deepEqual(session.messages.length, 5, "the conversation itself keeps every message");
  assert.deepEqual(await filesUnder(dir.path), [], "memory off wrote a file");

  const on = await memory.setEnabled(true);
  assert.deepEqual(on.enabled, true);
  assert.deepEqual(on.text, `Memory on: saving to ${join(dir.path, "sessions")}`);
  const kept = { role: "user" as const, content: "saved from now on", timestamp: tick() };
  assert.deepEqual(await session.append(kept), "written");
  await memory.setEnabled(false);
  assert.deepEqual(await session.append(exchange("not saved")[0]), "off");
  await memory.close();

  const check = await open(dir.path);
  assert.deepEqual((await check.load(session.id)).messages, [kept]);
  await check.close();
});

Deno.test("embedded store: secrets are redacted before anything is written", async () => {
  await using dir = await tempDir();
  const redactor = new Redactor();
  redactor.addSecret("hunter2-very-secret");
  const memory = await openMemory(FILE, noRedis, { dataDir: dir.path, redactor });
  const session = memory.newSession();
  const message = {
    role: "user" as const,
    content: "my password is hunter2-very-secret; header Authorization: Bearer abcdefghijklmnop",
    timestamp: tick(),
  };
  await session.append(message);
  assert.deepEqual(session.messages[0], message, "the live conversation keeps what was typed");
  await memory.close();
  const text = await Deno.readTextFile(join(dir.path, "sessions", `${session.id}.jsonl`));
  assert.ok(!text.includes("hunter2-very-secret"));
  assert.ok(!text.includes("abcdefghijklmnop"));
  assert.ok(text.includes("[REDACTED]"));
});

Deno.test("sessions: most recent first, limit, prefixes, ambiguity, not found, delete", async () => {
  await using dir = await tempDir();
  const memory = await open(dir.path);
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) {
    const session = memory.newSession();
    ids.push(session.id);
    for (const message of exchange(`Topic ${i}`)) await session.append(message);
  }
  const listed = await memory.sessions();
  assert.deepEqual(listed.map((s) => s.id), [...ids].reverse());
  assert.deepEqual((await memory.sessions({ limit: 2 })).map((s) => s.id), [ids[3], ids[2]]);
  assert.deepEqual((await memory.resume()).id, ids[3], "--resume takes the most recent");

  const notFound = await rejection(() => memory.find("nosuchsession"), SessionNotFoundError);
  assert.deepEqual(notFound.message, "Session 'nosuchsession' not found");
  assert.deepEqual(notFound.remedy, "`patchbay sessions` lists the stored sessions with their ids");
  const traversal = await rejection(() => memory.find("../../etc"), SessionNotFoundError);
  assert.match(traversal.reason, /letters and digits/);

  // An empty prefix matches every id: ambiguous.
  const store = memory.store as FileStore;
  assert.deepEqual((await store.findIds("")).length, 4);

  const deleted = await memory.delete(ids[1]);
  assert.deepEqual(deleted.id, ids[1]);
  assert.deepEqual((await memory.sessions()).length, 3);
  await rejection(() => memory.load(ids[1]), SessionNotFoundError);
  await memory.close();
});

Deno.test("sessions: an ambiguous id prefix names the candidates", async () => {
  await using dir = await tempDir();
  const store = new FileStore({ dir: join(dir.path, "sessions") });
  for (const id of ["abc111111111", "abc222222222"]) {
    await store.append(id, { id: `m-${id}`, seq: 0, message: exchange("x")[0] });
  }
  await store.close();
  const memory = await open(dir.path);
  const error = await rejection(() => memory.find("abc"), SessionNotFoundError);
  assert.deepEqual(error.message, "Session id 'abc' is ambiguous");
  assert.match(error.reason, /abc111111111/);
  assert.match(error.reason, /abc222222222/);
  assert.deepEqual((await memory.find("abc2")).id, "abc222222222");
  await memory.close();
});

Deno.test("--resume with nothing stored says so", async () => {
  await using dir = await tempDir();
  const memory = await open(dir.path);
  const error = await rejection(() => memory.resume(), SessionNotFoundError);
  assert.deepEqual(error.message, "No conversation to resume");
  await memory.close();
});

Deno.test("embedded store: sessions idle past Memory.ttl_seconds are deleted", async () => {
  await using dir = await tempDir();
  const memory = await open(dir.path, { ...FILE, ttlSeconds: 3600 });
  const old = memory.newSession();
  await old.append(exchange("old")[0]);
  const fresh = memory.newSession();
  await fresh.append(exchange("fresh")[0]);
  const oldPath = join(dir.path, "sessions", `${old.id}.jsonl`);
  const twoHoursAgo = new Date(Date.now() - 2 * 3600 * 1000);
  await Deno.utime(oldPath, twoHoursAgo, twoHoursAgo);
  assert.deepEqual((await memory.sessions()).map((s) => s.id), [fresh.id]);
  await rejection(() => Deno.stat(oldPath), Deno.errors.NotFound);
  await memory.close();
});

Deno.test("embedded store: a failed write is reported once, kept, and retried in order", async () => {
  await using dir = await tempDir();
  const events: MemoryEvent[] = [];
  const memory = await open(dir.path, FILE, events);
  const session = memory.newSession();
  // A directory where the session file should be: every open fails, even for root.
  const path = join(dir.path, "sessions", `${session.id}.jsonl`);
  await Deno.mkdir(path, { recursive: true });
  const messages = exchange("Will it save?");
  assert.deepEqual(await session.append(messages[0]), "unsaved");
  assert.deepEqual(await session.append(messages[1]), "unsaved");
  assert.deepEqual(events.map((e) => e.type), ["write-failed"], "reported once, not per message");
  const failed = events[0] as Extract<MemoryEvent, { type: "write-failed" }>;
  assert.ok(failed.error instanceof PatchbayError);
  assert.match(failed.error.message, /^Could not save the conversation to .*\.jsonl$/);
  assert.deepEqual(session.unsaved, 2);

  await Deno.remove(path);
  assert.deepEqual(await session.append(messages[2]), "written");
  assert.deepEqual(events.map((e) => e.type), ["write-failed", "write-recovered"]);
  await memory.close();
  const check = await open(dir.path);
  assert.deepEqual((await check.load(session.id)).messages, messages.slice(0, 3));
  await check.close();
});

Deno.test("embedded store: two writers on one session (two terminals) interleave whole lines", async () => {
  await using dir = await tempDir();
  const a = new FileStore({ dir: join(dir.path, "sessions") });
  const b = new FileStore({ dir: join(dir.path, "sessions") });
  const id = "twowriters01";
  const write = (store: FileStore, name: string) =>
    Promise.all(
      Array.from({ length: 150 }, (_, n) =>
        store.append(id, {
          id: `${name}-${n}`,
          seq: n,
          message: {
            role: "user",
            content: `${name} ${n} ${"y".repeat(n * 50)}`,
            timestamp: tick(),
          },
        })),
    );
  await Promise.all([write(a, "a"), write(b, "b")]);
  await Promise.all([a.close(), b.close()]);
  const text = await Deno.readTextFile(join(dir.path, "sessions", `${id}.jsonl`));
  assert.equal(parseJsonLines(text).damaged, 0);
  const records = (await new FileStore({ dir: join(dir.path, "sessions") }).load(id))!;
  assert.equal(records.length, 300);
  for (const name of ["a", "b"]) {
    const mine = records.filter((r) => r.id.startsWith(`${name}-`)).map((r) => r.id);
    assert.deepEqual(mine, Array.from({ length: 150 }, (_, n) => `${name}-${n}`), "order kept");
  }
});

Deno.test("embedded store that cannot be created: the conversation goes on without memory, and says so", async () => {
  await using dir = await tempDir();
  // A file where the data folder should be: no folder can be made there, even by root.
  const blocked = join(dir.path, "blocked");
  await Deno.writeTextFile(blocked, "");
  const events: MemoryEvent[] = [];
  const memory = await open(blocked, FILE, events);
  assert.deepEqual(events.map((e) => e.type), ["fallback"]);
  const fallback = events[0] as Extract<MemoryEvent, { type: "fallback" }>;
  assert.equal(fallback.message, "Memory is off for this session: nothing is saved.");
  assert.match(fallback.error.message, /^Could not create .*blocked\/sessions$/);
  assert.equal(memory.enabled, false);
  assert.match(memory.status().text, /^Memory off: nothing can be saved \(Could not create /);
  assert.equal(await memory.session.append(exchange("lost?")[0]), "off");
  assert.equal((await memory.setEnabled(true)).enabled, false, "there is still nowhere to save");
  await memory.close();

  await rejection(
    () => openMemory(FILE, noRedis, { dataDir: blocked, strict: true }),
    PatchbayError,
  );
});
