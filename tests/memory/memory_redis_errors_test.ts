import assert from "node:assert/strict";
import { join } from "node:path";
import type { MemorySettings } from "../../lib/config/types.ts";
import { createEnvironment } from "../../lib/env.ts";
import {
  MemoryConfigError,
  StoreAuthError,
  StoreConnectError,
  StoreDatabaseError,
} from "../../lib/errors.ts";
import { ROWS } from "../../lib/errors/failure_table.ts";
import { type MemoryEvent, openMemory } from "../../lib/memory/mod.ts";
import { appendEach, exchange } from "../support/conversation.ts";
import { tempDir } from "../support/temp_dir.ts";
import { rejection } from "../support/errors.ts";
import { assumingClosed, silentListener } from "../support/servers.ts";
import { freePort, RedisServer } from "../support/redis.ts";

const SETTINGS: MemorySettings = { backend: "auto", keyPrefix: "patchbay" };
/**
 * Opens strictly and returns the error. How soon it arrives is measured by
 * `deno task bench` (bench/memory_bench.ts), not here: a loaded machine must not fail a test.
 */
async function failure<T extends Error>(
  env: Record<string, string>,
  type: new (...args: never[]) => T,
): Promise<{ error: T }> {
  await using dir = await tempDir();
  const error = await rejection(
    () => openMemory(SETTINGS, createEnvironment(env), { dataDir: dir.path, strict: true }),
    type as never,
  ) as T;
  return { error };
}

Deno.test("closed port: 'connection refused' at once", async () => {
  const port = freePort();
  await assumingClosed(port, async () => {
    const { error } = await failure(
      { REDIS_HOST: "127.0.0.1", REDIS_PORT: String(port) },
      StoreConnectError,
    );
    assert.equal(
      error.message,
      `Could not connect to Redis at 127.0.0.1:${port} db 0: connection refused`,
    );
    assert.equal(
      error.reason,
      `nothing is listening at 127.0.0.1:${port}: the store is not ` +
        "running, or REDIS_HOST/REDIS_PORT point at the wrong host or port",
    );
    assert.equal(error.remedy, ROWS.store.remedy.repl);
    assert.match(error.remedy, /start the store.*REDIS_\*.*\/memory/);
  });
});

Deno.test("unreachable host (accepts, never answers): reported within the bound", async () => {
  await using silent = silentListener();
  const { error } = await failure(
    { REDIS_HOST: "127.0.0.1", REDIS_PORT: String(silent.port) },
    StoreConnectError,
  );
  assert.equal(
    error.message,
    `Could not connect to Redis at 127.0.0.1:${silent.port} db 0: no answer within 1.5 s`,
  );
  assert.match(error.reason, /did not answer in time/);
});

Deno.test("wrong password and missing password get their own messages", async () => {
  await using redis = await RedisServer.start({ password: "right-password-123" });
  const wrong = await failure({ ...redis.env, REDIS_PASSWORD: "wrong-password" }, StoreAuthError);
  assert.equal(
    wrong.error.message,
    `Could not connect to Redis at 127.0.0.1:${redis.port} db 0: wrong password`,
  );
  assert.match(wrong.error.reason, /WRONGPASS/);
  assert.match(wrong.error.remedy, /REDIS_PASSWORD/);

  const missing = await failure(
    { REDIS_HOST: "127.0.0.1", REDIS_PORT: String(redis.port) },
    StoreAuthError,
  );
  assert.equal(
    missing.error.message,
    `Could not connect to Redis at 127.0.0.1:${redis.port} db 0: the server requires a password`,
  );
  assert.match(missing.error.reason, /REDIS_PASSWORD is not set/);
});

Deno.test("wrong database index: says which databases exist", async () => {
  await using redis = await RedisServer.start({ args: ["--databases", "4"] });
  const { error } = await failure({ ...redis.env, REDIS_DB: "9" }, StoreDatabaseError);
  assert.equal(
    error.message,
    `Could not connect to Redis at 127.0.0.1:${redis.port} db 9: database 9 does not exist ` +
      "(this server has 4: 0-3)",
  );
  assert.match(error.remedy, /set REDIS_DB to a database the server has \(0 to 3\)/);
  // Nothing was written to database 0 instead.
  assert.equal(await redis.cli("DBSIZE"), "0");
});

