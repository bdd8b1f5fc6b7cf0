/**
 * The hooks of an event together (lib/hooks/hooks.ts, tool_hooks.ts, turn_hooks.ts), with
 * real sh scripts: they run one after another in the order written, each seeing the input
 * as the ones before left it; a refusal stops the rest; the strongest decision wins and a
 * failed hook makes the call asked about, never allowed; what they say is masked.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { CatalogueTool } from "../../lib/connections/types.ts";
import { Hooks } from "../../lib/hooks/hooks.ts";
import { preToolUse } from "../../lib/hooks/tool_hooks.ts";
import { sessionStart, userPromptSubmit } from "../../lib/hooks/turn_hooks.ts";
import type { HookCommand, HooksConfig } from "../../lib/hooks/types.ts";
import { tempDir } from "../support/temp_dir.ts";

const echo: CatalogueTool = {
  name: "everything__echo",
  server: "everything",
  originalName: "echo",
  inputSchema: {
    type: "object",
    properties: { message: { type: "string" } },
    required: ["message"],
  },
  annotations: { readOnlyHint: true },
};

async function hooksIn(folder: string, scripts: Record<string, string>) {
  const commands: Record<string, HookCommand> = {};
  for (const [name, body] of Object.entries(scripts)) {
    const path = join(folder, `${name}.sh`);
    await Deno.writeTextFile(path, `#!/bin/sh\n${body}\n`);
    await Deno.chmod(path, 0o755);
    // The hooks are real processes: each script is checked to be sh first.
    const syntax = await new Deno.Command("sh", { args: ["-n", path], stderr: "piped" }).output();
    assert.ok(syntax.success, `${name}: ${new TextDecoder().decode(syntax.stderr)}`);
    commands[name] = { command: `./${name}.sh`, timeoutSeconds: 10, env: {}, folder, source: "t" };
  }
  return commands;
}

function hooksOf(config: HooksConfig) {
  return new Hooks(config, {
    context: { sessionId: () => "s-1" },
    parentEnv: (name) => Deno.env.get(name),
    redact: (text) => text.replaceAll("sk-secret", "***"),
  });
}

const call = (message: string) => ({ tool: echo, args: { message }, callId: "call-1" });

Deno.test("PreToolUse: in order, each sees the rewritten input, and the strongest decision wins", async () => {
  await using dir = await tempDir();
  const hooks = await hooksIn(dir.path, {
    rewrite: `cat > first.json\necho '{"hookSpecificOutput":{"hookEventName":"PreToolUse",` +
      `"permissionDecision":"allow","updatedInput":{"message":"rewritten"}}}'`,
    ask: `cat > second.json\necho '{"hookSpecificOutput":{"permissionDecision":"ask"}}'`,
    deny: "cat > third.json\necho 'no, sk-secret' >&2\nexit 2",
    never: "touch never-ran",
    broken: "exit 1",
  });
  const all = hooksOf({
    PreToolUse: [
      { matcher: "everything.*", hooks: [hooks.rewrite, hooks.ask] },
      { matcher: "other.*", hooks: [hooks.never] },
      { matcher: "mcp__everything__echo", hooks: [hooks.deny, hooks.never] },
    ],
  });
  const denied = await preToolUse(all, call("hi"));
  assert.equal(denied.verdict, "deny");
  assert.equal(denied.refusal?.reason, "PreToolUse hook './deny.sh' refused it: no, ***");
  const seen = async (file: string) =>
    JSON.parse(await Deno.readTextFile(join(dir.path, file))).tool_input;
  assert.deepEqual(await seen("first.json"), { message: "hi" });
  assert.deepEqual(await seen("second.json"), { message: "rewritten" });
  assert.deepEqual(await seen("third.json"), { message: "rewritten" });
  await assert.rejects(() => Deno.stat(join(dir.path, "never-ran")), Deno.errors.NotFound);

  const asked = await preToolUse(
    hooksOf({ PreToolUse: [{ hooks: [hooks.rewrite, hooks.ask] }] }),
    call("hi"),
  );
  assert.equal(asked.verdict, "ask", "ask wins over an earlier allow");
  assert.deepEqual(asked.args, { message: "rewritten" });
  assert.equal(asked.rewrittenBy.length, 1);

  const failed = await preToolUse(
    hooksOf({ PreToolUse: [{ hooks: [hooks.rewrite, hooks.broken] }] }),
    call("hi"),
  );
  assert.equal(failed.verdict, "ask", "a failed hook makes the call asked about, not allowed");
  assert.equal(failed.askReason, "PreToolUse hook './broken.sh' failed");
  assert.equal(failed.failures.length, 1);
  assert.equal(failed.failures[0].code, "hook_failed");
});

Deno.test("PreToolUse: an updatedInput the tool's schema refuses refuses the call", async () => {
  await using dir = await tempDir();
  const hooks = await hooksIn(dir.path, {
    bad: `cat >/dev/null\necho '{"hookSpecificOutput":{"permissionDecision":"allow",` +
      `"updatedInput":{"text":"no message"}}}'`,
  });
  const outcome = await preToolUse(hooksOf({ PreToolUse: [{ hooks: [hooks.bad] }] }), call("x"));
  assert.equal(outcome.verdict, "deny");
  assert.equal(outcome.refusal?.code, "hook_failed");
  assert.match(
    outcome.refusal!.reason,
    /must have required property 'message'; the call was not made/,
  );
  assert.deepEqual(outcome.args, { message: "x" }, "the refused input is not taken");
});

Deno.test("UserPromptSubmit and SessionStart: plain stdout is context; exit 2 refuses the prompt", async () => {
  await using dir = await tempDir();
  const hooks = await hooksIn(dir.path, {
    context: 'cat >/dev/null\necho "today is a holiday, sk-secret"',
    refuse: 'case "$(cat)" in *secret*) echo "no secrets" >&2; exit 2;; esac',
  });
  const all = hooksOf({
    UserPromptSubmit: [{ hooks: [hooks.context, hooks.refuse] }],
    SessionStart: [{ matcher: "resume", hooks: [hooks.refuse] }, { hooks: [hooks.context] }],
  });
  const plain = await userPromptSubmit(all, "hello");
  assert.deepEqual(plain.context, ["today is a holiday, ***"]);
  assert.equal(plain.blocked, undefined);
  const refused = await userPromptSubmit(all, "a secret");
  assert.equal(refused.blocked?.message, "Blocked by hook: the prompt");
  assert.equal(
    refused.blocked?.reason,
    "UserPromptSubmit hook './refuse.sh' refused it: no secrets",
  );
  // The matcher of SessionStart is the source: only the second group runs at startup.
  const started = await sessionStart(all, { source: "startup", model: "m" });
  assert.deepEqual(started.context, ["today is a holiday, ***"]);
  assert.deepEqual(started.messages, []);
});
