/**
 * What the agent sends, request after request, is cacheable by the provider: through the
 * OpenAI-compatible API every request of a turn and of the next turn repeats the same tools
 * and system prompt bytes and the whole conversation before it (OpenAI, DeepSeek and Gemini
 * cache identical prefixes on their own), and tool search only ever adds tools at the end;
 * through Anthropic's Messages API (the scripted endpoint holds every request to the API's
 * rules and keeps a prompt cache) each request reads back what the one before it wrote, and
 * the reads reach the statistics, `/api_stats` and the estimated cost. Real server-everything
 * over stdio answers the tool calls.
 */

import assert from "node:assert/strict";
import { formatStats } from "../../lib/agent/stats.ts";
import { createEnvironment } from "../../lib/env.ts";
import { createProvider } from "../../lib/llm/create_provider.ts";
import {
  buildAgent,
  connectServers,
  scriptedConfig,
  testLlm,
  wireSession,
} from "../support/agent_fixtures.ts";
import { everythingEntry, NODE } from "../support/deps.ts";
import { API_MAX_BREAKPOINTS } from "../support/messages_checks.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { startScriptedMessages } from "../support/scripted_messages.ts";
import { everythingStdio } from "../support/servers.ts";

Deno.test("OpenAI-compatible path: the same tools and system prompt bytes in every request of a turn and across turns", async () => {
  await using host = await connectServers([everythingStdio()]);
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: "everything__echo", arguments: { message: "one" } }] },
      { text: "Echoed one." },
      { toolCalls: [{ name: "everything__get-sum", arguments: { a: 2, b: 3 } }] },
      {
        text: "The sum is 5.",
        usage: {
          prompt_tokens: 900,
          completion_tokens: 8,
          prompt_tokens_details: { cached_tokens: 768 },
        },
      },
    ],
  });
  using f = buildAgent({ baseUrl: llm.baseUrl, host, trusted: ["everything"] });
  await f.agent.runTurn("Echo one");
  await f.agent.runTurn("Add 2 and 3");

  const bodies = llm.requests.map((r) => r.body);
  assert.equal(bodies.length, 4);
  const tools = JSON.stringify(bodies[0].tools);
  const system = JSON.stringify(bodies[0].messages[0]);
  assert.ok(bodies[0].tools.length > 5, "server-everything's tools are offered");
  for (const [i, body] of bodies.entries()) {
    assert.equal(JSON.stringify(body.tools), tools, `request ${i + 1}'s tools`);
    assert.equal(JSON.stringify(body.messages[0]), system, `request ${i + 1}'s system prompt`);
    if (i === 0) continue;
    // Everything the previous request sent comes first, byte for byte.
    const before = bodies[i - 1].messages;
    assert.equal(
      JSON.stringify(body.messages.slice(0, before.length)),
      JSON.stringify(before),
      `request ${i + 1} repeats request ${i}'s messages as its prefix`,
    );
  }
  // The provider's own count of cached prompt tokens reaches the statistics.
  const session = f.stats.snapshot().session;
  assert.equal(session.cacheReadTokens, 768);
  assert.match(formatStats(f.stats.snapshot()), /from cache: {6}768 read \(\d+%\)/);
});

Deno.test("OpenAI-compatible path: tool search adds the tools it loads after the ones offered before", async () => {
  await using host = await connectServers([everythingStdio()]);
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: "find_tools", arguments: { query: "echo" } }] },
      { toolCalls: [{ name: "find_tools", arguments: { query: "sum of two numbers" } }] },
      { toolCalls: [{ name: "everything__get-sum", arguments: { a: 1, b: 1 } }] },
      { text: "2" },
    ],
  });
  using f = buildAgent({
    baseUrl: llm.baseUrl,
    host,
    trusted: ["everything"],
    limits: { toolSearch: { mode: "always", maxTools: 1, maxTokens: 1 } },
  });
  await f.agent.runTurn("Echo, then add");
  const lists = llm.requests.map((r) => (r.body.tools as { function: { name: string } }[]));
  assert.equal(lists.length, 4);
  for (let i = 1; i < lists.length; i++) {
    assert.ok(lists[i].length >= lists[i - 1].length);
    assert.equal(
      JSON.stringify(lists[i].slice(0, lists[i - 1].length)),
      JSON.stringify(lists[i - 1]),
      `request ${i + 1} keeps request ${i}'s tools first`,
    );
  }
  const names = lists[3].map((t) => t.function.name);
  assert.equal(names[0], "find_tools");
  assert.ok(names.indexOf("everything__get-sum") > names.indexOf("everything__echo"));
});

