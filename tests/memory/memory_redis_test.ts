import assert from "node:assert/strict";
import { join } from "node:path";
import type { MemorySettings } from "../../lib/config/types.ts";
import { createEnvironment } from "../../lib/env.ts";
import { StoreConnectError, StoreFailedError } from "../../lib/errors.ts";
import { FileStore } from "../../lib/memory/file_store.ts";
import { type MemoryEvent, openMemory } from "../../lib/memory/mod.ts";
import { journalFolder } from "../../lib/redis/settings.ts";
import { RedisStore } from "../../lib/memory/redis_store.ts";
import { appendEach, conversation, exchange, tick } from "../support/conversation.ts";
import { tempDir } from "../support/temp_dir.ts";
import { selfSignedCertificate } from "../support/tls.ts";
import { rejection } from "../support/errors.ts";
import { RedisServer, RoundTripRelay } from "../support/redis.ts";

const SETTINGS: MemorySettings = { backend: "auto", keyPrefix: "patchbay" };

function openWith(
  env: Record<string, string>,
  dataDir: string,
  events: MemoryEvent[] = [],
  settings: MemorySettings = SETTINGS,
) {
  return openMemory(settings, createEnvironment(env), {
    dataDir,
    onEvent: (event) => events.push(event),
  });
}

const keysOf = (id: string) => ({
  messages: `patchbay:v1:session:{${id}}:messages`,
  ids: `patchbay:v1:session:{${id}}:ids`,
  meta: `patchbay:v1:session:{${id}}:meta`,
});

