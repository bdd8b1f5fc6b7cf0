/**
 * One hook's run (lib/hooks/run_command.ts) with real sh scripts: the input on stdin, the
 * folder and the minimal environment it runs with, and every way it is bounded: its
 * timeout (the whole process group ended), a flood of output, what it leaves running after
 * it exits, a program that cannot start, the session's signal.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { type HookRun, runHookCommand } from "../../lib/hooks/run_command.ts";
import type { HookCommand } from "../../lib/hooks/types.ts";
import { bounded } from "../support/bounded.ts";
import { tempDir } from "../support/temp_dir.ts";

/** Writes an executable sh script into `folder` (the hooks below are real processes). */
async function script(folder: string, name: string, body: string): Promise<string> {
  const path = join(folder, name);
  await Deno.writeTextFile(path, `#!/bin/sh\n${body}\n`);
  await Deno.chmod(path, 0o755);
  const syntax = await new Deno.Command("sh", { args: ["-n", path], stderr: "piped" }).output();
  assert.ok(syntax.success, `${name}: ${new TextDecoder().decode(syntax.stderr)}`);
  return `./${name}`;
}

function hook(folder: string, command: string, extra: Partial<HookCommand> = {}): HookCommand {
  return { command, timeoutSeconds: 60, env: {}, folder, source: "test", ...extra };
}

/** The parent's variables: a secret besides the ones every hook gets. */
const parentEnv = (name: string) =>
  ({ PATH: Deno.env.get("PATH"), HOME: "/home/someone", LLM_API_KEY: "sk-secret" })[
    name as "PATH"
  ];

/** Whether process `pid` is still alive (not gone, not a zombie). */
function alive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return !stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return false;
  }
}

Deno.test("a hook reads its input on stdin, in its folder, with the minimal environment and its env", async () => {
  await using dir = await tempDir();
  const command = await script(
    dir.path,
    "show.sh",
    'input=$(cat)\nprintf \'{"input":%s,"pwd":"%s","home":"%s","project":"%s","key":"%s","extra":"%s"}\' ' +
      '"$input" "$(pwd)" "$HOME" "$CLAUDE_PROJECT_DIR" "$LLM_API_KEY" "$EXTRA"',
  );
  const run = await runHookCommand(
    hook(dir.path, command, { env: { EXTRA: "given" } }),
    { tool_input: { message: "hi" } },
    { parentEnv },
  );
  assert.equal(run.kind, "exited", JSON.stringify(run));
  const seen = JSON.parse((run as Extract<HookRun, { kind: "exited" }>).stdout);
  assert.deepEqual(seen, {
    input: { tool_input: { message: "hi" } },
    pwd: await Deno.realPath(dir.path),
    home: "/home/someone",
    project: dir.path,
    key: "",
    extra: "given",
  });
});

Deno.test("a hook past its timeout is ended with everything it started", async () => {
  await using dir = await tempDir();
  const command = await script(dir.path, "hang.sh", "sleep 600 &\necho $! > child.pid\nsleep 600");
  const run = await bounded(
    runHookCommand(hook(dir.path, command, { timeoutSeconds: 1 }), {}, { parentEnv }),
    "the hook's timeout",
  );
  assert.equal(run.kind, "timed_out");
  const child = Number(await Deno.readTextFile(join(dir.path, "child.pid")));
  assert.ok(!alive(child), `the hook's background process ${child} outlived it`);
});

Deno.test("a hook that exits but leaves something holding its output is not waited for", async () => {
  await using dir = await tempDir();
  const command = await script(
    dir.path,
    "leave.sh",
    'cat >/dev/null\nsleep 600 &\necho $! > child.pid\necho \'{"decision":"approve"}\'',
  );
  const run = await bounded(
    runHookCommand(hook(dir.path, command), {}, { parentEnv }),
    "a hook whose background process holds its stdout",
  );
  assert.equal(run.kind, "exited");
  assert.equal(
    (run as Extract<HookRun, { kind: "exited" }>).stdout.trim(),
    '{"decision":"approve"}',
  );
  const child = Number(await Deno.readTextFile(join(dir.path, "child.pid")));
  assert.ok(!alive(child), `the hook's background process ${child} was left running`);
});

Deno.test("a hook that floods stdout or stderr is ended", async () => {
  await using dir = await tempDir();
  for (const [stream, body] of [["stdout", "yes"], ["stderr", "yes >&2"]] as const) {
    const command = await script(dir.path, `flood_${stream}.sh`, body);
    const run = await bounded(
      runHookCommand(hook(dir.path, command), {}, { parentEnv }),
      `a hook flooding ${stream}`,
    );
    assert.equal(run.kind, "flooded", JSON.stringify(run).slice(0, 200));
    assert.equal((run as Extract<HookRun, { kind: "flooded" }>).stream, stream);
  }
});

Deno.test("a hook that cannot start, and one the session's signal ends", async () => {
  await using dir = await tempDir();
  const missing = await runHookCommand(hook(dir.path, "./nowhere.sh"), {}, { parentEnv });
  assert.equal(missing.kind, "not_started");
  assert.ok((missing as { error: unknown }).error instanceof Deno.errors.NotFound);
  await Deno.writeTextFile(join(dir.path, "plain.sh"), "exit 0\n");
  const plain = await runHookCommand(hook(dir.path, "./plain.sh"), {}, { parentEnv });
  assert.equal(plain.kind, "not_started");
  assert.ok((plain as { error: unknown }).error instanceof Deno.errors.PermissionDenied);

  const command = await script(dir.path, "slow.sh", "sleep 600");
  const controller = new AbortController();
  const running = runHookCommand(hook(dir.path, command), {}, {
    parentEnv,
    signal: controller.signal,
  });
  setTimeout(() => controller.abort(), 200);
  assert.equal((await bounded(running, "a cancelled hook")).kind, "cancelled");
});

Deno.test("a line with shell syntax runs with sh -c, in the hook's folder", async () => {
  await using dir = await tempDir();
  const run = await runHookCommand(
    hook(dir.path, 'cat > seen.json && echo "$PATCHBAY_PROJECT_DIR" >&2; exit 2'),
    { prompt: "hello" },
    { parentEnv },
  );
  assert.deepEqual(
    { ...run, durationMs: 0 },
    { kind: "exited", code: 2, stdout: "", stderr: `${dir.path}\n`, durationMs: 0 },
  );
  assert.deepEqual(JSON.parse(await Deno.readTextFile(join(dir.path, "seen.json"))), {
    prompt: "hello",
  });
});
