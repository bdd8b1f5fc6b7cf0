/**
 * `patchbay run` when configured servers fail, through the real entry point: a script can
 * tell an answer given without any server (exit 3, `servers_failed` in `--json`), and
 * `--require-servers` makes any failed server fatal before the model is asked.
 */

import assert from "node:assert/strict";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { everythingEntry, NODE } from "../support/deps.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import type { ScriptedLlm } from "../support/scripted_llm.ts";

const BROKEN = { command: "patchbay-no-such-command" };

function config(llm: ScriptedLlm, servers: Record<string, unknown>) {
  return {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: servers,
  };
}

Deno.test("run: every server failed, the model answered without tools: exit 3", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm({ replies: [{ text: "Hi." }, { text: "Hi." }] });
  await writeConfig(box, config(llm, { broken: BROKEN }));
  const text = await runPatchbay(box, ["run", "hello"]);
  assert.equal(text.code, 3, text.stderr);
  assert.equal(text.stdout, "Hi.\n");
  assert.match(text.stderr, /Failed to connect to server 'broken'/);
  assert.match(
    text.stderr,
    /answered without tools: no configured server connected \(exit code 3\)/,
  );
  const json = await runPatchbay(box, ["run", "--json", "hello"]);
  assert.equal(json.code, 3, json.stderr);
  const events = json.stdout.trim().split("\n").map((line) => JSON.parse(line));
  const server = events.find((e) => e.type === "server");
  assert.equal(server.state, "failed");
  assert.match(server.error.message, /Failed to connect to server 'broken'/);
  assert.deepEqual(events.at(-1).servers_failed, ["broken"]);
});

Deno.test("run: one server of two failed answers with exit 0; --require-servers stops first", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm({ replies: [{ text: "Hi." }] });
  await writeConfig(
    box,
    config(llm, {
      everything: { command: NODE, args: [everythingEntry(), "stdio"] },
      broken: BROKEN,
    }),
  );
  const partly = await runPatchbay(box, ["run", "hello"]);
  assert.equal(partly.code, 0, partly.stderr);
  assert.equal(llm.requests.length, 1);
  const strict = await runPatchbay(box, ["run", "--require-servers", "hello"]);
  assert.equal(strict.code, 3, strict.stderr);
  assert.match(strict.stderr, /error: Required servers failed: 'broken'/);
  assert.match(strict.stderr, /without --require-servers/);
  assert.equal(llm.requests.length, 1, "the model was asked although a server failed");
  const strictJson = await runPatchbay(box, ["run", "--json", "--require-servers", "hello"]);
  assert.equal(strictJson.code, 3, strictJson.stderr);
  const last = JSON.parse(strictJson.stdout.trim().split("\n").at(-1)!);
  assert.equal(last.type, "error");
  assert.match(last.error.message, /Required servers failed: 'broken'/);
});
