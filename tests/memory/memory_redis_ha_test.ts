import assert from "node:assert/strict";
import type { MemorySettings } from "../../lib/config/types.ts";
import { createEnvironment } from "../../lib/env.ts";
import { MemoryConfigError, StoreConnectError } from "../../lib/errors.ts";
import { type MemoryEvent, openMemory } from "../../lib/memory/mod.ts";
import { appendEach, conversation } from "../support/conversation.ts";
import { tempDir } from "../support/temp_dir.ts";
import { rejection } from "../support/errors.ts";
import { freePort, RedisCluster, RedisSentinel, RedisServer } from "../support/redis.ts";

const BASE: MemorySettings = { backend: "auto", keyPrefix: "patchbay" };

async function waitUntil(check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

Deno.test("Redis Sentinel: memory reaches the master the sentinels name", async () => {
  await using dir = await tempDir();
  await using master = await RedisServer.start({ password: "sentinel-master-pw" });
  await using sentinel = await RedisSentinel.start(master, "patchbaymaster");
  const settings: MemorySettings = {
    ...BASE,
    sentinels: [`127.0.0.1:${sentinel.port}`],
    sentinelName: "patchbaymaster",
  };
  const env = createEnvironment({ REDIS_PASSWORD: "sentinel-master-pw", REDIS_DB: "2" });
  const memory = await openMemory(settings, env, { dataDir: dir.path, strict: true });
  assert.equal(
    memory.status().location,
    `Redis Sentinel master 'patchbaymaster' via 127.0.0.1:${sentinel.port} db 2`,
  );
  const messages = conversation(2);
  await appendEach(memory.session, messages, "written");
  const id = memory.session.id;
  await memory.close();

  // The data is on the master, in the database asked for.
  assert.equal(
    await master.cli("-n", "2", "LLEN", `patchbay:v1:session:{${id}}:messages`),
    String(messages.length),
  );
  const again = await openMemory(settings, env, { dataDir: dir.path, strict: true });
  assert.deepEqual((await again.resume()).messages, messages);
  await again.close();

  // A master name the sentinels do not monitor.
  const wrong = await rejection(
    () =>
      openMemory({ ...settings, sentinelName: "nosuchmaster" }, env, {
        dataDir: dir.path,
        strict: true,
      }),
    StoreConnectError,
  );
  assert.match(
    wrong.message,
    /^Could not connect to Redis Sentinel at master .nosuchmaster. via [^:]+:\d+: the sentinels know no such master$/,
  );
});

Deno.test("Redis Sentinel: the master dies mid-session; after the failover every message is there once", async () => {
  await using dir = await tempDir();
  await using master = await RedisServer.start();
  await using replica = await master.startReplica();
  await using sentinel = await RedisSentinel.start(master, "failovermaster");
  await sentinel.awaitReplica(replica);
  const settings: MemorySettings = {
    ...BASE,
    sentinels: [`127.0.0.1:${sentinel.port}`],
    sentinelName: "failovermaster",
  };
  const events: MemoryEvent[] = [];
  const memory = await openMemory(settings, createEnvironment({}), {
    dataDir: dir.path,
    strict: true,
    onEvent: (event) => events.push(event),
  });
  const session = memory.newSession();
  const messages = conversation(3);
  await appendEach(session, messages.slice(0, 5), "written");

  await master.kill();
  await appendEach(session, messages.slice(5, 9), "journaled");
  await sentinel.awaitMaster(replica);
  await waitUntil(() => Promise.resolve(events.some((e) => e.type === "restored")));
  await appendEach(session, messages.slice(9), "written");
  await memory.close();

  assert.deepEqual(events.map((e) => e.type), ["unavailable", "restored"]);
  const stored = (await replica.cli(
    "LRANGE",
    `patchbay:v1:session:{${session.id}}:messages`,
    "0",
    "-1",
  )).split("\n").map((line) => JSON.parse(line).message);
  assert.deepEqual(stored, messages, "the new master does not hold the conversation exactly once");
});

Deno.test("Redis Sentinel: sentinels without sentinel_name is a configuration error", async () => {
  await using dir = await tempDir();
  const error = await rejection(
    () =>
      openMemory({ ...BASE, sentinels: [`127.0.0.1:${freePort()}`] }, createEnvironment({}), {
        dataDir: dir.path,
        strict: true,
      }),
    MemoryConfigError,
  );
  assert.equal(
    error.message,
    "Invalid configuration: Memory.sentinels is set but Memory.sentinel_name is not",
  );
});

Deno.test("Redis Cluster: sessions spread over the nodes, each session's keys in one slot", async () => {
  await using dir = await tempDir();
  await using cluster = await RedisCluster.start(3);
  const settings: MemorySettings = { ...BASE, clusterNodes: [cluster.addresses[0]] };
  const env = createEnvironment({});
  const memory = await openMemory(settings, env, { dataDir: dir.path, strict: true });
  assert.equal(memory.status().location, `Redis Cluster via ${cluster.addresses[0]}`);
  const written = new Map<string, ReturnType<typeof conversation>>();
  for (let i = 0; i < 6; i++) {
    const session = memory.newSession();
    const messages = conversation(1);
    await appendEach(session, messages, "written");
    written.set(session.id, messages);
  }
  await memory.close();

  const again = await openMemory(settings, env, { dataDir: dir.path, strict: true });
  const listed = await again.sessions();
  assert.deepEqual(new Set(listed.map((s) => s.id)), new Set(written.keys()));
  for (const [id, messages] of written) {
    assert.deepEqual((await again.load(id)).messages, messages);
  }
  await again.close();

  // Sessions landed on more than one node (hash tags spread them by id).
  const holders = new Set<number>();
  for (const id of written.keys()) {
    for (const [index, node] of cluster.nodes.entries()) {
      const key = `patchbay:v1:session:{${id}}:messages`;
      if (await node.cli("EXISTS", key).catch(() => "0") === "1") holders.add(index);
    }
  }
  assert.ok(holders.size > 1, "every session on one node: the hash tags are not working");

  const db = await rejection(
    () =>
      openMemory(settings, createEnvironment({ REDIS_DB: "1" }), {
        dataDir: dir.path,
        strict: true,
      }),
    MemoryConfigError,
  );
  assert.match(db.message, /Redis Cluster has only database 0/);
});
