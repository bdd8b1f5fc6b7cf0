/**
 * A task outlives the client that started it (docs/tasks.md), with server-everything over
 * streamable HTTP and the scripted model, through the real entry point:
 *
 * - `kill -9` of the client while a turn waits for `simulate-research-query`: the task was
 *   recorded before the call waited (the embedded store, and Redis), the next `run
 *   --resume` follows it in the session it was started in, and its result reaches the
 *   conversation it belongs to, for the model to read and in the stored history;
 * - a task still running when `tool_call_timeout` passes: the model reads that it is
 *   pending, with its id; the result arrives with the next `--resume`;
 * - a task-backed sampling request (`trigger-sampling-request-async`) is answered by the
 *   model through patchbay's task receiver.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runPatchbay, type Sandbox, sandbox, spawnStartTask, writeConfig } from "../support/cli.ts";
import { RedisServer } from "../support/redis.ts";
import { type ScriptedLlm, startScriptedLlm } from "../support/scripted_llm.ts";
import { descendants, startEverythingHttp } from "../support/servers.ts";
import { bounded } from "../support/bounded.ts";
import { LEASE_TTL_MS } from "../../lib/memory/lease.ts";

function config(llm: ScriptedLlm, url: string, toolCallTimeout: number) {
  return {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: { ev: { transport_type: "streamable_http", url } },
    AgentConfig: { tool_call_timeout: toolCallTimeout },
  };
}

const RESEARCH = { name: "ev__simulate-research-query", arguments: { topic: "deno" } };

/** The text of every message of the model's last request. */
function lastRequest(llm: ScriptedLlm): { role: string; content: string }[] {
  return (llm.requests.at(-1)!.body.messages as { role: string; content: unknown }[])
    .map((m) => ({ role: m.role, content: String(m.content ?? "") }));
}

/** The note that brought the task's result into the conversation, as the model read it. */
function deliveredNote(llm: ScriptedLlm): string | undefined {
  return lastRequest(llm).find((m) =>
    m.role === "user" && m.content.startsWith("[patchbay, not the user: the task")
  )?.content;
}

/** The stored conversation's messages (`patchbay sessions show --json`). */
async function stored(box: Sandbox, env: Record<string, string> = {}) {
  const shown = await runPatchbay(box, ["sessions", "show", "--json", await latest(box, env)], {
    env,
  });
  assert.equal(shown.code, 0, shown.stderr);
  return JSON.parse(shown.stdout).messages as Record<string, unknown>[];
}

async function latest(box: Sandbox, env: Record<string, string>): Promise<string> {
  const list = await runPatchbay(box, ["sessions", "--json", "--all"], { env });
  assert.equal(list.code, 0, list.stderr);
  return JSON.parse(list.stdout).sessions[0].id;
}

