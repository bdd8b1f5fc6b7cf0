/**
 * MCP tasks through the real entry point (`deno task start`), with server-everything over
 * stdio and streamable HTTP: `call` runs its task tool as a task (statuses on stderr, the
 * result on stdout), a task still running when `tool_call_timeout` passes is left running
 * (exit 4) and fetched later with `patchbay tasks result` (a later process joins the
 * session it was started in), `tasks list|get|cancel` work on it, Ctrl+C cancels a task
 * `call` waits for, and a task the server no longer knows, or an id nobody recorded, is
 * reported with cause and remedy. patchbay also
 * serves task-backed forms (`trigger-elicitation-request-async`).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runPatchbay, sandbox, spawnStartTask, writeConfig } from "../support/cli.ts";
import { DENO, everythingEntry, NODE } from "../support/deps.ts";
import { startEverythingHttp } from "../support/servers.ts";

function config(servers: Record<string, unknown>, toolCallTimeout = 30) {
  return {
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: servers,
    AgentConfig: { tool_call_timeout: toolCallTimeout },
  };
}

const STDIO = { ev: { command: NODE, args: [everythingEntry(), "stdio"] } };

const TASK_SERVER = fileURLToPath(new URL("../fixtures/task_server.ts", import.meta.url));

/** The hand-written task server (`tests/fixtures/task_server.ts`) as an entry. */
function taskServer(flags: string[]) {
  return { command: DENO, args: ["run", "--quiet", "--no-config", TASK_SERVER, ...flags] };
}

async function listed(box: Parameters<typeof runPatchbay>[0]) {
  const list = await runPatchbay(box, ["tasks", "list", "--json", "--all"]);
  assert.equal(list.code, 0, list.stderr);
  return JSON.parse(list.stdout) as { registry: string; tasks: Record<string, unknown>[] };
}

Deno.test("tasks: call runs a task tool over stdio; its statuses on stderr, recorded", async () => {
  await using box = await sandbox();
  await writeConfig(box, config(STDIO));
  const result = await runPatchbay(box, ["call", "ev.simulate-research-query", '{"topic":"deno"}']);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /# Research Report: deno/);
  assert.match(result.stderr, /^task \S+ working \d+ s · Gathering sources\.\.\.$/m);
  assert.match(result.stderr, /^task \S+ completed \d+ s/m);
  const { registry, tasks } = await listed(box);
  assert.equal(registry, join(box.home, ".local/share/patchbay/tasks.jsonl"));
  assert.equal((await Deno.stat(registry)).mode! & 0o777, 0o600);
  assert.equal(tasks.length, 1);
  assert.equal(tasks[0].server, "ev");
  assert.equal(tasks[0].tool, "simulate-research-query");
  assert.equal(tasks[0].state, "completed");
  assert.equal(tasks[0].arguments, '{"topic":"deno"}');
  assert.equal(tasks[0].conversation, undefined);
});

Deno.test("tasks: past tool_call_timeout the task goes on; tasks result, get and cancel find it", async () => {
  await using box = await sandbox();
  await using server = await startEverythingHttp("streamableHttp");
  const http = { evh: { transport_type: "streamable_http", url: `${server.origin}/mcp` } };
  await writeConfig(box, config(http, 1));
  const pending = await runPatchbay(box, [
    "call",
    "evh.simulate-research-query",
    '{"topic":"later"}',
  ]);
  assert.equal(pending.code, 4, pending.stderr);
  const id = /^Pending: the task (\S+) \(evh\/simulate-research-query\) is still running after 1 s/
    .exec(pending.stdout)?.[1];
  assert.ok(id, pending.stdout);
  assert.match(pending.stdout, new RegExp(`patchbay tasks result ${id}`));
  // Another process, another session: the task is asked for in the session it started in.
  const result = await runPatchbay(box, ["tasks", "result", id.slice(0, 8)]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /# Research Report: later/);
  const got = await runPatchbay(box, ["tasks", "get", id, "--json"]);
  assert.equal(got.code, 0, got.stderr);
  assert.equal(JSON.parse(got.stdout).state, "completed");
  const done = await runPatchbay(box, ["tasks", "cancel", id]);
  assert.equal(done.code, 0, done.stderr);
  assert.match(done.stdout, /is already completed: nothing to cancel/);
});

Deno.test("tasks: Ctrl+C while call waits for a task cancels it on the server", async () => {
  await using box = await sandbox();
  const configPath = await writeConfig(box, config({ slow: taskServer(["--duration-ms=600000"]) }));
  const child = await spawnStartTask(box, configPath, "piped", ["call", "slow.required"]);
  const stderr = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!/^task \S+ working/m.test(seen)) {
    const { value, done } = await stderr.read();
    if (done) throw new Error(`call ended before its task ran: ${seen}`);
    seen += value;
  }
  child.kill("SIGINT");
  const rest = async () => {
    for (;;) {
      const { value, done } = await stderr.read();
      if (done) return;
      seen += value;
    }
  };
  const [status] = await Promise.all([child.status, rest(), child.stdout.cancel()]);
  assert.equal(status.code, 130, seen);
  const [task] = (await listed(box)).tasks;
  assert.equal(task.state, "cancelled", "tasks/cancel reached the server and was recorded");
});

