/**
 * The task registry (docs/tasks.md): one interface, kept in a file (the embedded store's
 * folder, or the state folder when memory is off) or in Redis beside the conversations.
 * A record written is read back by another instance (another process), the last change of
 * a task wins, a torn line is skipped, the file stays owner-only and compact, the count is
 * bounded with pending tasks kept longest, and a store that cannot take a record leaves
 * it in the state folder's file rather than losing it.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { MemorySettings } from "../../lib/config/types.ts";
import { createEnvironment } from "../../lib/env.ts";
import { openMemory } from "../../lib/memory/mod.ts";
import { keptRecords, type TaskRecord, type TaskRegistry } from "../../lib/memory/task_registry.ts";
import { FileTaskRegistry, TASKS_FILE } from "../../lib/memory/task_registry_file.ts";
import { openTaskRegistry } from "../../lib/memory/task_registry_open.ts";
import { RedisServer } from "../support/redis.ts";
import { tempDir } from "../support/temp_dir.ts";

function record(id: string, extra: Partial<TaskRecord> = {}): TaskRecord {
  const createdAt = extra.createdAt ??
    new Date(Date.UTC(2026, 0, 1, 0, 0, Number(id.replace(/\D/g, "")) || 0)).toISOString();
  return {
    id,
    server: "ev",
    tool: "simulate-research-query",
    arguments: '{"topic":"deno"}',
    generation: "v1",
    endpoint: "patchbay:v1:sha256:0",
    createdAt,
    updatedAt: createdAt,
    followUntil: createdAt,
    state: "working",
    ...extra,
  };
}

async function exercise(registry: TaskRegistry, reopen: () => TaskRegistry): Promise<void> {
  await registry.put(record("t1", { conversation: "c1", toolCallId: "call_1" }));
  await registry.put(record("t2"));
  await registry.put(
    record("t1", { state: "completed", result: "done", updatedAt: "2026-01-01T01:00:00.000Z" }),
  );
  const other = reopen();
  const listed = await other.list();
  assert.deepEqual(listed.map((r) => r.id), ["t2", "t1"], "newest first");
  assert.equal(listed[1].state, "completed", "the last change of a task wins");
  assert.equal(listed[1].result, "done");
  // Task ids are unique per server only.
  await other.put(record("t1", { server: "other" }));
  assert.equal((await registry.list()).filter((r) => r.id === "t1").length, 2);
}

Deno.test("task registry in a file: written, read by another instance, last change wins", async () => {
  await using dir = await tempDir();
  await exercise(new FileTaskRegistry(dir.path), () => new FileTaskRegistry(dir.path));
  const info = await Deno.stat(join(dir.path, TASKS_FILE));
  assert.equal(info.mode! & 0o777, 0o600);
});

Deno.test("task registry in a file: a torn last line is skipped; the file is compacted", async () => {
  await using dir = await tempDir();
  const registry = new FileTaskRegistry(dir.path);
  await registry.put(record("t1"));
  // A crash in the middle of a write leaves a torn line at the end.
  await Deno.writeTextFile(join(dir.path, TASKS_FILE), '{"id":"t2","ser', { append: true });
  assert.deepEqual((await registry.list()).map((r) => r.id), ["t1"]);
  await registry.put(record("t3"));
  assert.deepEqual((await registry.list()).map((r) => r.id), ["t3", "t1"]);
  for (let i = 0; i < 200; i++) {
    await registry.put(
      record("t1", { statusMessage: `step ${i}`, updatedAt: new Date().toISOString() }),
    );
  }
  const lines = (await Deno.readTextFile(join(dir.path, TASKS_FILE))).trim().split("\n");
  assert.ok(lines.length < 100, `${lines.length} lines for 2 tasks`);
  assert.equal((await registry.list()).find((r) => r.id === "t1")?.statusMessage, "step 199");
});

Deno.test("task registry: bounded, the oldest settled and delivered records forgotten first", () => {
  const records = [
    record("t1", { state: "working" }),
    record("t2", { state: "completed", conversation: "c", deliveredAt: "x" }),
    record("t3", { state: "completed", conversation: "c" }),
    record("t4", { state: "failed" }),
    record("t5", { state: "working" }),
  ];
  assert.deepEqual(keptRecords(records, 3).map((r) => r.id), ["t5", "t3", "t1"]);
  assert.deepEqual(keptRecords(records, 2).map((r) => r.id), ["t5", "t1"]);
  assert.deepEqual(keptRecords(records, 1).map((r) => r.id), ["t5"]);
});

Deno.test("task registry in Redis: beside the conversations, read by another client", async () => {
  await using dir = await tempDir();
  await using redis = await RedisServer.start();
  const settings: MemorySettings = { backend: "auto", keyPrefix: "patchbay" };
  const open = () => openMemory(settings, createEnvironment(redis.env), { dataDir: dir.path });
  const first = await open();
  const second = await open();
  try {
    const registry = openTaskRegistry(first.store, { stateDir: join(dir.path, "state") });
    assert.match(registry.location, /^Redis at 127\.0\.0\.1:\d+ db 0$/);
    await exercise(
      registry,
      () => openTaskRegistry(second.store, { stateDir: join(dir.path, "state") }),
    );
    const fields = await redis.cli("HLEN", "patchbay:v1:tasks");
    assert.equal(fields.trim(), "3");
  } finally {
    await first.close();
    await second.close();
  }
});

Deno.test("task registry: a store that cannot take a record leaves it in the state folder", async () => {
  await using dir = await tempDir();
  const failing: TaskRegistry = {
    location: "Redis at nowhere",
    put: () => Promise.reject(new Error("Connection is closed.")),
    list: () => Promise.reject(new Error("Connection is closed.")),
    close: () => Promise.resolve(),
  };
  const store = { kind: "redis", tasks: failing } as unknown as Parameters<
    typeof openTaskRegistry
  >[0];
  const registry = openTaskRegistry(store, { stateDir: dir.path });
  await registry.put(record("t1"));
  assert.deepEqual((await registry.list()).map((r) => r.id), ["t1"]);
  assert.deepEqual((await new FileTaskRegistry(dir.path).list()).map((r) => r.id), ["t1"]);
  // Memory off: the state folder's file is the registry.
  assert.equal(
    openTaskRegistry(undefined, { stateDir: dir.path }).location,
    join(dir.path, TASKS_FILE),
  );
});
