/**
 * Lists kept across runs (lib/connections/list_cache.ts, kept_lists.ts): what is kept and
 * for how long (the 2026-07-28 `ttlMs` and `cacheScope`), for whom (the entry's identity),
 * in what file; and, with a real stdio server whose lists carry the hints
 * (tests/fixtures/cacheable_server.ts), a second run offering the kept tools before the
 * server answers, a call waiting for it, the live lists replacing kept ones that differ, a
 * failed server taking its kept tools away, and `patchbay tools` / `call` through
 * `deno task start`.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import type { ServerConfig, StdioServerConfig } from "../../lib/config/types.ts";
import { ListCache, MAX_LIST_CACHE_BYTES } from "../../lib/connections/list_cache.ts";
import type { Lists } from "../../lib/connections/session/live_session.ts";
import { ToolExecutionError } from "../../lib/errors.ts";
import { delay } from "../../lib/async/delay.ts";
import { bounded } from "../support/bounded.ts";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { DENO } from "../support/deps.ts";
import { rejection } from "../support/errors.ts";
import { startManager, stdioEntry } from "../support/servers.ts";
import { tempDir } from "../support/temp_dir.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/cacheable_server.ts", import.meta.url));

/** The cacheable fixture as a stdio entry; its delay read from `delayFile` at each start. */
function cacheableEntry(name: string, delayFile: string, flags: string[] = []): StdioServerConfig {
  return stdioEntry(name, DENO, [
    "run",
    "--quiet",
    "--no-config",
    `--allow-read=${delayFile}`,
    FIXTURE,
    `--delay-file=${delayFile}`,
    ...flags,
  ]);
}

const LISTS: Lists = {
  tools: [{ name: "t", inputSchema: { type: "object" } }],
  prompts: [],
  resources: [],
  templates: [],
};

Deno.test("list cache: kept for ttlMs at most, not at all without one; private lists of OAuth servers not kept; 0600", async () => {
  await using dir = await tempDir();
  let now = 1_000_000;
  const cache = new ListCache({ dir: dir.path, now: () => now });
  const entry = stdioEntry("s", "srv", ["--a"]);
  await cache.save(entry, LISTS, {
    tools: { ttlMs: 60_000, cacheScope: "public", receivedAt: now },
  });
  assert.deepEqual(cache.load(entry)?.lists.tools, LISTS.tools);
  assert.equal((await Deno.stat(cache.fileOf(entry))).mode! & 0o777, 0o600);
  now += 60_000;
  assert.equal(cache.load(entry), undefined, "stale at receivedAt + ttlMs");
  // No ttlMs, or 0: immediately stale, so the file is removed.
  await cache.save(entry, LISTS, { tools: { receivedAt: now } });
  await assert.rejects(Deno.stat(cache.fileOf(entry)), Deno.errors.NotFound);
  // A server-given TTL beyond a day counts as a day.
  await cache.save(entry, LISTS, { tools: { ttlMs: 1e12, receivedAt: now } });
  now += 86_400_000;
  assert.equal(cache.load(entry), undefined);
  // Another entry under the same name (an argument changed) finds nothing.
  now -= 86_400_000;
  assert.ok(cache.load(entry));
  assert.equal(cache.load(stdioEntry("s", "srv", ["--b"])), undefined);
  // Private lists of a server whose authorization context the entry does not pin (OAuth).
  const oauth: ServerConfig = {
    name: "o",
    transport: "streamable_http",
    url: "https://mcp.example.com/mcp",
    headers: {},
    auth: { method: "oauth" },
    timeoutSeconds: 30,
    sseReadTimeoutSeconds: 300,
    trusted: false,
    sampling: "ask",
    disabled: false,
    transportInferred: false,
  };
  await cache.save(oauth, LISTS, {
    tools: { ttlMs: 60_000, cacheScope: "private", receivedAt: now },
  });
  assert.equal(cache.load(oauth), undefined);
  await cache.save(oauth, LISTS, {
    tools: { ttlMs: 60_000, cacheScope: "public", receivedAt: now },
  });
  assert.ok(cache.load(oauth), "public lists of the same server are kept");
  // Too large to keep: nothing written.
  const huge = { ...LISTS, tools: [{ name: "t", description: "x".repeat(MAX_LIST_CACHE_BYTES) }] };
  await cache.save(entry, huge as Lists, { tools: { ttlMs: 60_000, receivedAt: now } });
  assert.equal(cache.load(entry), undefined);
});

Deno.test("kept lists: a second run offers the kept tools before the server answers; a call waits for it", async () => {
  await using dir = await tempDir();
  const delayFile = join(dir.path, "delay");
  const cache = () => new ListCache({ dir: join(dir.path, "lists") });
  const entry = cacheableEntry("slow", delayFile);
  {
    await using first = await startManager({ servers: [entry], listCache: cache() });
    assert.equal(first.states[0].state, "connected");
  }
  await Deno.writeTextFile(delayFile, "1500");
  await using second = await startManager({ servers: [entry], listCache: cache() });
  // start() did not wait for the server: its kept tools are offered meanwhile.
  assert.equal(second.states[0].state, "connecting");
  assert.equal(second.states[0].listsFromCache, true);
  assert.deepEqual(second.manager.tools().map((t) => t.name), ["slow__echo"]);
  assert.deepEqual(second.manager.prompts().map((p) => p.name), ["greet"]);
  assert.deepEqual(second.manager.pending(), [], "nothing to wait for before a message goes");
  const result = await second.manager.callTool("slow__echo", { text: "waited" });
  assert.deepEqual(result.content, [{ type: "text", text: "waited" }]);
  assert.equal(second.manager.status("slow")?.state, "connected");
  assert.equal(second.manager.status("slow")?.listsFromCache, undefined);
  assert.ok(!second.events.some((e) => e.type === "list_changed"), "the lists were the same");
});

