/**
 * Conversation memory speed: appending one message, and loading a session of 10,000
 * messages, for the embedded store and Redis (a real redis-server on a loopback port);
 * and how soon a Redis that cannot be used is reported (docs/memory.md promises about 1.5 s
 * for a host that accepts and never answers, at once for a closed port).
 *
 * The `reference:` rows measure the formats the embedded store did not choose, on the same
 * messages: SQLite in WAL mode with full sync (node:sqlite), and a whole-session JSON file
 * rewritten atomically (temporary file, fsync, rename) on every message.
 *
 * Run: `deno task bench` (or `deno bench --allow-all bench/memory_bench.ts`).
 *
 * @module
 */

import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { MemorySettings } from "../lib/config/types.ts";
import { createEnvironment } from "../lib/env.ts";
import { FileStore } from "../lib/memory/file_store.ts";
import { newMessageId, newSessionId } from "../lib/memory/ids.ts";
import { openMemory } from "../lib/memory/open.ts";
import { RedisStore } from "../lib/memory/redis_store.ts";
import type { MemoryStore, MessageRecord, StoredMessage } from "../lib/memory/types.ts";
import { freePort, RedisServer } from "../tests/support/redis.ts";
import { silentListener } from "../tests/support/servers.ts";

/** Messages in the session the load benchmarks read. */
const LARGE_SESSION = 10_000;

/** A realistic mix: questions, tool calls, tool results of a few hundred bytes, answers. */
function message(n: number): StoredMessage {
  const timestamp = new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
  switch (n % 4) {
    case 0:
      return { role: "user", content: `Question ${n}: what is in the notes folder?`, timestamp };
    case 1:
      return {
        role: "assistant",
        content: null,
        toolCalls: [{ id: `call_${n}`, name: "fs__list_directory", arguments: '{"path":"notes"}' }],
        model: "gpt-4o-mini",
        timestamp,
      };
    case 2:
      return {
        role: "tool",
        content: Array.from({ length: 12 }, (_, i) => `[FILE] note-${n}-${i}.md`).join("\n"),
        toolCallId: `call_${n - 1}`,
        server: "fs",
        tool: "list_directory",
        timestamp,
      };
    default:
      return {
        role: "assistant",
        content: `The folder holds twelve notes, numbered ${n}-0 to ${n}-11. `.repeat(3),
        model: "gpt-4o-mini",
        timestamp,
      };
  }
}

async function fill(store: MemoryStore, sessionId: string, count: number): Promise<void> {
  for (let n = 0; n < count; n++) {
    await store.append(sessionId, { id: newMessageId(), seq: n, message: message(n) });
  }
}

const dir = await Deno.makeTempDir({ prefix: "patchbay-bench-" });
const redis = await RedisServer.start();
const settings: MemorySettings = { backend: "auto", keyPrefix: "patchbay" };

const files = new FileStore({ dir: join(dir, "sessions") });
const memory = await openMemory(settings, createEnvironment(redis.env), {
  dataDir: join(dir, "redis-data"),
  strict: true,
});
const redisStore = memory.store as RedisStore;

const large = newSessionId();
await fill(files, large, LARGE_SESSION);
await fill(redisStore, large, LARGE_SESSION);

let fileSeq = 0;
let redisSeq = 0;
const fileSession = newSessionId();
const redisSession = newSessionId();
const record = (seq: number): MessageRecord => ({ id: newMessageId(), seq, message: message(seq) });

Deno.bench("embedded store: append one message (write + fdatasync)", {
  group: "append",
  baseline: true,
}, async () => {
  await files.append(fileSession, record(fileSeq++));
});

Deno.bench("Redis: append one message (script + index, one round trip)", {
  group: "append",
}, async () => {
  await redisStore.append(redisSession, record(redisSeq++));
});