/** Waits until an event of this type arrived (the store recovers in the background). */
async function eventually(events: MemoryEvent[], type: MemoryEvent["type"], ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!events.some((e) => e.type === type)) {
    if (Date.now() > deadline) {
      throw new Error(`no '${type}' event within ${ms} ms: ${events.map((e) => e.type)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

Deno.test("Redis: a conversation with tool calls round-trips, resumes after restart, in the documented layout", async () => {
  await using dir = await tempDir();
  await using redis = await RedisServer.start();
  const messages = conversation(2);
  const first = await openWith(redis.env, dir.path);
  assert.equal(first.status().text, `Memory on: saving to Redis at 127.0.0.1:${redis.port} db 0`);
  const session = first.newSession();
  await appendEach(session, messages, "written");
  await first.close();

  const second = await openWith(redis.env, dir.path);
  const resumed = await second.resume();
  assert.equal(resumed.id, session.id);
  assert.deepEqual(resumed.messages, messages);
  const [summary] = await second.sessions();
  assert.deepEqual(summary, {
    id: session.id,
    started: messages[0].timestamp,
    lastMessageAt: messages.at(-1)!.timestamp,
    messages: messages.length,
    turns: 2,
    model: "gpt-4o-mini",
    title: "Question 1?",
  });
  await second.close();

  // The layout docs/memory.md documents.
  const keys = keysOf(session.id);
  assert.equal(await redis.cli("GET", "patchbay:schema"), "1");
  assert.equal(
    await redis.cli("ZSCORE", "patchbay:v1:sessions", session.id),
    String(Date.parse(messages.at(-1)!.timestamp)),
  );
  assert.equal(Number(await redis.cli("LLEN", keys.messages)), messages.length);
  assert.equal(Number(await redis.cli("SCARD", keys.ids)), messages.length);
  const firstItem = JSON.parse(await redis.cli("LINDEX", keys.messages, "0"));
  assert.deepEqual(Object.keys(firstItem), ["id", "seq", "message"]);
  assert.equal(await redis.cli("HGET", keys.meta, "turns"), "2");
  assert.equal(await redis.cli("TTL", keys.messages), "-1", "no TTL unless configured");
  // Nothing was written to the embedded store.
  await assert.rejects(() => Deno.stat(join(dir.path, "sessions", `${session.id}.jsonl`)));
});

Deno.test("Redis: Memory.ttl_seconds expires idle sessions", async () => {
  await using dir = await tempDir();
  await using redis = await RedisServer.start();
  const memory = await openWith(redis.env, dir.path, [], { ...SETTINGS, ttlSeconds: 600 });
  const session = memory.newSession();
  await session.append(exchange("short-lived")[0]);
  await memory.close();
  for (const key of Object.values(keysOf(session.id))) {
    const ttl = Number(await redis.cli("TTL", key));
    assert.ok(ttl > 590 && ttl <= 600, `${key} TTL ${ttl}`);
  }
});

Deno.test("Redis: REDIS_URL selects host, port and database", async () => {
  await using dir = await tempDir();
  await using redis = await RedisServer.start({ password: "url-secret-pass" });
  const env = { REDIS_URL: `redis://:url-secret-pass@127.0.0.1:${redis.port}/3` };
  const memory = await openWith(env, dir.path);
  assert.equal(memory.status().location, `Redis at 127.0.0.1:${redis.port} db 3`);
  const session = memory.newSession();
  await session.append(exchange("in db 3")[0]);
  await memory.close();
  assert.equal(await redis.cli("-n", "3", "EXISTS", keysOf(session.id).messages), "1");
  assert.equal(await redis.cli("-n", "0", "DBSIZE"), "0");
});

for (const fresh of [false, true]) {
  Deno.test(`Redis SIGKILLed mid-session and restarted (${fresh ? "empty" : "same data"}): every message exactly once`, async () => {
    await using dir = await tempDir();
    // Append-only file with fsync: what a server that survives a crash keeps.
    await using redis = await RedisServer.start({ persistence: "aof" });
    const events: MemoryEvent[] = [];
    const memory = await openWith(redis.env, dir.path, events);
    const session = memory.newSession();
    const messages = conversation(3);
    await appendEach(session, messages.slice(0, 5), "written");

    await redis.kill();
    await appendEach(session, messages.slice(5, 9), "journaled");
    assert.deepEqual(events.map((e) => e.type), ["unavailable"], "warned once, not per message");
    const warning = events[0] as Extract<MemoryEvent, { type: "unavailable" }>;
    assert.match(
      warning.error.message,
      /^Could not connect to Redis at 127\.0\.0\.1:\d+ db \d+: (the connection was lost|connection refused)$/,
    );
    assert.match(warning.message, /^Memory continues in the local journal .*\.jsonl; /);
    const status = memory.status();
    assert.equal(status.available, false);
    assert.equal(status.pending, 4);
    assert.match(status.text, /is unreachable .*; 4 messages waiting in the local journal /);

    await redis.restart({ fresh });
    await eventually(events, "restored");
    await appendEach(session, messages.slice(9), "written");
    await memory.close();

    const stored = (await redis.cli("LRANGE", keysOf(session.id).messages, "0", "-1"))
      .split("\n").map((line) => JSON.parse(line).message);
    assert.deepEqual(stored, messages, "lost, duplicated or reordered messages");
    assert.equal(await redis.cli("HGET", keysOf(session.id).meta, "turns"), "3");
    const restored = events.find((e) => e.type === "restored") as Extract<
      MemoryEvent,
      { type: "restored" }
    >;
    assert.equal(restored.delivered, 4);
  });
}

Deno.test("Redis: a retried write (reply lost) and a replayed journal store nothing twice", async () => {
  await using dir = await tempDir();
  await using redis = await RedisServer.start();
  const memory = await openWith(redis.env, dir.path);
  const store = memory.store as RedisStore;
  const record = { id: "retried-message-1", seq: 0, message: exchange("once")[0] };
  assert.equal(await store.append("sessiondupe1", record), "written");
  assert.equal(await store.append("sessiondupe1", record), "duplicate");
  await memory.close();
  assert.equal(await redis.cli("LLEN", keysOf("sessiondupe1").messages), "1");

  // A journal an earlier run left although its messages had arrived.
  const journalDir = join(
    dir.path,
    "journal",
    journalFolder(`redis:127.0.0.1:${redis.port}/0/patchbay`),
  );
  await Deno.mkdir(journalDir, { recursive: true });
  const line = JSON.stringify({
    id: record.id,
    seq: 0,
    session: "sessiondupe1",
    message: record.message,
  });
  await Deno.writeTextFile(join(journalDir, "1-old.jsonl"), `${line}\n`);
  const events: MemoryEvent[] = [];
  const again = await openWith(redis.env, dir.path, events);
  await again.close();
  assert.deepEqual(events.map((e) => e.type), ["replayed"]);
  assert.equal(await redis.cli("LLEN", keysOf("sessiondupe1").messages), "1");
  assert.deepEqual(await Array.fromAsync(Deno.readDir(journalDir)), [], "journal not removed");
});

Deno.test("Redis away until exit: the journal stays, the session is copied locally, the next run delivers it", async () => {
  await using dir = await tempDir();
  await using redis = await RedisServer.start({ persistence: "aof" });
  const events: MemoryEvent[] = [];
  const memory = await openWith(redis.env, dir.path, events);
  const session = memory.newSession();
  const messages = conversation(1);
  await session.append(messages[0]);
  await session.append(messages[1]);
  await redis.kill();
  for (const message of messages.slice(2)) await session.append(message);
  await memory.close();

  const kept = events.find((e) => e.type === "kept") as Extract<MemoryEvent, { type: "kept" }>;
  assert.ok(kept, `no 'kept' event: ${events.map((e) => e.type)}`);
  assert.equal(kept.messages, 3);
  assert.ok(kept.journal && (await Deno.stat(kept.journal)).isFile, "journal not on disk");
  assert.equal(kept.rescue, join(dir.path, "sessions", `${session.id}.jsonl`));
  assert.match(kept.message, /^3 messages could not reach Redis at .*: kept in .*\.jsonl/);
  // The local copy holds the whole conversation, resumable without Redis.
  const local = await new FileStore({ dir: join(dir.path, "sessions") }).load(session.id);
  assert.deepEqual(local?.map((r) => r.message), messages);

  await redis.restart();
  const nextEvents: MemoryEvent[] = [];
  const next = await openWith(redis.env, dir.path, nextEvents);
  assert.deepEqual(nextEvents.map((e) => e.type), ["replayed"]);
  assert.deepEqual((await next.load(session.id)).messages, messages);
  await next.close();
  await assert.rejects(() => Deno.stat(kept.journal!), Deno.errors.NotFound);
});

Deno.test("Redis with memory off: nothing is written to the store", async () => {
  await using dir = await tempDir();
  await using redis = await RedisServer.start();
  const off = await openWith(redis.env, dir.path, [], { ...SETTINGS, backend: "off" });
  assert.match(off.status().text, /^Memory off: .*Redis at 127\.0\.0\.1:\d+ db 0\)$/);
  await appendEach(off.session, conversation(1), "off");
  await off.close();
  assert.equal(await redis.cli("DBSIZE"), "0");
  assert.deepEqual(await Array.fromAsync(Deno.readDir(dir.path)), []);

  // Switched off mid-session: what follows stays out of the store.
  const memory = await openWith(redis.env, dir.path);
  const session = memory.newSession();
  const before = exchange("kept");
  for (const message of before) await session.append(message);
  await memory.setEnabled(false);
  for (const message of exchange("private")) await session.append(message);
  await memory.close();
  const stored = (await redis.cli("LRANGE", keysOf(session.id).messages, "0", "-1"))
    .split("\n").map((line) => JSON.parse(line).message);
  assert.deepEqual(stored, before);
});

