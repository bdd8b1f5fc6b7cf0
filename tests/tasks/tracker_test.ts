/**
 * The session's task tracker (lib/tasks/tracker.ts) over a real connection manager and
 * the hand-written task server: a task is recorded before its call waits, a task still
 * running past `tool_call_timeout` is followed to its end and told to the listeners,
 * a recorded task an earlier process left is followed again, and one past the time it is
 * followed, or whose server left the configuration, ends `unknown` with why: told, never
 * dropped.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import type { TaskRecord } from "../../lib/memory/task_registry.ts";
import { FileTaskRegistry } from "../../lib/memory/task_registry_file.ts";
import { Redactor } from "../../lib/redact/redact.ts";
import { TaskTracker } from "../../lib/tasks/tracker.ts";
import { DENO } from "../support/deps.ts";
import { firstText, RecordingLog, startManager, stdioEntry } from "../support/servers.ts";
import { tempDir } from "../support/temp_dir.ts";

const TASK_SERVER = fileURLToPath(new URL("../fixtures/task_server.ts", import.meta.url));

const server = (flags: string[]) =>
  stdioEntry("tasks", DENO, ["run", "--quiet", "--no-config", TASK_SERVER, ...flags]);

function makeTracker(
  manager: Awaited<ReturnType<typeof startManager>>["manager"],
  registry: FileTaskRegistry,
  follows = true,
) {
  const tasks = new TaskTracker({
    registry,
    manager,
    redactor: new Redactor(),
    log: new RecordingLog(),
    surface: "repl",
    follows,
  });
  manager.setTaskTracking(tasks);
  const ended: TaskRecord[] = [];
  tasks.onEnded((record) => ended.push(record));
  return { tasks, ended };
}

Deno.test("tracker: recorded before the wait, followed past tool_call_timeout, told at its end", async () => {
  await using dir = await tempDir();
  await using started = await startManager({ servers: [server(["--duration-ms=1200"])] });
  const registry = new FileTaskRegistry(dir.path);
  const { tasks, ended } = makeTracker(started.manager, registry);
  const result = await started.manager.callTool("tasks__required", { topic: "x" }, {
    toolCallTimeoutSeconds: 0.2,
    context: { conversation: "c0nversation", toolCallId: "call_7" },
  });
  assert.match(firstText(result)!, /^Pending: the task (\S+) \(tasks\/required\) is still running/);
  const [recorded] = await registry.list();
  assert.equal(recorded.state, "working");
  assert.equal(recorded.conversation, "c0nversation");
  assert.equal(recorded.toolCallId, "call_7");
  assert.equal(recorded.arguments, '{"topic":"x"}');
  await waitFor(() => ended.length === 1);
  assert.equal(ended[0].state, "completed");
  assert.equal(ended[0].result, "slow done (task)");
  assert.equal((await registry.list())[0].state, "completed");
  await tasks.close();
});

Deno.test("tracker: tasks left by an earlier process are followed again, or said to be gone", async () => {
  await using dir = await tempDir();
  await using started = await startManager({ servers: [server(["--duration-ms=600"])] });
  const registry = new FileTaskRegistry(dir.path);
  // A task of this server's process, recorded and left as `patchbay call` leaves it.
  const earlier = makeTracker(started.manager, registry, false);
  const pending = await started.manager.callTool("tasks__required", {}, {
    toolCallTimeoutSeconds: 0.1,
  });
  const id = /the task (\S+)/.exec(firstText(pending)!)![1];
  await earlier.tasks.close();
  const old = (await registry.list())[0];
  const base = { ...old, state: "working" as const, result: undefined };
  await registry.put({ ...base, id: "gone-long-ago", followUntil: "2026-01-01T00:00:00.000Z" });
  await registry.put({ ...base, id: "elsewhere", server: "removed" });

  const { tasks, ended } = makeTracker(started.manager, registry);
  await tasks.followRecorded(() => true);
  await waitFor(() => ended.length === 3);
  const byId = Object.fromEntries(ended.map((r) => [r.id, r]));
  assert.equal(byId[id].state, "completed");
  assert.equal(byId["gone-long-ago"].state, "unknown");
  assert.match(byId["gone-long-ago"].error!, /^patchbay stopped following it \(2026-01-01/);
  assert.equal(byId["elsewhere"].state, "unknown");
  assert.match(byId["elsewhere"].error!, /no server named 'removed' is configured any more/);
  await tasks.close();
});

async function waitFor(check: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
