/**
 * Tool calls made as MCP tasks, on the connection manager, against the hand-written task
 * server (`tests/fixtures/task_server.ts`) in both generations: 2025-11-25 (`tasks`
 * capability, per-tool `taskSupport`) and 2026-07-28 (the Tasks extension, through
 * ext-tasks' raw request path). What a server controls is bounded: the poll interval, the
 * status message, a task the server forgot; the call's wait is bounded by
 * `tool_call_timeout`, and Ctrl+C (the signal) cancels the task on the server.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import type {
  LiveTask,
  StartedTask,
  TaskEnd,
  TaskProgress,
  TaskStatusUpdate,
  TaskTracking,
} from "../../../lib/connections/tasks/task_types.ts";
import { taskStatusOn } from "../../../lib/connections/tasks/task_requests.ts";
import { CancelledError, TaskUnknownError, ToolTimeoutError } from "../../../lib/errors.ts";
import { Redactor } from "../../../lib/redact/redact.ts";
import { MAX_STATUS_MESSAGE_CHARS, MIN_POLL_INTERVAL_MS } from "../../../lib/tasks/bounds.ts";
import { HOSTILE_SECRET } from "../../fixtures/task_server.ts";
import { DENO } from "../../support/deps.ts";
import { firstText, startManager, stdioEntry } from "../../support/servers.ts";

const TASK_SERVER = fileURLToPath(new URL("../../fixtures/task_server.ts", import.meta.url));

function taskServer(name: string, flags: string[], extra: Record<string, unknown> = {}) {
  return stdioEntry(
    name,
    DENO,
    ["run", "--quiet", "--no-config", TASK_SERVER, ...flags],
    extra,
  );
}

/** A tracking that remembers what it was told. */
function recorder() {
  const started: StartedTask[] = [];
  const updates: TaskStatusUpdate[] = [];
  const ends: TaskEnd[] = [];
  const followed: LiveTask[] = [];
  const tracking: TaskTracking = {
    started: (task, update) => {
      started.push(task);
      updates.push(update);
      return Promise.resolve();
    },
    changed: (_task, update) => void updates.push(update),
    ended: (_task, end) => {
      ends.push(end);
      return Promise.resolve();
    },
    pending: (live, seconds) => {
      followed.push(live);
      return { content: [{ type: "text", text: `pending after ${seconds} s` }] };
    },
  };
  return { tracking, started, updates, ends, followed };
}

for (const era of ["legacy", "modern"] as const) {
  Deno.test(`tasks (${era}): a tool run as a task ends in an ordinary result`, async () => {
    await using started = await startManager({
      servers: [taskServer("tasks", [`--era=${era}`, "--duration-ms=600"])],
    });
    const { manager } = started;
    const seen = recorder();
    manager.setTaskTracking(seen.tracking);
    const progress: TaskProgress[] = [];
    const result = await manager.callTool("tasks__required", {}, {
      toolCallTimeoutSeconds: 30,
      onTask: (p) => progress.push(p),
      context: { conversation: "conv1", toolCallId: "call_1" },
    });
    assert.equal(firstText(result), "slow done (task)");
    assert.equal(seen.started.length, 1, "the task was recorded before the call waited");
    assert.equal(seen.started[0].generation, era === "legacy" ? "v1" : "v2");
    assert.deepEqual(seen.started[0].context, { conversation: "conv1", toolCallId: "call_1" });
    assert.equal(progress[0].status, "working");
    assert.equal(progress.at(-1)?.status, "completed");
    assert.equal(seen.ends.at(-1)?.status, "completed");
    // A tool the server answers at once is an ordinary call, recorded as no task.
    assert.equal(firstText(await manager.callTool("tasks__plain", {})), "plain done");
    assert.equal(seen.started.length, 1);
  });

  Deno.test(`tasks (${era}): the form a task asks is answered by the session's handler`, async () => {
    const asked: string[] = [];
    await using started = await startManager({
      servers: [taskServer("tasks", [`--era=${era}`])],
      handlers: {
        elicitation: (_server, params) => {
          asked.push(String(params.message));
          return Promise.resolve({ action: "accept", content: { region: "us-east" } });
        },
      },
    });
    started.manager.setTaskTracking(recorder().tracking);
    const result = await started.manager.callTool("tasks__ask", {}, { toolCallTimeoutSeconds: 30 });
    assert.deepEqual(asked, ["Which region?"]);
    assert.match(firstText(result)!, /answered: .*us-east/);
  });

  Deno.test(`tasks (${era}): a task the server forgot is reported, with cause and remedy`, async () => {
    await using started = await startManager({
      servers: [taskServer("tasks", [`--era=${era}`])],
    });
    started.manager.setTaskTracking(recorder().tracking);
    await assert.rejects(
      started.manager.callTool("tasks__forget", {}, { toolCallTimeoutSeconds: 30 }),
      (error: unknown) => {
        assert.ok(error instanceof TaskUnknownError, String(error));
        assert.match(error.message, /^Task task-\d+-\w+ is unknown to server 'tasks'$/);
        assert.match(error.reason, /Task not found/);
        assert.match(error.remedies.script, /patchbay tasks list --all/);
        assert.match(error.remedies.repl, /\/tasks all/);
        return true;
      },
    );
  });
}