Deno.test("Redis: data in a newer layout is refused, not misread", async () => {
  await using dir = await tempDir();
  await using redis = await RedisServer.start();
  await redis.cli("SET", "patchbay:schema", "2");
  const error = await rejection(
    () => openMemory(SETTINGS, createEnvironment(redis.env), { dataDir: dir.path, strict: true }),
    StoreFailedError,
  );
  assert.equal(
    error.message,
    `Redis at 127.0.0.1:${redis.port} db 0 holds conversations in a layout this patchbay cannot read`,
  );
  assert.match(error.reason, /patchbay:schema is 2; this version of patchbay reads layout 1/);
  assert.match(error.remedy, /Memory\.key_prefix/);
});

Deno.test("Redis: listing is most recent first; limit and delete work", async () => {
  await using dir = await tempDir();
  await using redis = await RedisServer.start();
  const memory = await openWith(redis.env, dir.path);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const session = memory.newSession();
    ids.push(session.id);
    await session.append({ role: "user", content: `topic ${i}`, timestamp: tick() });
  }
  assert.deepEqual((await memory.sessions()).map((s) => s.id), [...ids].reverse());
  assert.deepEqual((await memory.sessions({ limit: 1 })).map((s) => s.id), [ids[2]]);
  assert.equal((await memory.find(ids[0].slice(0, 6))).id, ids[0]);
  await memory.delete(ids[1]);
  assert.deepEqual((await memory.sessions()).map((s) => s.id), [ids[2], ids[0]]);
  assert.equal(await redis.cli("EXISTS", keysOf(ids[1]).messages), "0");
  await memory.close();
});

