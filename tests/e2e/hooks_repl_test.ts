/**
 * Hooks in the interactive client, as a person meets them: the real `deno task start` in
 * tmux, real sh hook scripts, server-everything and the scripted model. A hook's question
 * offers yes and no only; a hook that fails is reported with its cause and remedy, then
 * its call is asked about; `/call` runs the same hooks; `/clear` ends one session and
 * starts another; leaving ends the session; `/refresh` after adding a hook whose program
 * the plan lacks restarts under the wider plan, as for a new stdio server.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { everythingEntry, NODE } from "../support/deps.ts";
import { startRepl } from "../support/repl.ts";
import { type ScriptedLlm, startScriptedLlm } from "../support/scripted_llm.ts";

async function script(folder: string, name: string, body: string): Promise<string> {
  const path = join(folder, name);
  await Deno.writeTextFile(path, `#!/bin/sh\n${body}\n`);
  await Deno.chmod(path, 0o755);
  return path;
}

const GUARD = `input=$(cat)
case "$input" in
  *'"message":"ask-me"'*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"needs a person"}}';;
  *'"message":"hang"'*) sleep 600;;
esac
exit 0`;

function config(llm: ScriptedLlm, hooks?: Record<string, unknown>) {
  return {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: { everything: { command: NODE, args: [everythingEntry(), "stdio"] } },
    ...(hooks ? { Hooks: hooks } : {}),
  };
}

async function lifecycle(box: Sandbox): Promise<string[]> {
  const text = await Deno.readTextFile(join(box.cwd, "events.jsonl")).catch(() => "");
  return text.trim().split("\n").filter(Boolean).map((line) => {
    const event = JSON.parse(line);
    return `${event.hook_event_name}:${event.source ?? event.reason}`;
  });
}

Deno.test("REPL: a hook's question, a failed hook, /call, /clear and leaving fire the hooks", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await script(box.cwd, "guard.sh", GUARD);
  await script(box.cwd, "session.sh", "cat >> events.jsonl\necho >> events.jsonl");
  const session = [{ hooks: [{ type: "command", command: "./session.sh" }] }];
  await writeConfig(
    box,
    config(llm, {
      PreToolUse: [{
        matcher: "everything.echo",
        hooks: [{ type: "command", command: "./guard.sh", timeout: 2 }],
      }],
      SessionStart: session,
      SessionEnd: session,
    }),
  );
  await using repl = await startRepl(box);
  const echo = (message: string) => ({
    toolCalls: [{ name: "everything__echo", arguments: { message } }],
  });

  llm.enqueue(echo("ask-me"), { text: "Asked and ran." });
  const question = await repl.expectNext(() => repl.tmux.submit("first"), "(default No)");
  assert.match(
    question,
    /\? Run everything › echo \(PreToolUse hook '\.\/guard\.sh': needs a person\)/,
  );
  assert.match(question, /\[y\]es {2}\[n\]o {2}\[v\]iew all {2}\(default No\)/);
  assert.doesNotMatch(question, /\[a\]lways/);
  const ran = await repl.expectNext(() => repl.tmux.press("y"), "Asked and ran.");
  assert.match(ran, /✓ everything › echo \d+ ms\s+Echo: ask-me/);

  llm.enqueue(echo("hang"), { text: "Declined, then." });
  const failed = await repl.expectNext(() => repl.tmux.submit("second"), "(default No)");
  assert.match(failed, /warning: Hook failed: PreToolUse hook '\.\/guard\.sh'/);
  assert.match(
    failed,
    /cause: it did not finish within 2 s and was ended \(it ran for everything\/echo\)/,
  );
  assert.match(failed, /remedy: make the hook finish sooner, or raise its "timeout" \(now 2 s\)/);
  assert.match(failed, /\? Run everything › echo \(PreToolUse hook '\.\/guard\.sh' failed\)/);
  const declined = await repl.expectNext(() => repl.tmux.press("n"), "Declined, then.");
  assert.match(declined, /⊘ everything › echo/);

  await repl.expectNext(
    () => repl.tmux.submit('/call everything.echo {"message":"ask-me"}'),
    "(default No)",
  );
  assert.match(await repl.expectNext(() => repl.tmux.press("y"), "Echo: ask-me"), /✓ everything/);

  await repl.send("/clear", "New conversation");
  assert.deepEqual(await lifecycle(box), [
    "SessionStart:startup",
    "SessionEnd:clear",
    "SessionStart:clear",
  ]);
  await repl.tmux.submit("/exit");
  assert.equal(await repl.tmux.exitCode(), 0);
  assert.deepEqual((await lifecycle(box)).at(-1), "SessionEnd:prompt_input_exit");
  assert.deepEqual(await repl.leftoverProcesses(), []);
});

Deno.test("REPL: /refresh after adding a hook whose program the plan lacks restarts under the wider plan", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, config(llm));
  await using repl = await startRepl(box);
  const hook = await script(box.cwd, "audit.sh", "cat > audited.json");
  await writeConfig(
    box,
    config(llm, {
      PreToolUse: [{
        matcher: "everything.*",
        hooks: [{ type: "command", command: "./audit.sh" }],
      }],
    }),
  );
  const restart = await repl.send("/refresh", /Type a message/, 60_000);
  assert.match(
    restart,
    new RegExp(
      `Restarting under an extended plan, which adds run ${await Deno.realPath(hook)} ` +
        `\\(runs the PreToolUse hook "\\./audit\\.sh"\\)`,
    ),
  );
  await repl.tmux.waitFor(/Restarting under[^]*1 of 1 server connected/, { timeoutMs: 60_000 });
  await repl.send('/call everything.echo {"message":"audited"}', "Echo: audited");
  const audited = JSON.parse(await Deno.readTextFile(join(box.cwd, "audited.json")));
  assert.deepEqual(audited.tool_input, { message: "audited" });
});
