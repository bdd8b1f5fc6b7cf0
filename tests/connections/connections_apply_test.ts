/**
 * `ConnectionManager.apply`, what `/refresh` does with a configuration read again, against
 * real fixture servers: a removed server's process ends, a changed one is restarted, a new
 * one starts, and the one left alone keeps its process and its session.
 *
 * @module
 */

import assert from "node:assert/strict";
import { eventually, fixtureEntry, processesWith, startManager } from "../support/servers.ts";

type Text = { text: string };
const text = (result: { content?: unknown }) => ((result.content ?? []) as Text[])[0]?.text;

const tag = () => `patchbay-test-${crypto.randomUUID()}`;

Deno.test("apply: removed servers end, changed ones restart, new ones start, the rest stay", async () => {
  const tags = { kept: tag(), gone: tag(), changed: tag(), changedAgain: tag(), added: tag() };
  const kept = fixtureEntry("kept", [`--tag=${tags.kept}`]);
  await using session = await startManager({
    servers: [
      kept,
      fixtureEntry("gone", [`--tag=${tags.gone}`]),
      fixtureEntry("changed", [`--tag=${tags.changed}`]),
    ],
  });
  const { manager } = session;
  const keptPids = processesWith(tags.kept);
  assert.equal(keptPids.length > 0, true);
  const keptSession = manager.status("kept")?.since.getTime();

  const changes = await manager.apply([
    fixtureEntry("added", [`--tag=${tags.added}`]),
    kept,
    fixtureEntry("changed", [`--tag=${tags.changedAgain}`]),
  ]);
  assert.deepEqual(changes, { added: ["added"], removed: ["gone"], changed: ["changed"] });
  // The configuration's order, the removed one gone from every list.
  assert.deepEqual(manager.states().map((s) => [s.name, s.state]), [
    ["added", "connected"],
    ["kept", "connected"],
    ["changed", "connected"],
  ]);
  assert.equal(text(await manager.callTool("added__echo", { message: "new" })), "new");
  assert.equal(text(await manager.callTool("kept__echo", { message: "same" })), "same");
  await assert.rejects(manager.callTool("gone__echo", { message: "x" }), /gone__echo/);
  assert.deepEqual(processesWith(tags.kept), keptPids, "left alone: the same process");
  assert.equal(manager.status("kept")?.since.getTime(), keptSession);
  await eventually(() => processesWith(tags.gone).length === 0, "the removed server ends");
  await eventually(
    () => processesWith(tags.changed).length === 0,
    "the changed server's old process ends",
  );
  assert.ok(
    processesWith(tags.changedAgain).length > 0,
    "the changed server runs as now configured",
  );
});

Deno.test("apply racing close(): no server it starts outlives the manager", async () => {
  // close() right after apply() (/refresh, Ctrl+C, /exit), then close() while it connects.
  for (const closeWhen of ["at once", "while connecting"] as const) {
    const tags = { kept: tag(), added: tag() };
    const session = await startManager({
      servers: [fixtureEntry("kept", [`--tag=${tags.kept}`])],
    });
    const { manager } = session;
    const connecting = new Promise<void>((resolve) =>
      manager.on((e) => {
        if (e.type === "state" && e.server === "added" && e.state === "connecting") resolve();
      })
    );
    const applying = manager.apply([
      fixtureEntry("kept", [`--tag=${tags.kept}`]),
      fixtureEntry("added", [`--tag=${tags.added}`]),
    ]);
    if (closeWhen === "while connecting") await connecting;
    await manager.close();
    await applying;
    await eventually(
      () => processesWith(tags.kept).length === 0 && processesWith(tags.added).length === 0,
      `closed ${closeWhen}: every server process ends`,
    );
    assert.notEqual(manager.status("added")?.state, "connected", closeWhen);
  }
});

Deno.test("apply twice in a row: the second waits for the first and leaves its set", async () => {
  const tags = { kept: tag(), first: tag(), second: tag() };
  const kept = fixtureEntry("kept", [`--tag=${tags.kept}`]);
  await using session = await startManager({ servers: [kept] });
  const { manager } = session;
  const first = manager.apply([kept, fixtureEntry("first", [`--tag=${tags.first}`])]);
  const second = manager.apply([kept, fixtureEntry("second", [`--tag=${tags.second}`])]);
  assert.deepEqual(await first, { added: ["first"], removed: [], changed: [] });
  assert.deepEqual(await second, { added: ["second"], removed: ["first"], changed: [] });
  assert.deepEqual(manager.states().map((s) => [s.name, s.state]), [
    ["kept", "connected"],
    ["second", "connected"],
  ]);
  await eventually(
    () => processesWith(tags.first).length === 0,
    "the first call's server, dropped by the second, ends",
  );
  assert.ok(processesWith(tags.second).length > 0);
  assert.equal(processesWith(tags.kept).length, 1);
});
