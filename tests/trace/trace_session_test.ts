/**
 * Turning the wire trace on (docs/trace.md) as a person does: `/trace` in the interactive
 * client (on, show, off mid-session, in a real terminal), and the three ways a session is
 * told to record one (`--trace`, `PATCHBAY_TRACE`, `Trace.file`), each through `deno task
 * start`, whose permission plan must grant the file chosen.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { parseTrace } from "../../lib/trace/timeline.ts";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { everythingEntry, NODE } from "../support/deps.ts";
import { replConfig, startRepl } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";

Deno.test("/trace records mid-session, /trace show prints the last messages, /trace stops it", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, replConfig(box, llm));
  await using repl = await startRepl(box);

  assert.match(await repl.send("/trace show", "No wire trace"), /\/trace starts one/);
  const on = await repl.send("/trace", "/trace again stops it");
  const file = /Recording the wire trace in (\S+\.jsonl)/.exec(on)?.[1];
  assert.ok(file, on);
  assert.ok(file.startsWith(join(box.home, ".local/state/patchbay/traces/")), file);

  await repl.send('/call everything.echo {"message": "traced in the repl"}', "Echo: traced");
  const shown = await repl.send("/trace show everything 2", /trace file \S+/);
  assert.match(shown, /everything\s+→\s+tools\/call #\d+/);
  assert.match(shown, /everything\s+←\s+tools\/call #\d+ result\s+[\d.]+ ms/);
  assert.doesNotMatch(shown, /filesystem/);
  assert.match(await repl.send("/trace show nosuch", "Unknown server"), /nosuch/);

  const off = await repl.send("/trace", "Wire trace off");
  assert.match(off, /Wire trace off \(\d+ lines in .*\.jsonl\)/);
  await repl.send('/call everything.echo {"message": "not traced"}', "Echo: not traced");

  const text = await Deno.readTextFile(file);
  assert.match(text, /traced in the repl/);
  assert.doesNotMatch(text, /not traced/, "nothing is recorded once the trace is off");
  assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
  const events = parseTrace(text).lines.filter((l) => l.kind === "event" && l.event === "trace");
  assert.deepEqual(events.map((l) => l.kind === "event" && l.state), ["started", "stopped"]);
});

Deno.test("--trace wins over PATCHBAY_TRACE, which wins over Trace.file; each is granted", async () => {
  await using box = await sandbox();
  const everything = { command: NODE, args: [everythingEntry(), "stdio"] };
  await writeConfig(box, configWith({ everything }, { Trace: { file: "from-config.jsonl" } }));
  const fromConfig = join(box.cwd, "from-config.jsonl");
  const fromEnv = join(box.cwd, "from-env.jsonl");
  const fromFlag = join(box.cwd, "from-flag.jsonl");
  const hasToolsList = async (path: string) =>
    parseTrace(await Deno.readTextFile(path)).lines.some((l) =>
      l.kind === "message" && l.method === "tools/list" && l.dir === "in"
    );

  const config = await runPatchbay(box, ["tools"]);
  assert.equal(config.code, 0, config.stderr);
  assert.match(config.stderr, /Recording the wire trace in .*from-config\.jsonl \(Trace\.file\)/);
  assert.ok(await hasToolsList(fromConfig));

  const env = await runPatchbay(box, ["tools"], { env: { PATCHBAY_TRACE: "from-env.jsonl" } });
  assert.equal(env.code, 0, env.stderr);
  assert.match(env.stderr, /from-env\.jsonl \(PATCHBAY_TRACE\)/);
  assert.ok(await hasToolsList(fromEnv));

  const flag = await runPatchbay(box, ["--trace", "from-flag.jsonl", "tools"], {
    env: { PATCHBAY_TRACE: "from-env.jsonl" },
  });
  assert.equal(flag.code, 0, flag.stderr);
  assert.match(flag.stderr, /from-flag\.jsonl \(--trace\)/);
  assert.ok(await hasToolsList(fromFlag));

  // The plan names the file and why.
  const plan = await runPatchbay(box, ["--trace", "from-flag.jsonl", "permissions", "--json"]);
  const grants = JSON.parse(plan.stdout).grants as { kind: string; value: string; why: string }[];
  assert.ok(
    grants.some((g) => g.kind === "write" && g.value === fromFlag && /wire trace/.test(g.why)),
    JSON.stringify(grants.filter((g) => g.kind === "write")),
  );
});

Deno.test("a trace file patchbay may not write is named, with the remedy, and the session goes on", async () => {
  await using box = await sandbox();
  const everything = { command: NODE, args: [everythingEntry(), "stdio"] };
  await writeConfig(box, configWith({ everything }));
  const blocked = join(box.cwd, "no-such-folder", "deeper", "t.jsonl");
  const run = await runPatchbay(box, ["tools"], { env: { PATCHBAY_TRACE: blocked } });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stderr, /Cannot write the trace file .*t\.jsonl \(PATCHBAY_TRACE/);
  assert.match(run.stderr, /its folder .*deeper does not exist; the session goes on without/);
  assert.match(run.stdout, /echo/);
});

Deno.test("--trace-model adds one line per model request: model, tokens, latency, no bodies", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm({
    replies: [{ text: "Four, secretly." }, { text: "ok" }],
  });
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: {},
  });
  const file = join(box.cwd, "model.jsonl");
  const run = await runPatchbay(box, ["--trace", file, "--trace-model", "run", "what is 2+2?"]);
  assert.equal(run.code, 0, run.stderr);
  const models = parseTrace(await Deno.readTextFile(file)).lines.filter((l) => l.kind === "model");
  assert.equal(models.length, 1);
  const [line] = models;
  assert.equal(line.method, "chat/completions");
  assert.equal(line.model, "scripted-model");
  assert.equal(typeof line.ms, "number");
  assert.equal(typeof line.prompt_tokens, "number");
  assert.equal(typeof line.total_tokens, "number");
  assert.equal(line.request, undefined, "no bodies unless Trace.model_bodies asks");
  assert.doesNotMatch(await Deno.readTextFile(file), /what is 2\+2|secretly/);
  const shown = await runPatchbay(box, ["trace", "show", file]);
  assert.match(shown.stdout, /model\s+⇢\s+method=chat\/completions .*model=scripted-model/);

  // Without the flag, no model line.
  const plain = join(box.cwd, "plain.jsonl");
  assert.equal((await runPatchbay(box, ["--trace", plain, "run", "again"])).code, 0);
  assert.ok(!parseTrace(await Deno.readTextFile(plain)).lines.some((l) => l.kind === "model"));
});
