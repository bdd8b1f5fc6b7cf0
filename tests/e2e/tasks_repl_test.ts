/**
 * MCP tasks in the interactive client, in a terminal (tmux), with server-everything over
 * stdio and the scripted model: the spinner line shows the task's status and elapsed
 * time, a form the task asks for is answered in the terminal, `/tasks` lists what ran,
 * Ctrl+C cancels a task on its server; a task still running past `tool_call_timeout` is
 * followed in the background and its outcome joins the conversation between turns,
 * `/tasks cancel` reaches a task that runs on, and a new session delivers the outcome of a
 * task an earlier one left into that earlier conversation.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { DENO } from "../support/deps.ts";
import { replConfig, startRepl } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { startEverythingHttp } from "../support/servers.ts";

const TASK_SERVER = fileURLToPath(new URL("../fixtures/task_server.ts", import.meta.url));

/** The text of every message of the model's last request. */
function lastMessages(llm: Awaited<ReturnType<typeof startScriptedLlm>>): string[] {
  return (llm.requests.at(-1)!.body.messages as { content: unknown }[])
    .map((m) => String(m.content ?? ""));
}

Deno.test("REPL: a task's status on the spinner line, its form in the terminal, /tasks, Ctrl+C", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, replConfig(box, llm));
  await using repl = await startRepl(box, { args: ["--yes"] });
  llm.enqueue(
    {
      toolCalls: [{
        name: "everything__simulate-research-query",
        arguments: { topic: "python", ambiguous: true },
      }],
    },
    { text: "Research done." },
  );
  const before = (await repl.tmux.screen()).length;
  await repl.tmux.submit("research python");
  // The spinner line: the tool, the task's status, how long it has run, its message.
  const spinning = await repl.tmux.waitFor(
    /everything › simulate-research-query task \S+ working \d+ s · (Gathering sources|Analyzing content)/,
    { after: before },
  );
  assert.ok(spinning);
  await repl.tmux.waitFor("ccept and fill in", { after: before });
  await repl.expectNext(() => repl.tmux.press("a"), "Clarification*:");
  await repl.tmux.submit("2");
  await repl.tmux.waitFor("Research done.", { after: before });
  assert.ok(lastMessages(llm).some((m) => m.includes("# Research Report: python (snake)")));

  const listed = await repl.send("/tasks", /Tasks in .*: 0 running tasks, 1 over/);
  assert.match(
    listed,
    /\S+ {2}everything\/simulate-research-query {2}completed, started \d+ s ago/,
  );

  llm.enqueue({
    toolCalls: [{ name: "everything__simulate-research-query", arguments: { topic: "deno" } }],
  });
  await repl.expectNext(
    () => repl.tmux.submit("research deno"),
    /simulate-research-query task \S+ working/,
  );
  // The spinner line goes as the turn ends: the screen may get shorter, so the mark is
  // looked for anywhere (it is the first of this session).
  await repl.tmux.press("C-c");
  await repl.tmux.waitFor("⊘ cancelled");
  await repl.send("/tasks", /Tasks in .*: 0 running tasks, 2 over/);
  const all = await repl.tmux.screen();
  assert.match(all, /everything\/simulate-research-query {2}cancelled/);
});

Deno.test("REPL: a task past tool_call_timeout is followed; its outcome joins between turns", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  const task = (flags: string[]) => ({
    command: DENO,
    args: ["run", "--quiet", "--no-config", TASK_SERVER, ...flags],
  });
  await writeConfig(box, {
    ...replConfig(box, llm),
    mcpServers: {
      quick: task(["--duration-ms=3000"]),
      long: task(["--duration-ms=600000"]),
    },
    AgentConfig: { tool_call_timeout: 1 },
  });
  await using repl = await startRepl(box, { args: ["--yes"] });
  llm.enqueue(
    { toolCalls: [{ name: "quick__required", arguments: {} }] },
    { text: "It runs on." },
  );
  await repl.send("start it", "It runs on.");
  assert.ok(lastMessages(llm).some((m) => /Pending: the task \S+ \(quick\/required\)/.test(m)));
  // At the prompt, the task ends: its outcome is added to the conversation, and said.
  await repl.tmux.waitFor(
    /Task \S+ \(quick\/required\) completed; its outcome was added to this conversation/,
  );
  llm.enqueue({ text: "Seen it." });
  await repl.send("what came of it?", "Seen it.");
  const messages = lastMessages(llm);
  const note = messages.findIndex((m) => m.startsWith("[patchbay, not the user: the task"));
  assert.ok(note > 0, messages.join("\n---\n"));
  assert.match(messages[note], /slow done \(task\)/);
  assert.equal(messages.at(-1), "what came of it?");

  llm.enqueue(
    { toolCalls: [{ name: "long__required", arguments: {} }] },
    { text: "Long one started." },
  );
  await repl.send("start the long one", "Long one started.");
  const id = /Pending: the task (\S+) \(long\/required\)/.exec(lastMessages(llm).join("\n"))![1];
  await repl.send(`/tasks cancel ${id}`, `Cancelled task ${id} on server 'long'.`);
  await repl.send(`/tasks get ${id}`, /state: {6}cancelled/);
});

Deno.test("REPL: the next session delivers a task an earlier one left into its conversation", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using server = await startEverythingHttp("streamableHttp");
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: "ev__simulate-research-query", arguments: { topic: "later" } }] },
      { text: "It is pending." },
    ],
  });
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: { ev: { transport_type: "streamable_http", url: `${server.origin}/mcp` } },
    AgentConfig: { tool_call_timeout: 1 },
  });
  const first = await runPatchbay(box, ["run", "--yes", "research later"]);
  assert.equal(first.code, 0, first.stderr);
  const sessions = await runPatchbay(box, ["sessions", "--json"]);
  const earlier = JSON.parse(sessions.stdout).sessions[0].id as string;

  // A new conversation: the earlier one's task is followed and its outcome stored there.
  await using repl = await startRepl(box);
  await repl.tmux.waitFor(
    new RegExp(
      `Task \\S+ \\(ev/simulate-research-query\\) completed; its outcome was added to ` +
        `conversation ${earlier}`,
    ),
  );
  await repl.tmux.submit("/exit");
  assert.equal(await repl.tmux.exitCode(), 0);
  const shown = await runPatchbay(box, ["sessions", "show", earlier, "--json"]);
  const messages = JSON.parse(shown.stdout).messages as { task?: unknown; content?: string }[];
  const delivered = messages.filter((m) => m.task !== undefined);
  assert.equal(delivered.length, 1);
  assert.match(delivered[0].content!, /# Research Report: later/);
});