Deno.test("Anthropic's Messages API: a session of two turns with tool calls reads the cache on every request after the first", async () => {
  await using host = await connectServers([everythingStdio()]);
  await using api = await startScriptedMessages({
    minCacheTokens: 256,
    replies: [
      { text: "Echoing.", toolUses: [{ name: "everything__echo", input: { message: "one" } }] },
      { text: "Echoed one." },
      { toolUses: [{ name: "everything__get-sum", input: { a: 2, b: 3 } }] },
      { text: "The sum is 5." },
    ],
  });
  const llm = testLlm(api.baseUrl, { provider: "anthropic", model: "claude-sonnet-4-5" });
  const provider = createProvider({
    llm,
    env: createEnvironment({ LLM_API_KEY: "test-key" }),
    random: () => 0,
  });
  using f = buildAgent({
    baseUrl: api.baseUrl,
    host,
    trusted: ["everything"],
    llm,
    provider,
  });
  const first = await f.agent.runTurn("Echo one");
  const second = await f.agent.runTurn("Add 2 and 3");
  assert.equal(first.text, "Echoed one.");
  assert.equal(second.text, "The sum is 5.");

  assert.equal(api.requests.length, 4);
  for (const [i, request] of api.requests.entries()) {
    assert.deepEqual(request.problems, [], `request ${i + 1} follows the API's rules`);
    const marked = JSON.stringify(request.body).split('"cache_control"').length - 1;
    assert.ok(marked >= 3 && marked <= API_MAX_BREAKPOINTS, `request ${i + 1}: ${marked} markers`);
    if (i === 0) continue;
    const previous = api.requests[i - 1].usage!;
    assert.equal(
      request.usage!.cache_read_input_tokens,
      previous.cache_read_input_tokens + previous.cache_creation_input_tokens,
      `request ${i + 1} reads all that request ${i} read or wrote`,
    );
  }
  // The tool result went back as the API wants it, after the call, in a user message.
  const results = api.requests[1].body.messages[2].content;
  assert.equal(results[0].type, "tool_result");
  assert.match(results[0].content, /Echo: one/);

  const stats = f.stats.snapshot();
  const read = api.requests.reduce((sum, r) => sum + r.usage!.cache_read_input_tokens, 0);
  const written = api.requests.reduce((sum, r) => sum + r.usage!.cache_creation_input_tokens, 0);
  assert.equal(stats.session.cacheReadTokens, read);
  assert.equal(stats.session.cacheWriteTokens, written);
  assert.equal((second.usage.cacheReadTokens ?? 0) > 0, true, "the turn's usage has its reads");
  assert.deepEqual(stats.cost.priced, ["claude-sonnet-4-5"]);
  const text = formatStats(stats);
  assert.match(text, /from cache: +[\d,]+ read \(\d+%\), [\d,]+ written/);
  assert.match(text, /Estimated cost: +\$[\d.]+ \(at list prices, an estimate\)/);
  assert.match(text, /claude-sonnet-4-5: 4 requests, [\d,]+ prompt \([\d,]+ from cache\)/);
});

Deno.test("Anthropic's Messages API: a server's sampling request goes through the same provider, whole", async () => {
  await using api = await startScriptedMessages({
    replies: [
      {
        toolUses: [{
          name: "everything__trigger-sampling-request",
          input: { prompt: "Name a colour", maxTokens: 50 },
        }],
      },
      { text: "Blue.", outputTokens: 2 },
      { text: "The server's model said blue." },
    ],
  });
  const config = scriptedConfig(api.baseUrl, {
    LLM: { provider: "anthropic", model: "claude-sonnet-4-5", base_url: api.baseUrl },
    mcpServers: {
      everything: {
        command: NODE,
        args: [everythingEntry(), "stdio"],
        trusted: true,
        sampling: "allow",
      },
    },
  });
  await using s = await wireSession(
    config,
    undefined,
    createEnvironment({ LLM_API_KEY: "test-key" }),
  );
  const result = await s.agent.runTurn("Sample a colour");
  assert.equal(result.text, "The server's model said blue.");
  for (const request of api.requests) assert.deepEqual(request.problems, []);
  const sampling = api.requests[1].body;
  assert.equal(sampling.stream, false);
  assert.equal(sampling.max_tokens, 50);
  assert.equal(sampling.system[0].text, "You are a helpful test server.");
  assert.match(sampling.messages[0].content[0].text, /Name a colour/);
  assert.equal(sampling.tools, undefined);
  assert.match(s.stored[2].content!, /LLM sampling result:[\s\S]*"text": "Blue\."/);
  const snapshot = s.model.stats.snapshot();
  assert.equal(snapshot.sampling.requests, 1);
  assert.equal(snapshot.sampling.completionTokens, 2);
});