Deno.test("bad REDIS_* values are configuration errors naming the variable", async () => {
  const port = await failure({ REDIS_HOST: "127.0.0.1", REDIS_PORT: "63a79" }, MemoryConfigError);
  assert.equal(
    port.error.message,
    'Invalid configuration: REDIS_PORT is "63a79", not a port number (1-65535)',
  );
  const db = await failure({ REDIS_HOST: "127.0.0.1", REDIS_DB: "-1" }, MemoryConfigError);
  assert.match(db.error.message, /REDIS_DB is "-1", not a database number/);
  const url = await failure({ REDIS_URL: "http://127.0.0.1:6379" }, MemoryConfigError);
  assert.match(url.error.message, /REDIS_URL .* not a redis:\/\/ or rediss:\/\/ URL/);
});

Deno.test("store down at start: the client keeps working and the messages arrive once it is up", async () => {
  await using dir = await tempDir();
  const port = freePort();
  await assumingClosed(port, async () => {
    const events: MemoryEvent[] = [];
    const memory = await openMemory(
      SETTINGS,
      createEnvironment({ REDIS_HOST: "127.0.0.1", REDIS_PORT: String(port) }),
      { dataDir: dir.path, onEvent: (event) => events.push(event) },
    );
    assert.equal(memory.enabled, true);
    assert.deepEqual(events.map((e) => e.type), ["unavailable"]);
    const warning = events[0] as Extract<MemoryEvent, { type: "unavailable" }>;
    assert.ok(warning.error instanceof StoreConnectError);
    assert.equal(
      warning.error.message,
      `Could not connect to Redis at 127.0.0.1:${port} db 0: connection refused`,
    );
    assert.match(warning.message, /^Memory continues in a local journal/);

    const session = memory.newSession();
    const messages = exchange("while Redis is down");
    await appendEach(session, messages, "journaled");
    assert.equal(events.length, 1, "warned once");

    await using redis = await RedisServer.start({ port });
    const deadline = Date.now() + 20_000;
    while (!events.some((e) => e.type === "restored") && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.deepEqual(events.map((e) => e.type), ["unavailable", "restored"]);
    assert.equal(memory.status().available, true);
    assert.equal(await session.append(exchange("after")[0]), "written");
    await memory.close();
    const stored =
      (await redis.cli("LRANGE", `patchbay:v1:session:{${session.id}}:messages`, "0", "-1"))
        .split("\n").map((line) => JSON.parse(line).message.content);
    assert.equal(stored.length, messages.length + 1);
    assert.deepEqual(stored.slice(0, messages.length), messages.map((m) => m.content));
    // The journal was emptied once delivered and removed at close.
    const folders = await Array.fromAsync(Deno.readDir(join(dir.path, "journal")));
    for (const folder of folders) {
      assert.deepEqual(
        await Array.fromAsync(Deno.readDir(join(dir.path, "journal", folder.name))),
        [],
      );
    }
  });
});

Deno.test("a REDIS_* value that cannot work: memory falls back to the embedded store and says so", async () => {
  await using dir = await tempDir();
  const events: MemoryEvent[] = [];
  const memory = await openMemory(
    SETTINGS,
    createEnvironment({ REDIS_HOST: "127.0.0.1", REDIS_PORT: "not-a-port" }),
    { dataDir: dir.path, onEvent: (event) => events.push(event) },
  );
  assert.deepEqual(events.map((e) => e.type), ["fallback"]);
  const fallback = events[0] as Extract<MemoryEvent, { type: "fallback" }>;
  assert.ok(fallback.error instanceof MemoryConfigError);
  assert.equal(fallback.location, join(dir.path, "sessions"));
  assert.equal(memory.status().kind, "file");
  const session = memory.newSession();
  assert.equal(await session.append(exchange("kept locally")[0]), "written");
  await memory.close();
  assert.ok((await Deno.stat(join(dir.path, "sessions", `${session.id}.jsonl`))).isFile);
});
