/**
 * A Claude session through Anthropic's own Messages API, as a person runs it: `deno task
 * start run` and the interactive client in tmux, with `provider: "anthropic"` pointed at the
 * scripted Messages endpoint on loopback (which refuses any request the real API would, and
 * keeps a prompt cache), and real server-everything over stdio. The cache reads reach the
 * person: `run --json`'s usage and estimated cost, the line after each answer, `/api_stats`.
 */

import assert from "node:assert/strict";
import { runPatchbay, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { startRepl } from "../support/repl.ts";
import { everythingEntry, NODE } from "../support/deps.ts";
import {
  type ScriptedMessagesServer,
  startScriptedMessages,
} from "../support/scripted_messages.ts";

function claudeConfig(api: ScriptedMessagesServer) {
  return {
    LLM: { provider: "anthropic", model: "claude-sonnet-4-5", base_url: api.baseUrl },
    mcpServers: {
      everything: { command: NODE, args: [everythingEntry(), "stdio"], trusted: true },
    },
  };
}

async function setUp(box: Sandbox, api: ScriptedMessagesServer): Promise<void> {
  await writeConfig(box, claudeConfig(api));
}

Deno.test("run with provider anthropic: the answer over the Messages API, cache reads and the estimated cost in --json", async () => {
  await using box = await sandbox({ LLM_API_KEY: "sk-ant-api03-test0123456789" });
  await using api = await startScriptedMessages({
    minCacheTokens: 256,
    replies: [
      { toolUses: [{ name: "everything__get-sum", input: { a: 19, b: 23 } }] },
      { text: "19 + 23 = 42." },
      { text: "Plain answer." },
    ],
  });
  await setUp(box, api);
  const result = await runPatchbay(box, ["run", "--json", "add 19 and 23"]);
  assert.equal(result.code, 0, result.stderr);
  const events = result.stdout.trim().split("\n").map((line) => JSON.parse(line));
  const done = events.at(-1);
  assert.equal(done.type, "done", result.stdout);
  assert.equal(done.text, "19 + 23 = 42.");
  assert.equal(done.steps, 2);
  for (const request of api.requests) {
    assert.deepEqual(request.problems, []);
    assert.equal(request.headers["x-api-key"], "sk-ant-api03-test0123456789");
  }
  // The second request read what the first wrote; the turn's usage says so.
  const [first, second] = api.requests.map((r) => r.usage!);
  assert.ok(first.cache_creation_input_tokens > 0);
  assert.equal(second.cache_read_input_tokens, first.cache_creation_input_tokens);
  assert.equal(done.usage.cache_read_tokens, second.cache_read_input_tokens);
  assert.equal(
    done.usage.cache_write_tokens,
    first.cache_creation_input_tokens + second.cache_creation_input_tokens,
  );
  assert.equal(
    done.usage.prompt_tokens,
    [first, second].reduce(
      (sum, u) => sum + u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens,
      0,
    ),
  );
  assert.equal(typeof done.estimated_cost_usd, "number");
  assert.ok(done.estimated_cost_usd > 0);
  const toolResult = events.find((e) => e.type === "tool_result");
  assert.match(toolResult.preview, /The sum of 19 and 23 is 42/);

  const plain = await runPatchbay(box, ["run", "say something"]);
  assert.equal(plain.code, 0, plain.stderr);
  assert.equal(plain.stdout, "Plain answer.\n");
});

Deno.test("the interactive client with provider anthropic: cache reads after each answer and in /api_stats", async () => {
  await using box = await sandbox();
  await using api = await startScriptedMessages({
    minCacheTokens: 256,
    replies: [
      { text: "First answer." },
      { toolUses: [{ name: "everything__echo", input: { message: "hi" } }] },
      { text: "Echoed hi." },
    ],
  });
  await setUp(box, api);
  await using repl = await startRepl(box);
  assert.match(await repl.tmux.screen(), /patchbay \d+\.\d+\.\d+ · anthropic\/claude-sonnet-4-5/);
  await repl.send("hello", /1 step · [\d,]+ tokens · /);
  const footer = await repl.send("echo hi", /2 steps · 1 tool call · [\d,]+ tokens/);
  assert.match(footer, /Echoed hi\./);
  assert.match(footer, /[\d,]+ tokens \([\d,]+ from cache\)/);
  const stats = await repl.send("/api_stats", "tool_call_timeout");
  assert.match(stats, /Requests: +3/);
  assert.match(stats, /from cache: +[\d,]+ read \(\d+%\), [\d,]+ written/);
  assert.match(stats, /Estimated cost: +\$[\d.]+ \(at list prices, an estimate\)/);
  assert.match(stats, /claude-sonnet-4-5: 3 requests, [\d,]+ prompt \([\d,]+ from cache\)/);
  for (const request of api.requests) assert.deepEqual(request.problems, []);
});
