/**
 * What a hook's run says (lib/hooks/answer.ts), read as Claude Code reads it: exit codes,
 * its JSON fields, and every way an answer counts as a failure.
 */

import assert from "node:assert/strict";
import { readHookRun } from "../../lib/hooks/answer.ts";
import type { HookRun } from "../../lib/hooks/run_command.ts";

function exited(code: number, stdout = "", stderr = ""): HookRun {
  return { kind: "exited", code, stdout, stderr, durationMs: 1 };
}

Deno.test("exit 0 with JSON: Claude Code's fields, its older decision too", () => {
  const json = {
    continue: false,
    stopReason: "enough",
    suppressOutput: true,
    systemMessage: "careful",
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "ask",
      permissionDecisionReason: "looks destructive",
      updatedInput: { path: "/tmp/x" },
      additionalContext: "the project forbids /etc",
    },
  };
  assert.deepEqual(readHookRun("PreToolUse", exited(0, JSON.stringify(json)), 60), {
    kind: "answer",
    answer: {
      stop: { reason: "enough" },
      suppressOutput: true,
      systemMessage: "careful",
      decision: "ask",
      decisionReason: "looks destructive",
      updatedInput: { path: "/tmp/x" },
      context: "the project forbids /etc",
    },
  });
  const older = readHookRun("PreToolUse", exited(0, '{"decision":"block","reason":"no"}'), 60);
  assert.deepEqual(older, {
    kind: "answer",
    answer: { decision: "deny", block: "no", decisionReason: "no" },
  });
  const approve = readHookRun("PreToolUse", exited(0, '{"decision":"approve"}'), 60);
  assert.deepEqual(approve, { kind: "answer", answer: { decision: "allow" } });
});

Deno.test("exit 2 blocks with stderr; plain stdout is context only where Claude Code says", () => {
  assert.deepEqual(readHookRun("PreToolUse", exited(2, '{"x":1}', "too risky\n"), 60), {
    kind: "answer",
    answer: { block: "too risky" },
  });
  assert.deepEqual(readHookRun("UserPromptSubmit", exited(0, "the date is today\n"), 60), {
    kind: "answer",
    answer: { context: "the date is today" },
  });
  assert.deepEqual(readHookRun("PreToolUse", exited(0, "checked\n"), 60), {
    kind: "answer",
    answer: {},
  });
});

Deno.test("failures: another exit code, a signal, the timeout, a flood, a broken answer", () => {
  const cause = (event: "PreToolUse" | "Stop", run: HookRun) => {
    const read = readHookRun(event, run, 7);
    assert.equal(read.kind, "failed", JSON.stringify(read));
    return read.kind === "failed" ? `${read.failure.kind}: ${read.failure.cause}` : "";
  };
  assert.equal(cause("Stop", exited(1, "", "oops")), "exit: it exited with code 1: oops");
  assert.equal(
    cause("Stop", exited(1)),
    "exit: it exited with code 1 and printed nothing on stderr",
  );
  assert.match(
    cause("Stop", { ...exited(137), signal: "SIGKILL" } as HookRun),
    /killed by SIGKILL/,
  );
  assert.equal(
    cause("Stop", { kind: "timed_out", stderr: "", durationMs: 7000 }),
    "timeout: it did not finish within 7 s and was ended",
  );
  assert.equal(
    cause("Stop", { kind: "flooded", stream: "stdout", limitBytes: 1024, durationMs: 1 }),
    "flood: it printed more than 1,024 bytes on stdout and was ended",
  );
  assert.match(cause("PreToolUse", exited(0, '{"hookSpecificOutput": {')), /^garbage: .*not JSON/);
  assert.match(cause("PreToolUse", exited(0, "[1,2]")), /is not a JSON object/);
  assert.match(
    cause("PreToolUse", exited(0, '{"hookSpecificOutput":{"permissionDecision":"yes"}}')),
    /permissionDecision "yes" \(expected allow, deny or ask\)/,
  );
  assert.match(cause("PreToolUse", exited(0, '{"continue":"no"}')), /continue "no", not true/);
  assert.match(
    cause("PreToolUse", exited(0, '{"hookSpecificOutput":{"updatedInput":[1]}}')),
    /updatedInput \[1\], not an object/,
  );
  assert.match(
    cause("PreToolUse", exited(0, '{"hookSpecificOutput":{"hookEventName":"Stop"}}')),
    /is for "Stop" .* not PreToolUse/,
  );
  assert.match(
    cause("PreToolUse", {
      kind: "not_started",
      program: "/x/hook",
      error: new Deno.errors.NotFound("no"),
      durationMs: 0,
    }),
    /'\/x\/hook' was not found/,
  );
});