Deno.test("Redis over TLS: rediss:// with REDIS_TLS_CA_FILE", async () => {
  await using dir = await tempDir();
  const { cert, key } = await selfSignedCertificate(dir.path);
  await using redis = await RedisServer.start({ tls: { cert, key } });
  const env = { REDIS_URL: `rediss://127.0.0.1:${redis.port}`, REDIS_TLS_CA_FILE: cert };
  const memory = await openWith(env, join(dir.path, "data"));
  assert.equal(memory.status().location, `Redis at 127.0.0.1:${redis.port} db 0, TLS`);
  const messages = exchange("over TLS");
  await appendEach(memory.session, messages, "written");
  await memory.close();
  const again = await openWith(env, join(dir.path, "data"));
  assert.deepEqual((await again.resume()).messages, messages);
  await again.close();

  // Without the CA the self-signed certificate is refused, and the message says so.
  const untrusted = await rejection(
    () =>
      openMemory(SETTINGS, createEnvironment({ REDIS_URL: env.REDIS_URL }), {
        dataDir: join(dir.path, "data"),
        strict: true,
      }),
    StoreConnectError,
  );
  assert.equal(
    untrusted.message,
    `Could not connect to Redis at 127.0.0.1:${redis.port} db 0: TLS handshake failed ` +
      "(self-signed certificate)",
  );
  assert.match(untrusted.remedy, /REDIS_TLS_CA_FILE/);
});

Deno.test("Redis: one session resumed in two terminals keeps both sides' messages", async () => {
  await using dir = await tempDir();
  await using redis = await RedisServer.start();
  const first = await openWith(redis.env, dir.path);
  const session = first.newSession();
  const start = exchange("shared");
  for (const message of start) await session.append(message);
  await first.close();

  const left = await openWith(redis.env, dir.path);
  const right = await openWith(redis.env, dir.path);
  const a = await left.resume(session.id);
  const b = await right.resume(session.id);
  const fromLeft = { role: "user" as const, content: "from the left", timestamp: tick() };
  const fromRight = { role: "user" as const, content: "from the right", timestamp: tick() };
  // Both think they are writing message 4.
  assert.equal(await a.append(fromLeft), "written");
  assert.equal(await b.append(fromRight), "written");
  await Promise.all([left.close(), right.close()]);

  const check = await openWith(redis.env, dir.path);
  const { messages, summary } = await check.load(session.id);
  assert.deepEqual(messages, [...start, fromLeft, fromRight]);
  assert.equal(summary.turns, 3);
  await check.close();
});

/** Calls per command since the server started, from `INFO commandstats` (INFO left out). */
async function commandCalls(redis: RedisServer): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const line of (await redis.cli("INFO", "commandstats")).split("\n")) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (match && match[1] !== "info") calls.set(match[1], Number(match[2]));
  }
  return calls;
}

/** The commands run between two {@linkcode commandCalls} readings, with their counts. */
function commandsBetween(before: Map<string, number>, after: Map<string, number>) {
  const ran: Record<string, number> = {};
  for (const [name, count] of after) {
    if (count !== (before.get(name) ?? 0)) ran[name] = count - (before.get(name) ?? 0);
  }
  return ran;
}

Deno.test("Redis: appending a message is one round trip (the append script and the index update, pipelined)", async () => {
  await using dir = await tempDir();
  await using redis = await RedisServer.start();
  // Everything patchbay sends passes through the relay, which sees when it waits.
  await using relay = new RoundTripRelay(redis.port);
  const memory = await openWith(
    { REDIS_HOST: "127.0.0.1", REDIS_PORT: String(relay.port) },
    dir.path,
  );
  try {
    const session = memory.newSession();
    // The new conversation's lease (one SET, once per conversation) is not an append's.
    await memory.leaseTaken();
    for (const [i, message] of conversation(2).entries()) {
      const trips = relay.trips.length;
      const calls = await commandCalls(redis);
      assert.equal(await session.append(message), "written");
      // ioredis sends the script itself the first time on a connection, its SHA after.
      const script = i === 0 ? "eval" : "evalsha";
      assert.deepEqual(relay.trips.slice(trips), [[script, "zadd"]], `message ${i}`);
      // The server ran each once (the script's own writes count apart in commandstats).
      const ran = commandsBetween(calls, await commandCalls(redis));
      assert.deepEqual([ran[script], ran.zadd], [1, 1], JSON.stringify(ran));
    }
  } finally {
    await memory.close();
  }
});