Deno.test("kept lists: live lists that differ replace them, and a call approved on the kept definition is not run", async () => {
  await using dir = await tempDir();
  const delayFile = join(dir.path, "delay");
  const listsDir = join(dir.path, "lists");
  const entry = cacheableEntry("srv", delayFile);
  {
    await using _ = await startManager({
      servers: [entry],
      listCache: new ListCache({ dir: listsDir }),
    });
  }
  // The same entry, its server now describing its tool otherwise: edit the kept file's
  // description instead, as an older run of the server would have left it.
  const cache = new ListCache({ dir: listsDir });
  const file = cache.fileOf(entry);
  await Deno.writeTextFile(
    file,
    (await Deno.readTextFile(file)).replace("Echoes its text", "Old words"),
  );
  await Deno.writeTextFile(delayFile, "800");
  await using run = await startManager({ servers: [entry], listCache: cache });
  assert.equal(run.manager.tools()[0].description, "Old words");
  const error = await rejection(
    () => run.manager.callTool("srv__echo", { text: "x" }),
    ToolExecutionError,
  );
  assert.match(error.reason, /the tool changed when 'srv' connected .* it was not run/);
  assert.equal(run.manager.tools()[0].description, "Echoes its text", "the live list now");
  assert.ok(run.events.some((e) => e.type === "list_changed" && e.list === "tools"));
  await run.manager.close();
  assert.match(await Deno.readTextFile(file), /Echoes its text/, "the file holds the live list");
});

Deno.test("kept lists: list_changed drops them at once; the re-listed tools are kept for the next run", async () => {
  await using dir = await tempDir();
  const holdFile = join(dir.path, "hold");
  const cache = new ListCache({ dir: join(dir.path, "lists") });
  const entry = stdioEntry("chg", DENO, [
    "run",
    "--quiet",
    "--no-config",
    `--allow-read=${dir.path}`,
    FIXTURE,
    "--change-on-call",
    `--hold-file=${holdFile}`,
  ]);
  await using run = await startManager({ servers: [entry], listCache: cache });
  await cache.settled();
  assert.equal(cache.load(entry)?.lists.tools[0].description, "Echoes its text");
  const file = cache.fileOf(entry);
  // The call makes the server change its tool and say so; its re-listing is held.
  await run.manager.callTool("chg__echo", { text: "x" });
  await bounded(
    (async () => {
      while (await Deno.stat(file).then(() => true, () => false)) await delay(20);
    })(),
    "the kept file removed on list_changed",
  );
  assert.equal(cache.load(entry), undefined, "nothing kept while the re-listing runs");
  await Deno.writeTextFile(holdFile, "");
  await bounded(
    (async () => {
      while (run.manager.tools()[0]?.description !== "Changed") await delay(20);
    })(),
    "the re-listed tools adopted",
  );
  await cache.settled();
  assert.equal(cache.load(entry)?.lists.tools[0].description, "Changed");
});

Deno.test("kept lists: a server that fails takes its kept tools away", async () => {
  await using dir = await tempDir();
  const delayFile = join(dir.path, "delay");
  const listsDir = join(dir.path, "lists");
  const entry = cacheableEntry("f", delayFile);
  {
    await using _ = await startManager({
      servers: [entry],
      listCache: new ListCache({ dir: listsDir }),
    });
  }
  // The same entry; its server now fails at start.
  await Deno.writeTextFile(delayFile, "fail");
  await using run = await startManager({
    servers: [entry],
    listCache: new ListCache({ dir: listsDir }),
  });
  const error = await run.manager.callTool("f__echo", { text: "x" }).then(
    () => undefined,
    (e) => e,
  );
  assert.ok(error, "the call failed");
  assert.equal(run.manager.tools().length, 0);
  assert.notEqual(run.manager.status("f")?.state, "connected");
});

Deno.test("patchbay tools --json lists the kept tools without waiting for a slow server; call waits for it", async () => {
  await using box = await sandbox();
  const delayFile = join(box.home, "delay");
  const entry = {
    command: DENO,
    args: [
      "run",
      "--quiet",
      "--no-config",
      `--allow-read=${delayFile}`,
      FIXTURE,
      `--delay-file=${delayFile}`,
    ],
  };
  await writeConfig(box, { LLM: { provider: "openai", model: "m" }, mcpServers: { slow: entry } });
  const first = await runPatchbay(box, ["tools", "--json"]);
  assert.equal(first.code, 0, first.stderr);
  // An hour: the listing must not wait for it.
  await Deno.writeTextFile(delayFile, String(3_600_000));
  const second = await bounded(
    runPatchbay(box, ["tools", "--json"]),
    "tools with kept lists",
  );
  assert.equal(second.code, 0, second.stderr);
  const listed = JSON.parse(second.stdout) as { tools: { tool: string }[]; servers: unknown[] };
  assert.deepEqual(listed.tools.map((t) => t.tool), ["echo"]);
  await Deno.writeTextFile(delayFile, "1000");
  const call = await runPatchbay(box, ["call", "slow.echo", '{"text":"after the wait"}']);
  assert.equal(call.code, 0, call.stderr);
  assert.match(call.stdout, /after the wait/);
});