Deno.test("tasks: a task its server forgot, and an id nobody recorded, say why and what to do", async () => {
  await using box = await sandbox();
  await writeConfig(box, config(STDIO, 1));
  // A stdio server ends with the command that started it, and its tasks with it.
  const pending = await runPatchbay(box, ["call", "ev.simulate-research-query", '{"topic":"x"}']);
  assert.equal(pending.code, 4, pending.stderr);
  const id = /^Pending: the task (\S+)/.exec(pending.stdout)![1];
  const gone = await runPatchbay(box, ["tasks", "get", id]);
  assert.equal(gone.code, 1);
  assert.match(gone.stderr, new RegExp(`error: Task ${id} is unknown to server 'ev'`));
  assert.match(
    gone.stderr,
    /cause: {2}the server answered: .*a server forgets a task once its ttl/,
  );
  assert.match(gone.stderr, /remedy: run the tool again; `patchbay tasks list --all` lists/);
  assert.equal((await listed(box)).tasks[0].state, "unknown", "recorded as unknown, not dropped");

  const nobody = await runPatchbay(box, ["tasks", "result", "no-such-task"]);
  assert.equal(nobody.code, 1);
  assert.match(nobody.stderr, /error: Task 'no-such-task' not found/);
  assert.match(nobody.stderr, /remedy: `patchbay tasks list --all` lists the recorded tasks/);
});

Deno.test("tasks: patchbay serves a task-backed form (trigger-elicitation-request-async)", async () => {
  await using box = await sandbox();
  await writeConfig(box, config(STDIO));
  const result = await runPatchbay(box, [
    "call",
    "--accept-form-defaults",
    "ev.trigger-elicitation-request-async",
  ]);
  assert.equal(result.code, 0, result.stderr);
  // The server got a task from patchbay, polled it, and read its outcome.
  assert.match(result.stdout, /Task created: \S+/);
  assert.match(result.stdout, /Poll 1: completed/);
  assert.match(result.stdout, /"action": "decline"/);
  assert.match(result.stderr, /declined by --accept-form-defaults/);
});

Deno.test("tasks: hostile task ids — too long or with escapes refused and said; a path-like one is only text", async () => {
  await using box = await sandbox();
  await writeConfig(
    box,
    config({
      long: taskServer(["--task-ids=long", "--duration-ms=200"]),
      ctl: taskServer(["--task-ids=control", "--duration-ms=200"]),
      path: taskServer(["--task-ids=path", "--duration-ms=200"]),
    }),
  );
  for (const server of ["long", "ctl"]) {
    const refused = await runPatchbay(box, ["call", `${server}.required`, "{}"]);
    assert.notEqual(refused.code, 0, refused.stdout);
    assert.match(refused.stderr, /answered with a task id patchbay cannot use/);
    assert.match(refused.stderr, /remedy: the server breaks MCP Tasks: report it to its authors/);
    assert.ok(!refused.stderr.includes("\u001b") && !refused.stderr.includes("FAKE LINE"));
    assert.ok(!refused.stderr.includes("x".repeat(300)), "the id is not echoed whole");
  }
  const path = await runPatchbay(box, ["call", "path.required", "{}"]);
  assert.equal(path.code, 0, path.stderr);
  assert.match(path.stdout, /slow done \(task\)/);
  const { tasks } = await listed(box);
  assert.deepEqual(tasks.map((t) => t.server), ["path"], "the refused ones are not recorded");
  assert.match(String(tasks[0].id), /^\.\.\/\.\.\/\.\.\/etc\/passwd#task-/);
});
