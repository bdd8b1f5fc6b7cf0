/**
 * Where a wire trace may be written (docs/trace.md), through `deno task start`, on the
 * hostile paths of `tests/fixtures/hostile_trace_paths.ts`: a link, a named pipe, a device
 * and a folder are refused with the cause and the remedy, nothing is written or chmodded
 * through them and nothing waits on them; a full disk stops the recording with one notice,
 * and the command goes on.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { bounded } from "../support/bounded.ts";
import { configWith, runCommand, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { DENO, everythingEntry, NODE } from "../support/deps.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import {
  canMountFullDisk,
  hostileTracePaths,
  onFullDisk,
} from "../fixtures/hostile_trace_paths.ts";

const DENO_JSON = new URL("../../deno.json", import.meta.url).pathname;
const everything = { command: NODE, args: [everythingEntry(), "stdio"] };

Deno.test("a trace path that is a link, a pipe, a device or a folder is refused, and the command goes on", async () => {
  await using box = await sandbox();
  await writeConfig(box, configWith({ everything }));
  const paths = await hostileTracePaths(box.cwd);
  const cases = [
    { path: paths.link, kind: /it is a symbolic link to .*notes\.txt, .*never through a link/ },
    { path: paths.fifo, kind: /it is a named pipe \(FIFO\)/ },
    { path: paths.device, kind: /it is a device or system file Deno guards/ },
    { path: paths.folder, kind: /it is a folder/ },
  ];
  for (const { path, kind } of cases) {
    const run = await bounded(
      runPatchbay(box, ["--trace", path, "tools"]),
      `patchbay --trace ${path} tools to end`,
      undefined,
      // A writer stuck opening the pipe is let through by a reader, so nothing is left.
      () => void Deno.open(paths.fifo, { read: true }).then((f) => f.close(), () => {}),
    );
    assert.equal(run.code, 0, run.stderr);
    const notice = new RegExp(
      `Cannot write the trace file ${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\(--trace\\)`,
    );
    assert.match(run.stderr, notice);
    assert.match(run.stderr, kind);
    assert.match(run.stderr, /the session goes on without a trace\. Name a regular file/);
    assert.doesNotMatch(run.stderr, /--allow-all=|add --allow/, "no flag is the remedy");
    assert.match(run.stdout, /echo/, "the command went on");
  }
  // Read back, a pipe is refused too: it would never end.
  const show = await bounded(
    runPatchbay(box, ["trace", "show", paths.fifo]),
    "trace show of a pipe to end",
    undefined,
    () => void Deno.open(paths.fifo, { write: true }).then((f) => f.close(), () => {}),
  );
  assert.equal(show.code, 1, show.stderr);
  assert.match(show.stderr, /Refusing to read the trace file .*pipe\.jsonl/);
  assert.match(show.stderr, /it is a named pipe \(FIFO\)/);
  assert.match(show.stderr, /patchbay reads only regular files/);

  // Neither written nor chmodded through the link.
  assert.equal(await Deno.readTextFile(paths.victim), paths.victimText);
  assert.equal((await Deno.stat(paths.victim)).mode! & 0o777, 0o644);
  assert.ok((await Deno.lstat(paths.link)).isSymlink);
});

Deno.test({
  name:
    "a full disk stops the trace with one notice naming the cause and the remedy; the command goes on",
  ignore: !(await canMountFullDisk()),
  async fn() {
    await using llm = await startScriptedLlm({ fallback: () => ({ text: "answered" }) });
    await using box = await sandbox({ LLM_API_KEY: "test-key" });
    await writeConfig(box, {
      ...configWith({ everything }),
      LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    });
    const full = join(box.home, "full");
    await Deno.mkdir(full);
    const trace = join(full, "trace.jsonl");
    const start = (args: string[]) =>
      runCommand(
        ...onFullDisk(full, DENO, ["task", "--quiet", "--config", DENO_JSON, "start", ...args]),
        { cwd: box.cwd, env: box.env },
      );
    const stopped =
      "Writing the trace file .*trace\\.jsonl \\(--trace\\) stopped: the disk is full";
    const once = new RegExp(stopped, "g");

    const tools = await start(["--trace", trace, "tools"]);
    assert.equal(tools.code, 0, tools.stderr);
    assert.match(tools.stdout, /echo/, "the command went on");
    assert.equal(tools.stderr.match(once)?.length, 1, `reported once:\n${tools.stderr}`);
    assert.match(
      tools.stderr,
      /recording has stopped and the session goes on; .*Free some space, or record elsewhere/,
    );

    const run = await start(["--trace", trace, "run", "--json", "hello"]);
    assert.equal(run.code, 0, run.stderr);
    const events = run.stdout.trim().split("\n").map((line) => JSON.parse(line));
    const warnings = events.filter((e) =>
      e.type === "notice" && e.level === "warning" && new RegExp(stopped).test(e.text ?? "")
    );
    assert.equal(warnings.length, 1, run.stdout);
    assert.ok(events.some((e) => e.type === "done" && e.text === "answered"));
  },
});