Deno.test("tasks: a hostile server's poll interval, ttl and status message are bounded", async () => {
  const redactor = new Redactor();
  redactor.addSecret(HOSTILE_SECRET);
  const durationMs = 2000;
  await using started = await startManager({
    servers: [taskServer("tasks", [`--duration-ms=${durationMs}`])],
    redactor,
  });
  const seen = recorder();
  started.manager.setTaskTracking(seen.tracking);
  const progress: TaskProgress[] = [];
  const result = await started.manager.callTool("tasks__hostile", {}, {
    toolCallTimeoutSeconds: 30,
    onTask: (p) => progress.push(p),
  });
  // pollInterval 0 is held at MIN_POLL_INTERVAL_MS: over the task's life, no more polls
  // than that allows (and one at the end), rather than a busy loop.
  const polls = Number(/after (\d+) polls/.exec(firstText(result)!)![1]);
  assert.ok(polls >= 1, `${polls} polls`);
  assert.ok(polls <= durationMs / MIN_POLL_INTERVAL_MS + 3, `${polls} polls in ${durationMs} ms`);
  for (const update of [...seen.updates, ...progress]) {
    const message = update.statusMessage ?? "";
    assert.ok(message.length <= MAX_STATUS_MESSAGE_CHARS, `${message.length} characters`);
    // deno-lint-ignore no-control-regex
    assert.doesNotMatch(message, /[\u0000-\u001f\u007f]/, "controls are made visible");
    assert.ok(!message.includes(HOSTILE_SECRET), "the secret is masked");
  }
  assert.ok(progress.some((p) => p.statusMessage?.includes("[REDACTED]")));
  assert.ok(
    seen.updates.every((u) =>
      u.pollIntervalMs === undefined || u.pollIntervalMs >= MIN_POLL_INTERVAL_MS
    ),
  );
});

Deno.test("tasks: tool_call_timeout bounds the wait, not the task; the signal cancels it", async () => {
  await using started = await startManager({
    servers: [taskServer("tasks", ["--duration-ms=1500"])],
  });
  const { manager } = started;
  const seen = recorder();
  manager.setTaskTracking(seen.tracking);
  const pending = await manager.callTool("tasks__required", {}, { toolCallTimeoutSeconds: 0.3 });
  assert.equal(firstText(pending), "pending after 0.3 s");
  assert.equal(seen.followed.length, 1, "the tracking follows the task from here");
  const end = await seen.followed[0].end;
  assert.equal(end.status, "completed", "the task went on after the call stopped waiting");
  assert.equal(end.status === "completed" && firstText(end.result), "slow done (task)");

  const controller = new AbortController();
  const progress: TaskProgress[] = [];
  const call = manager.callTool("tasks__required", {}, {
    toolCallTimeoutSeconds: 30,
    signal: controller.signal,
    onTask: (p) => {
      progress.push(p);
      controller.abort();
    },
  });
  await assert.rejects(call, CancelledError);
  const cancelled = seen.started.at(-1)!;
  const status = await taskStatusOn(manager.taskConnection("tasks"), cancelled);
  assert.equal(status.status, "cancelled", "tasks/cancel reached the server");
  assert.equal(seen.ends.at(-1)?.status, "cancelled");
});

Deno.test("tasks: optional tools run as tasks as the entry's `tasks` says", async () => {
  const entries = [
    taskServer("auto", ["--duration-ms=800"]),
    taskServer("always", ["--duration-ms=300"], { tasks: "always" }),
    taskServer("never", ["--duration-ms=300"], { tasks: "never" }),
  ];
  await using started = await startManager({ servers: entries });
  const { manager } = started;
  manager.setTaskTracking(recorder().tracking);
  const call = (name: string, toolCallTimeoutSeconds = 30) =>
    manager.callTool(name, {}, { toolCallTimeoutSeconds }).then(firstText);
  assert.equal(await call("always__slow"), "slow done (task)");
  assert.equal(await call("never__slow"), "slow done (plain)");
  assert.equal(await call("never__required"), "slow done (task)", "required tools always are");
  // auto: plain until a call of the tool came close to tool_call_timeout (here: past it),
  // then a task.
  await assert.rejects(call("auto__slow", 0.3), ToolTimeoutError);
  assert.equal(await call("auto__slow"), "slow done (task)");
  assert.equal(await call("auto__plain"), "plain done");
});
