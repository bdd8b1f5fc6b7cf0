/**
 * Hooks around `patchbay call` through the real entry point (`deno task start`, the
 * launcher's narrow flags), with real sh hook scripts and server-everything: a hook that
 * allows, one that blocks with exit code 2, rewrites (valid and invalid), asks with no one
 * to ask, hangs, crashes, prints garbage or floods: each is reported with its cause and
 * remedy, and none lets a call through unasked; a secret a hook echoes is masked on stderr and
 * in the log. `patchbay permissions` grants each hook's
 * program, or sh for a line with shell syntax, and says so.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { everythingEntry, NODE } from "../support/deps.ts";

/** Writes an executable sh script into `folder`. */
async function script(folder: string, name: string, body: string): Promise<void> {
  const path = join(folder, name);
  await Deno.writeTextFile(path, `#!/bin/sh\n${body}\n`);
  await Deno.chmod(path, 0o755);
}

/**
 * The PreToolUse hook: what it does depends on the call (JSON.stringify writes no spaces).
 * It keeps every input it gets in `pre.jsonl`.
 */
const DISPATCH = `input=$(cat)
printf '%s\\n' "$input" >> pre.jsonl
case "$input" in
  *'"message":"forbidden"'*) echo "forbidden words are not echoed" >&2; exit 2;;
  *'"message":"rewrite-me"'*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"message":"rewritten"}}}';;
  *'"message":"rewrite-bad"'*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"message":5}}}';;
  *'"message":"ask-me"'*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"needs a person"}}';;
  *'"a":1,'*) sleep 600 & echo $! > hang.pid; sleep 600;;
  *'"a":2,'*) echo "boom: the checker broke" >&2; exit 3;;
  *'"a":3,'*) echo '{"hookSpecificOutput": {"permissionDecision": "allow"';;
  *'"a":4,'*) yes '{"decision":"approve"}';;
esac
exit 0`;

async function hooksSandbox() {
  const box = await sandbox({ LLM_API_KEY: "test-key" });
  await script(box.cwd, "dispatch.sh", DISPATCH);
  await script(box.cwd, "post.sh", "cat >> post.jsonl; echo >> post.jsonl");
  await writeConfig(box, {
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: { everything: { command: NODE, args: [everythingEntry(), "stdio"] } },
    Hooks: {
      PreToolUse: [{
        matcher: "everything.echo|mcp__everything__get-sum",
        hooks: [{ type: "command", command: "./dispatch.sh", timeout: 3 }],
      }],
      PostToolUse: [{
        matcher: "everything.*",
        hooks: [{ type: "command", command: "./post.sh" }],
      }],
    },
  });
  return box;
}

/** Whether process `pid` is still alive (not gone, not a zombie). */
function alive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return !stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return false;
  }
}