// The naive alternative: the whole session as one JSON document, replaced on every message.
const REWRITTEN_SESSION = 1_000;
const document = Array.from({ length: REWRITTEN_SESSION }, (_, n) => message(n));
const documentPath = join(dir, "session.json");
Deno.bench(
  `reference: rewrite a ${REWRITTEN_SESSION}-message JSON file atomically per message`,
  { group: "append" },
  async () => {
    document.push(message(document.length));
    const temporary = `${documentPath}.tmp`;
    const file = await Deno.open(temporary, { write: true, create: true, truncate: true });
    await file.write(new TextEncoder().encode(JSON.stringify(document)));
    await file.syncData();
    file.close();
    await Deno.rename(temporary, documentPath);
    document.pop();
  },
);

// SQLite, as crash-safe as it gets: write-ahead log, fsync on every commit.
const database = new DatabaseSync(join(dir, "sessions.db"));
database.exec(
  "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; " +
    "CREATE TABLE messages (session TEXT, seq INTEGER, record TEXT, PRIMARY KEY (session, seq))",
);
const insert = database.prepare("INSERT INTO messages VALUES (?, ?, ?)");
const select = database.prepare("SELECT record FROM messages WHERE session = ? ORDER BY seq");
for (let n = 0; n < LARGE_SESSION; n++) {
  insert.run(large, n, JSON.stringify({ id: newMessageId(), seq: n, message: message(n) }));
}
let sqliteSeq = 0;
const sqliteSession = newSessionId();
Deno.bench("reference: SQLite (WAL, synchronous=FULL) insert one message", {
  group: "append",
}, () => {
  const n = sqliteSeq++;
  insert.run(sqliteSession, n, JSON.stringify(record(n)));
});
Deno.bench(`reference: SQLite load a session of ${LARGE_SESSION} messages`, {
  group: "load",
}, () => {
  const rows = select.all(large) as Array<{ record: string }>;
  const records = rows.map((row) => JSON.parse(row.record));
  if (records.length !== LARGE_SESSION) throw new Error(`loaded ${records.length}`);
});

Deno.bench(`embedded store: load a session of ${LARGE_SESSION} messages`, {
  group: "load",
  baseline: true,
}, async () => {
  const records = await files.load(large);
  if (records?.length !== LARGE_SESSION) throw new Error(`loaded ${records?.length}`);
});

Deno.bench(`Redis: load a session of ${LARGE_SESSION} messages`, {
  group: "load",
}, async () => {
  const records = await redisStore.load(large);
  if (records?.length !== LARGE_SESSION) throw new Error(`loaded ${records?.length}`);
});

const LISTED_SESSIONS = 500;
const many = new FileStore({ dir: join(dir, "many") });
for (let i = 0; i < LISTED_SESSIONS; i++) await fill(many, newSessionId(), 4);

Deno.bench(
  `embedded store: list the 20 most recent of ${LISTED_SESSIONS} sessions`,
  { group: "list" },
  async () => {
    const listed = await many.list({ limit: 20 });
    if (listed.length !== 20) throw new Error(`listed ${listed.length}`);
  },
);

/** Opens Redis strictly at `env` and expects the failure it reports. */
async function reportedFailure(env: Record<string, string>): Promise<void> {
  const failed = await openMemory(settings, createEnvironment(env), {
    dataDir: join(dir, "unreachable"),
    strict: true,
  }).then(() => false, () => true);
  if (!failed) throw new Error("the store opened");
}

const closedPort = freePort();
Deno.bench("Redis unusable: closed port reported (connection refused)", {
  group: "unusable store",
  n: 10,
}, async () => {
  await reportedFailure({ REDIS_HOST: "127.0.0.1", REDIS_PORT: String(closedPort) });
});

const silent = silentListener();
Deno.bench("Redis unusable: host that accepts and never answers reported", {
  group: "unusable store",
  n: 3,
}, async () => {
  await reportedFailure({ REDIS_HOST: "127.0.0.1", REDIS_PORT: String(silent.port) });
});

// deno bench has no teardown hook: the server and the folders go at exit.
globalThis.addEventListener("unload", () => {
  database.close();
  redis.disposeSync();
  Deno.removeSync(dir, { recursive: true });
});
