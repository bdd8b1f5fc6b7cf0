/**
 * Hooks in a model's turn, through the real entry point (`deno task start run --json`),
 * with real sh hook scripts, server-everything and the scripted model: every event `run`
 * fires (SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, SessionEnd), what
 * each gives the model and the person, and what each may stop. A hook's question is never
 * answered by --yes, and a failed hook never lets a call through.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runPatchbay, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { everythingEntry, NODE } from "../support/deps.ts";
import { type ScriptedLlm, startScriptedLlm } from "../support/scripted_llm.ts";

async function script(folder: string, name: string, body: string): Promise<void> {
  const path = join(folder, name);
  await Deno.writeTextFile(path, `#!/bin/sh\n${body}\n`);
  await Deno.chmod(path, 0o755);
}

/** What each echo message makes the PreToolUse hook answer. */
const PRE = `input=$(cat)
case "$input" in
  *'"message":"allow-me"'*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","additionalContext":"ctx-from-pre"}}';;
  *'"message":"deny-me"'*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not today"}}';;
  *'"message":"ask-me"'*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"needs a person"}}';;
  *'"message":"fail-me"'*) exit 1;;
  *'"message":"stop-me"'*) echo '{"continue":false,"stopReason":"maintenance window"}';;
esac
exit 0`;

async function hooksSandbox(llm: ScriptedLlm): Promise<Sandbox> {
  const box = await sandbox({ LLM_API_KEY: "test-key" });
  await script(box.cwd, "pre.sh", PRE);
  await script(box.cwd, "post.sh", 'cat > /dev/null\necho "post-feedback: checked" >&2\nexit 2');
  await script(
    box.cwd,
    "prompt.sh",
    `case "$(cat)" in *secret*) echo "no secrets in prompts" >&2; exit 2;; esac\necho "prompt-context-42"`,
  );
  await script(
    box.cwd,
    "stop.sh",
    `case "$(cat)" in *'"stop_hook_active":false'*) echo "add a summary line" >&2; exit 2;; esac`,
  );
  await script(
    box.cwd,
    "start.sh",
    'cat >> events.jsonl\necho >> events.jsonl\necho "session-context-7"',
  );
  await script(box.cwd, "end.sh", "cat >> events.jsonl\necho >> events.jsonl");
  const hook = (command: string) => [{ hooks: [{ type: "command", command }] }];
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: { everything: { command: NODE, args: [everythingEntry(), "stdio"] } },
    Hooks: {
      PreToolUse: [{
        matcher: "everything.echo",
        hooks: [{ type: "command", command: "./pre.sh" }],
      }],
      PostToolUse: [{
        matcher: "mcp__everything__.*",
        hooks: [{ type: "command", command: "./post.sh" }],
      }],
      UserPromptSubmit: hook("./prompt.sh"),
      Stop: hook("./stop.sh"),
      SessionStart: hook("./start.sh"),
      SessionEnd: hook("./end.sh"),
    },
  });
  return box;
}

function events(stdout: string): Record<string, unknown>[] {
  return stdout.trim().split("\n").map((line) => JSON.parse(line));
}

const echo = (message: string, id: string) => ({
  name: "everything__echo",
  arguments: { message },
  id,
});

