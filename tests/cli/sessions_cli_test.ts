import assert from "node:assert/strict";
import { join } from "node:path";
import type { MemorySettings } from "../../lib/config/types.ts";
import { createEnvironment } from "../../lib/env.ts";
import { openMemory } from "../../lib/memory/mod.ts";
import type { StoredMessage } from "../../lib/memory/types.ts";
// The configuration is passed with --config: `deno task` runs in the project folder, so a
// servers_config.json in the sandbox's working directory would not be found.
import { configWith, runPatchbay, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { exchange } from "../support/conversation.ts";
import { assumingClosed } from "../support/servers.ts";
import { freePort, RedisServer } from "../support/redis.ts";

const SETTINGS: MemorySettings = { backend: "auto", keyPrefix: "patchbay" };

/** Stores conversations the way the REPL would, where `patchbay` in the sandbox looks. */
async function store(
  box: Sandbox,
  env: Record<string, string>,
  conversations: StoredMessage[][],
): Promise<string[]> {
  const memory = await openMemory(SETTINGS, createEnvironment(env), {
    dataDir: join(box.home, ".local", "share", "patchbay"),
    strict: true,
  });
  const ids: string[] = [];
  for (const messages of conversations) {
    const session = memory.newSession();
    for (const message of messages) await session.append(message);
    ids.push(session.id);
  }
  await memory.close();
  return ids;
}

Deno.test("patchbay sessions: list, --limit, --json, show and delete against the embedded store", async () => {
  await using box = await sandbox();
  const config = await writeConfig(box, configWith());
  const ids = await store(box, {}, [exchange("First topic"), exchange("Second topic")]);
  const sessionsDir = join(box.home, ".local", "share", "patchbay", "sessions");

  const list = await runPatchbay(box, ["--config", config, "sessions"]);
  assert.equal(list.code, 0, list.stderr);
  const lines = list.stdout.split("\n");
  assert.equal(lines[0], `Sessions in ${sessionsDir}`);
  assert.match(lines[2], /^ID +LAST MESSAGE +STARTED +TURNS +MODEL +TITLE$/);
  assert.match(
    lines[3],
    new RegExp(`^${ids[1]}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d .* 1  gpt-4o-mini  Second topic$`),
  );
  assert.match(lines[4], new RegExp(`^${ids[0]} .*First topic$`));

  const limited = await runPatchbay(box, ["--config", config, "sessions", "--limit", "1"]);
  assert.match(limited.stdout, /\(the 1 most recent; --limit N or --all for more\)/);
  assert.ok(limited.stdout.includes(ids[1]) && !limited.stdout.includes(ids[0]));

  const json = await runPatchbay(box, ["--config", config, "sessions", "--json"]);
  assert.equal(json.code, 0, json.stderr);
  const parsed = JSON.parse(json.stdout);
  assert.deepEqual(parsed.store, { kind: "file", location: sessionsDir, enabled: true });
  assert.deepEqual(parsed.sessions.map((s: { id: string }) => s.id), [ids[1], ids[0]]);
  assert.equal(parsed.sessions[0].turns, 1);
  assert.equal(parsed.sessions[0].messages, 4);

  const show = await runPatchbay(box, ["--config", config, "sessions", "show", ids[0].slice(0, 6)]);
  assert.equal(show.code, 0, show.stderr);
  assert.match(show.stdout, new RegExp(`^Session ${ids[0]}: 1 turn, 4 messages, gpt-4o-mini`));
  assert.match(show.stdout, /\n {2}-> fs__read_file \{"path":"\/tmp\/notes\.txt"\}\n/);
  assert.match(show.stdout, /tool fs\/read_file\n {2}line one\n {2}line two/);
  assert.match(show.stdout, /Continue it with: patchbay --resume /);

  const showJson = await runPatchbay(box, [
    "--config",
    config,
    "sessions",
    "show",
    ids[0],
    "--json",
  ]);
  const shown = JSON.parse(showJson.stdout);
  assert.equal(shown.session.id, ids[0]);
  assert.equal(shown.messages[1].toolCalls[0].name, "fs__read_file");

  const deleted = await runPatchbay(box, ["--config", config, "sessions", "delete", ids[0]]);
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.match(deleted.stdout, new RegExp(`^Deleted session ${ids[0]} \\(1 turn, last message `));
  await assert.rejects(() => Deno.stat(join(sessionsDir, `${ids[0]}.jsonl`)));

  const missing = await runPatchbay(box, ["--config", config, "sessions", "show", ids[0]]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, new RegExp(`error: Session '${ids[0]}' not found\n`));
  assert.match(missing.stderr, /remedy: `patchbay sessions` lists the stored sessions/);
});

Deno.test("patchbay sessions with nothing stored, and --resume", async () => {
  await using box = await sandbox();
  const config = await writeConfig(box, configWith());
  const empty = await runPatchbay(box, ["--config", config, "sessions"]);
  assert.equal(empty.code, 0, empty.stderr);
  assert.match(empty.stdout, /^No stored sessions in .*\/\.local\/share\/patchbay\/sessions\.\n$/);
  const nothing = await runPatchbay(box, ["--config", config, "--resume"]);
  assert.equal(nothing.code, 1);
  assert.match(nothing.stderr, /error: No conversation to resume/);

  const [id] = await store(box, {}, [exchange("Resume me")]);
  const resumed = await runPatchbay(box, ["--config", config, "--resume"]);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.match(resumed.stderr, new RegExp(`Resuming session ${id} \\(4 messages\\)`));
  const byId = await runPatchbay(box, ["--config", config, "--resume", id.slice(0, 4)]);
  assert.match(byId.stderr, new RegExp(`Resuming session ${id} `));
  const typo = await runPatchbay(box, ["--config", config, "sessions", "lst"]);
  assert.equal(typo.code, 2);
  assert.match(typo.stderr, /unknown command 'lst' \(did you mean 'list'\?\)/);
});

Deno.test("patchbay sessions against Redis, and against a Redis that is not running", async () => {
  await using box = await sandbox();
  const config = await writeConfig(box, configWith());
  await using redis = await RedisServer.start();
  const ids = await store(box, redis.env, [exchange("In Redis")]);

  const json = await runPatchbay(box, ["--config", config, "sessions", "--json"], {
    env: redis.env,
  });
  assert.equal(json.code, 0, json.stderr);
  const parsed = JSON.parse(json.stdout);
  assert.deepEqual(parsed.store, {
    kind: "redis",
    location: `Redis at 127.0.0.1:${redis.port} db 0`,
    enabled: true,
  });
  assert.deepEqual(parsed.sessions.map((s: { id: string }) => s.id), ids);
  const text = await runPatchbay(box, ["--config", config, "sessions"], { env: redis.env });
  assert.match(
    text.stdout,
    new RegExp(`^Sessions in Redis at 127\\.0\\.0\\.1:${redis.port} db 0\n`),
  );

  const port = freePort();
  await assumingClosed(port, async () => {
    const down = { REDIS_HOST: "127.0.0.1", REDIS_PORT: String(port) };
    const failed = await runPatchbay(box, ["--config", config, "sessions"], { env: down });
    assert.equal(failed.code, 1);
    assert.equal(
      failed.stderr,
      [
        `error: Could not connect to Redis at 127.0.0.1:${port} db 0: connection refused`,
        `  cause:  nothing is listening at 127.0.0.1:${port}: the store is not running, or ` +
        "REDIS_HOST/REDIS_PORT point at the wrong host or port",
        "  remedy: start the store, fix the REDIS_* variables (host, port, db, password), or turn " +
        'persistence off with "Memory": {"backend": "off"}',
        "",
      ].join("\n"),
    );
    const failedJson = await runPatchbay(box, ["--config", config, "sessions", "--json"], {
      env: down,
    });
    assert.equal(failedJson.code, 1);
    const error = JSON.parse(failedJson.stdout);
    assert.equal(error.type, "error");
    assert.equal(error.error.code, "store_unreachable");
  });
});