Deno.test("call: hooks allow, block with exit 2, and rewrite the input (checked against the tool's schema)", async () => {
  await using box = await hooksSandbox();
  const ok = await runPatchbay(box, ["call", "everything.echo", '{"message":"hi"}']);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stdout.trim(), "Echo: hi");
  // Claude Code's input, with patchbay's server and tool and the tool's annotations.
  const [seen] = (await Deno.readTextFile(join(box.cwd, "pre.jsonl"))).trim().split("\n")
    .map((line) => JSON.parse(line));
  assert.match(seen.session_id, /^[0-9a-f-]{36}$/);
  assert.match(seen.tool_use_id, /^patchbay-call-/);
  assert.deepEqual({ ...seen, session_id: "", tool_use_id: "" }, {
    session_id: "",
    cwd: box.cwd,
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: "mcp__everything__echo",
    tool_input: { message: "hi" },
    tool_use_id: "",
    server: "everything",
    tool: "echo",
    annotations: seen.annotations,
  });
  assert.equal(seen.annotations.readOnlyHint, true);
  const post = JSON.parse((await Deno.readTextFile(join(box.cwd, "post.jsonl"))).split("\n")[0]);
  assert.equal(post.hook_event_name, "PostToolUse");
  assert.deepEqual(post.tool_response.content, [{ type: "text", text: "Echo: hi" }]);

  const blocked = await runPatchbay(box, ["call", "everything.echo", '{"message":"forbidden"}']);
  assert.equal(blocked.code, 1);
  assert.match(blocked.stderr, /error: Blocked by hook: everything\/echo\n/);
  assert.match(
    blocked.stderr,
    /cause: +PreToolUse hook '\.\/dispatch\.sh' refused it: forbidden words are not echoed/,
  );
  assert.match(blocked.stderr, /remedy: the hook's reason says why/);

  const rewritten = await runPatchbay(box, ["call", "everything.echo", '{"message":"rewrite-me"}']);
  assert.equal(rewritten.code, 0, rewritten.stderr);
  assert.equal(rewritten.stdout.trim(), "Echo: rewritten");
  assert.match(rewritten.stderr, /a PreToolUse hook rewrote the input: \{"message":"rewritten"\}/);

  const invalid = await runPatchbay(box, ["call", "everything.echo", '{"message":"rewrite-bad"}']);
  assert.equal(invalid.code, 1);
  assert.match(invalid.stderr, /error: Hook failed: PreToolUse hook '\.\/dispatch\.sh'/);
  assert.match(
    invalid.stderr,
    /into one the tool's input schema refuses: input\/message must be string; the call was not made/,
  );
  assert.match(
    invalid.stderr,
    /remedy: make the hook's updatedInput fit .*`patchbay tools --json`/,
  );
  // Never run with the input the schema refused.
  assert.doesNotMatch(
    await Deno.readTextFile(join(box.cwd, "post.jsonl")),
    /rewrite-bad|"message":5/,
  );
});