Deno.test("run: every event fires; allow skips the question, deny and ask refuse, feedback reaches the model", async () => {
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [echo("allow-me", "c1"), echo("deny-me", "c2"), echo("ask-me", "c3")] },
      { text: "done" },
      { text: "summary: done" },
    ],
  });
  await using box = await hooksSandbox(llm);
  // No --yes: only the hook's allow lets a call run without a question.
  const run = await runPatchbay(box, ["run", "--json", "echo three things"]);
  assert.equal(run.code, 0, run.stderr);
  const seen = events(run.stdout);
  const results = Object.fromEntries(
    seen.filter((e) => e.type === "tool_result").map((e) => [e.id, e]),
  );
  assert.equal(results.c1.status, "ok");
  assert.equal(results.c2.status, "declined");
  assert.deepEqual(results.c2.error, {
    code: "hook_blocked",
    message: "Blocked by hook: everything/echo",
    cause: "PreToolUse hook './pre.sh' refused it: not today",
    remedy: "the hook's reason says why: change the request, or the hook in the Hooks section " +
      "of servers_config.json",
  });
  assert.equal(results.c3.status, "declined");
  assert.ok(
    seen.some((e) =>
      e.type === "notice" &&
      /declined everything\/echo: PreToolUse hook '\.\/pre\.sh': needs a person/.test(
        String(e.text),
      )
    ),
    run.stdout,
  );
  const done = seen.find((e) => e.type === "done")!;
  assert.equal(done.text, "summary: done");
  assert.equal(done.steps, 3);

  // What the model was given: the SessionStart context with the system prompt, the
  // UserPromptSubmit context with the prompt, then each call's result with its hooks' words.
  const first = llm.requests[0].body.messages;
  assert.match(first[0].content, /\[Context from the session's hooks\]\nsession-context-7$/);
  assert.equal(
    first.at(-1).content,
    "echo three things\n\n[Context from the session's hooks]\nprompt-context-42",
  );
  const told = Object.fromEntries(
    llm.requests[1].body.messages.filter((m: { role: string }) => m.role === "tool")
      .map((m: { tool_call_id: string; content: string }) => [m.tool_call_id, m.content]),
  );
  // The hooks' words come after the tool's output, outside the element marking it untrusted.
  assert.equal(
    told.c1,
    '<tool_output server="everything" tool="echo" trust="untrusted">\nEcho: allow-me\n' +
      "</tool_output>\n\n[Context from the session's hooks]\nctx-from-pre\n\n" +
      "PostToolUse hook feedback: post-feedback: checked",
  );
  assert.match(
    told.c2,
    /a hook refused it \(its reason follows\)\.\n<\/tool_output>\n\n\[Context from the session's hooks\]\nA PreToolUse hook refused this tool call: not today\. Do not retry/,
  );
  assert.match(told.c3, /declined/);
  // The Stop hook made the turn go on once, and said why.
  assert.equal(
    llm.requests[2].body.messages.at(-1).content,
    "[A Stop hook asks you to go on] add a summary line",
  );

  const lifecycle = (await Deno.readTextFile(join(box.cwd, "events.jsonl"))).trim().split("\n")
    .map((line) => JSON.parse(line));
  assert.deepEqual(lifecycle.map((e) => [e.hook_event_name, e.source ?? e.reason]), [
    ["SessionStart", "startup"],
    ["SessionEnd", "other"],
  ]);
  assert.equal(lifecycle[0].model, "scripted-model");
  assert.equal(lifecycle[0].session_id, done.session);
  assert.match(lifecycle[0].transcript_path, new RegExp(`/${done.session}\\.jsonl$`));
});

Deno.test("run --yes: a hook's question and a failed hook still decline; a refused prompt and continue:false end the run", async () => {
  await using llm = await startScriptedLlm({
    replies: [{
      toolCalls: [echo("ask-me", "c1"), echo("fail-me", "c2"), echo("stop-me", "c3")],
    }],
  });
  await using box = await hooksSandbox(llm);
  const refused = await runPatchbay(box, ["run", "--json", "--yes", "tell me a secret"]);
  assert.equal(refused.code, 1);
  const error = events(refused.stdout).find((e) => e.type === "error")!.error as Record<
    string,
    string
  >;
  assert.equal(error.code, "hook_blocked");
  assert.equal(error.message, "Blocked by hook: the prompt");
  assert.equal(
    error.cause,
    "UserPromptSubmit hook './prompt.sh' refused it: no secrets in prompts",
  );
  assert.equal(llm.requests.length, 0, "a refused prompt never reaches the model");

  const run = await runPatchbay(box, ["run", "--json", "--yes", "echo again"]);
  assert.equal(run.code, 1, run.stderr);
  const seen = events(run.stdout);
  const statuses = seen.filter((e) => e.type === "tool_result").map((e) => [e.id, e.status]);
  assert.deepEqual(statuses, [["c1", "declined"], ["c2", "declined"], ["c3", "declined"]]);
  const failed = seen.find((e) => e.type === "notice" && e.kind === "hook_failed")!;
  assert.deepEqual(failed.error, {
    code: "hook_failed",
    message: "Hook failed: PreToolUse hook './pre.sh'",
    cause: "it exited with code 1 and printed nothing on stderr (it ran for everything/echo)",
    remedy: (failed.error as { remedy: string }).remedy,
  });
  assert.match(String((failed.error as { remedy: string }).remedy), /--debug/);
  const ended = seen.find((e) => e.type === "error")!.error as Record<string, string>;
  assert.equal(ended.message, "Stopped by hook: everything/echo");
  assert.equal(
    ended.cause,
    "PreToolUse hook './pre.sh' ended the turn before the call: maintenance window",
  );
  assert.equal(llm.requests.length, 1, "the turn ended without asking the model again");
});