for (const store of ["file", "redis"] as const) {
  Deno.test(`tasks: kill -9 mid-task, the result reaches the conversation on --resume (${store})`, async () => {
    await using redis = store === "redis" ? await RedisServer.start() : undefined;
    const env = redis?.env ?? {};
    await using box = await sandbox({ LLM_API_KEY: "test-key", ...env });
    await using server = await startEverythingHttp("streamableHttp");
    await using llm = await startScriptedLlm({
      replies: [{ toolCalls: [RESEARCH] }, { text: "Here is what the research found." }],
    });
    const path = await writeConfig(box, config(llm, `${server.origin}/mcp`, 60));
    const child = await spawnStartTask(box, path, "null", ["run", "--yes", "research deno"]);
    // Killed once the task is recorded, while the call waits for it.
    const registry = join(box.home, ".local/share/patchbay/tasks.jsonl");
    await bounded(
      (async () => {
        for (;;) {
          const recorded = store === "file"
            ? await Deno.readTextFile(registry).catch(() => "")
            : await redis!.cli("HLEN", "patchbay:v1:tasks");
          const done = store === "file"
            ? recorded.includes('"state":"working"')
            : recorded.trim() !== "0";
          if (done) return;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })(),
      `the task recorded in ${store}`,
    );
    const client = descendants(child.pid).find((pid) =>
      Deno.readTextFileSync(`/proc/${pid}/cmdline`).includes("main.ts")
    );
    assert.ok(client, "the client process runs under the launcher");
    Deno.kill(client, "SIGKILL");
    await child.stderr.cancel();
    assert.equal((await child.status).code, 137);
    if (store === "redis") {
      assert.ok(!(await Deno.stat(registry).then(() => true, () => false)), "kept in Redis");
    }

    // The task goes on without its client; the conversation is resumed once it is over
    // (`run` delivers the outcomes of tasks that have ended; one still working is followed
    // by the interactive client, tests/e2e/tasks_repl_test.ts).
    const tasks = await runPatchbay(box, ["tasks", "list", "--json", "--all"], { env });
    assert.equal(tasks.code, 0, tasks.stderr);
    const taskId = (JSON.parse(tasks.stdout) as { tasks: { id: string }[] }).tasks[0].id;
    await bounded(
      (async () => {
        for (;;) {
          const got = await runPatchbay(box, ["tasks", "get", taskId, "--json"], { env });
          if (got.code === 0 && JSON.parse(got.stdout).state === "completed") return;
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      })(),
      "the task to complete on its server",
    );
    // The killed client ran in the project folder: its conversation is resumed by id, once
    // the lease the killed process held is free (an ended holder on this host frees it).
    const id = await latest(box, env);
    const resume = () => runPatchbay(box, ["run", "--resume", id, "--yes", "what came of it?"]);
    const resumed = await bounded(
      (async () => {
        for (;;) {
          const attempt = await resume();
          if (!/is open in another patchbay/.test(attempt.stderr)) return attempt;
          await new Promise((resolve) => setTimeout(resolve, 2000));
        }
      })(),
      "the killed client's lease to expire",
      LEASE_TTL_MS * 3,
    );
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(resumed.stdout, "Here is what the research found.\n");
    assert.match(
      resumed.stderr,
      /Task \S+ \(ev\/simulate-research-query\) completed; its outcome was added to this conversation/,
    );
    const note = deliveredNote(llm);
    assert.ok(note, JSON.stringify(lastRequest(llm)));
    assert.match(note, /\(tool call call_1\) completed; its result follows/);
    assert.match(
      note,
      /<tool_output server="ev" tool="simulate-research-query" trust="untrusted">/,
    );
    assert.match(note, /# Research Report: deno/);
    // The call's own result never came: the history says so, before the delivered result.
    const messages = lastRequest(llm);
    const toolResult = messages.findIndex((m) => m.role === "tool");
    assert.match(messages[toolResult].content, /No result was recorded for this tool call/);
    assert.ok(toolResult < messages.findIndex((m) => m.content === note));
    // Saved with the conversation, once.
    const history = await stored(box, env);
    const delivered = history.filter((m) => m.task !== undefined);
    assert.equal(delivered.length, 1);
    assert.match(String(delivered[0].content), /# Research Report: deno/);
  });
}

Deno.test("tasks: past tool_call_timeout the model reads it is pending; the result follows on --resume", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using server = await startEverythingHttp("streamableHttp");
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [RESEARCH] },
      { text: "The research is still running." },
      { text: "The report is in." },
    ],
  });
  await writeConfig(box, config(llm, `${server.origin}/mcp`, 1));
  const first = await runPatchbay(box, ["run", "--yes", "research deno"]);
  assert.equal(first.code, 0, first.stderr);
  const pending = lastRequest(llm).find((m) => m.role === "tool")!.content;
  const id = /Pending: the task (\S+) \(ev\/simulate-research-query\) is still running after 1 s/
    .exec(pending)?.[1];
  assert.ok(id, pending);
  assert.match(pending, /its result will be added to this conversation when it completes/);
  assert.match(pending, new RegExp(`patchbay tasks result ${id}`));

  // Once the task is over (`tasks get` records its outcome), the next --resume delivers it.
  await bounded(
    (async () => {
      for (;;) {
        const got = await runPatchbay(box, ["tasks", "get", id, "--json"]);
        assert.equal(got.code, 0, got.stderr);
        if (JSON.parse(got.stdout).state === "completed") return;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    })(),
    `task ${id} to complete`,
  );
  const second = await runPatchbay(box, ["run", "--resume", "--yes", "and now?"]);
  assert.equal(second.code, 0, second.stderr);
  assert.match(
    deliveredNote(llm) ?? "",
    new RegExp(`the task ${id} .*# Research Report: deno`, "s"),
  );
  const list = await runPatchbay(box, ["tasks", "list", "--json"]);
  const task = JSON.parse(list.stdout).tasks.find((t: { id: string }) => t.id === id);
  assert.equal(task.state, "completed");
  assert.ok(task.deliveredAt, "marked delivered: it is not added twice");
});

Deno.test("tasks: a task-backed sampling request is answered by the model", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using server = await startEverythingHttp("streamableHttp");
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: "ev__trigger-sampling-request-async", arguments: { prompt: "hi" } }] },
      { text: "Sampled as a task." },
      { text: "Done." },
    ],
  });
  await writeConfig(box, config(llm, `${server.origin}/mcp`, 60));
  const result = await runPatchbay(box, ["run", "--yes", "sample"]);
  assert.equal(result.code, 0, result.stderr);
  const tool = lastRequest(llm).find((m) => m.role === "tool")!.content;
  assert.match(tool, /\[COMPLETED\] Async sampling completed!/);
  assert.match(tool, /Task created: \S+/);
  assert.match(tool, /Sampled as a task\./, "the model's answer went back through the task");
});