Deno.test("call: a hook that asks, hangs, crashes, prints garbage or floods never lets the call through", async () => {
  await using box = await hooksSandbox();
  const cases: [string, string, RegExp][] = [
    [
      "everything.echo",
      '{"message":"ask-me"}',
      /\(PreToolUse hook '\.\/dispatch\.sh': needs a person\)/,
    ],
    [
      "everything.get-sum",
      '{"a":1,"b":0}',
      /cause: it did not finish within 3 s and was ended \(it ran for everything\/get-sum\)\n {2}remedy: make the hook finish sooner, or raise its "timeout" \(now 3 s\)/,
    ],
    [
      "everything.get-sum",
      '{"a":2,"b":0}',
      /cause: it exited with code 3: boom: the checker broke/,
    ],
    ["everything.get-sum", '{"a":3,"b":0}', /cause: its output starts like JSON but is not JSON/],
    [
      "everything.get-sum",
      '{"a":4,"b":0}',
      /cause: it printed more than 1,048,576 bytes on stdout and was ended/,
    ],
  ];
  for (const [tool, args, cause] of cases) {
    const result = await runPatchbay(box, ["call", tool, args]);
    assert.equal(result.code, 1, `${args}: ${result.stderr}`);
    assert.match(result.stderr, cause, args);
    assert.match(
      result.stderr,
      /no one to ask: declined \(a hook's question needs a person at a terminal\)/,
    );
    assert.match(result.stderr, new RegExp(`error: Tool call declined: ${tool.replace(".", "/")}`));
    assert.match(result.stderr, /cause: +it needs a person's answer \(PreToolUse hook/);
    if (!args.includes("ask-me")) {
      assert.match(result.stderr, /warning: Hook failed: PreToolUse hook '\.\/dispatch\.sh'\n/);
      if (!args.includes('"a":1,')) assert.match(result.stderr, /remedy: .*--debug/);
    }
  }
  const hung = Number(await Deno.readTextFile(join(box.cwd, "hang.pid")));
  assert.ok(!alive(hung), `the hanging hook's background process ${hung} outlived it`);
  // None of them reached the server: the PostToolUse hook never ran.
  await assert.rejects(() => Deno.stat(join(box.cwd, "post.jsonl")), Deno.errors.NotFound);
});

Deno.test("permissions: each hook's program is granted, or sh for a line with shell syntax, said so", async () => {
  await using box = await hooksSandbox();
  await writeConfig(box, {
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: {},
    Hooks: {
      PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./dispatch.sh" }] }],
      Stop: [{ hooks: [{ type: "command", command: 'echo "$HOME" > stopped.txt' }] }],
    },
  });
  const plan = await runPatchbay(box, ["permissions"]);
  assert.equal(plan.code, 0, plan.stderr);
  const dispatch = await Deno.realPath(join(box.cwd, "dispatch.sh"));
  assert.match(
    plan.stdout,
    new RegExp(`run +${dispatch} +runs the PreToolUse hook "\\./dispatch\\.sh"`),
  );
  assert.match(
    plan.stdout,
    /run +\S+\/sh +runs the Stop hook "echo \\"\$HOME\\" > stopped\.txt" through sh -c \(it has a variable or substitution \$HOME\)/,
  );
  assert.match(plan.stdout, /note: Hooks with shell syntax .* run with sh -c, so sh is granted/);
  assert.match(plan.stdout, new RegExp(`--allow-run=[^ ]*${dispatch}`));
  const check = await runPatchbay(box, ["config", "check"]);
  assert.equal(check.code, 0, check.stderr);
  assert.match(
    check.stderr,
    /Hooks\.PreToolUse\[0\]\.matcher: "Bash" matches none of patchbay's tools \(they are <server>\.<tool>\)/,
  );
});

/**
 * Hostile hooks given a secret through `env` (`${HOOK_TOKEN}` from .env): each echoes it where
 * patchbay quotes a hook (exit 2's reason, a crash's stderr, a broken JSON answer), and others
 * print 10 MB or never exit. Every one is bounded, and the token is masked on stderr and in
 * the --debug log.
 */
const HOSTILE = `input=$(cat)
case "$input" in
  *'"message":"leak-block"'*) echo "refused, token $HOOK_TOKEN" >&2; exit 2;;
  *'"message":"leak-crash"'*) echo "crashed holding $HOOK_TOKEN" >&2; exit 1;;
  *'"message":"leak-json"'*) printf '{"decision":"%s"}' "$HOOK_TOKEN";;
  *'"message":"ten-mb"'*) head -c 10485760 /dev/zero | tr '\\0' x;;
  *'"message":"never"'*) exec sleep 100000;;
esac
exit 0`;

Deno.test("call: a hook that echoes a secret, prints 10 MB or never exits is bounded and masked", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  const token = "hook-token-7f3a9c2e51d84b06";
  await Deno.writeTextFile(join(box.cwd, ".env"), `HOOK_TOKEN=${token}\n`);
  await script(box.cwd, "hostile.sh", HOSTILE);
  await writeConfig(box, {
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: { everything: { command: NODE, args: [everythingEntry(), "stdio"] } },
    Hooks: {
      PreToolUse: [{
        matcher: "everything.echo",
        hooks: [{
          type: "command",
          command: "./hostile.sh",
          timeout: 2,
          env: { HOOK_TOKEN: "${HOOK_TOKEN}" },
        }],
      }],
    },
  });
  const cases: [string, RegExp][] = [
    ["leak-block", /PreToolUse hook '\.\/hostile\.sh' refused it: refused, token \[REDACTED\]/],
    ["leak-crash", /cause: it exited with code 1: crashed holding \[REDACTED\]/],
    ["leak-json", /cause: its JSON answer has decision "\[REDACTED\]"/],
    ["ten-mb", /cause: it printed more than 1,048,576 bytes on stdout and was ended/],
    ["never", /cause: it did not finish within 2 s and was ended/],
  ];
  for (const [message, shown] of cases) {
    const result = await runPatchbay(box, [
      "--debug",
      "call",
      "everything.echo",
      JSON.stringify({ message }),
    ]);
    assert.equal(result.code, 1, `${message}: ${result.stderr}`);
    assert.match(result.stderr, shown, message);
    assert.ok(!result.stderr.includes(token), `${message} showed the token: ${result.stderr}`);
    assert.ok(!result.stdout.includes(token), `${message} printed the token: ${result.stdout}`);
    // Refused or declined: the call never reached the server.
    assert.doesNotMatch(result.stdout, /Echo:/, message);
  }
  const log = await Deno.readTextFile(
    join(box.home, ".local", "state", "patchbay", "patchbay.log"),
  );
  assert.match(log, /hook ran/);
  assert.ok(!log.includes(token), "the --debug log holds the token");
});
