/**
 * MCP sampling from server-everything's trigger-sampling-request tool: the server's
 * `sampling/createMessage` goes through the user's approval to the same provider seam,
 * with its own accounting; refusals reach the server as errors.
 */

import assert from "node:assert/strict";
import { formatStats } from "../lib/agent/stats.ts";
import { SamplingRejectedError } from "../lib/errors.ts";
import {
  buildAgent,
  buildSamplingHandler,
  everythingServer,
  testLimits,
} from "./support/agent_fixtures.ts";
import { startScriptedLlm } from "./support/scripted_llm.ts";
import { SdkToolHost } from "./support/sdk_tool_host.ts";
import { ScriptedUi } from "./support/scripted_ui.ts";
import { UsageStats } from "../lib/agent/stats.ts";
import { createOpenAiProvider } from "../lib/llm/openai_provider.ts";
import { createEnvironment } from "../lib/env.ts";
import { testLlm } from "./support/agent_fixtures.ts";

const SAMPLE = "everything_trigger-sampling-request";

/** The pieces shared by the agent and the sampling handler, as the REPL will share them. */
function shared(baseUrl: string, samplingApprovals?: boolean[]) {
  const limits = testLimits();
  const ui = new ScriptedUi({ samplingApprovals });
  const stats = new UsageStats(limits);
  const provider = createOpenAiProvider({ llm: testLlm(baseUrl), env: createEnvironment({}) });
  return { limits, ui, stats, provider };
}

Deno.test("a server's sampling request is approved, answered by the model and accounted", async () => {
  await using llm = await startScriptedLlm({
    replies: [
      {
        toolCalls: [{ name: SAMPLE, arguments: { prompt: "Name a colour", maxTokens: 50 } }],
        usage: { prompt_tokens: 500, completion_tokens: 20 },
      },
      { text: "Blue.", usage: { prompt_tokens: 30, completion_tokens: 2 } },
      {
        text: "The server's model said blue.",
        usage: { prompt_tokens: 600, completion_tokens: 9 },
      },
    ],
  });
  const parts = shared(llm.baseUrl);
  await using host = await SdkToolHost.start([everythingServer()], {
    sampling: buildSamplingHandler(parts, { everything: "ask" }, parts.limits),
  });
  using f = buildAgent({ baseUrl: llm.baseUrl, host, trusted: ["everything"], ...parts });
  const result = await f.agent.runTurn("Sample a colour");

  assert.equal(result.text, "The server's model said blue.");
  // The user was asked, and shown what the server wants to send.
  const asked = f.ui.ofType("approveSampling");
  assert.equal(asked.length, 1);
  assert.equal(asked[0].request.server, "everything");
  assert.equal(asked[0].request.systemPrompt, "You are a helpful test server.");
  assert.deepEqual(asked[0].request.messages, [{
    role: "user",
    text: "Resource trigger-sampling-request context: Name a colour",
  }]);
  assert.equal(asked[0].request.maxTokens, 50);
  assert.equal(asked[0].request.model, "scripted-model");

  // The sampling request went to the same model, not streamed, within the server's cap.
  const sampling = llm.requests[1].body;
  assert.equal(sampling.stream, false);
  assert.equal(sampling.max_tokens, 50);
  assert.equal(sampling.temperature, 0.7);
  assert.deepEqual(sampling.messages[0], {
    role: "system",
    content: "You are a helpful test server.",
  });

  const end = f.ui.ofType("samplingEnd")[0].end;
  assert.equal(end.status, "ok");
  assert.equal(end.preview, "Blue.");
  assert.deepEqual(end.usage, {
    promptTokens: 30,
    completionTokens: 2,
    totalTokens: 32,
    estimated: false,
  });

  // The tool's result carries the sampled answer back to the chat.
  assert.match(f.stored[2].content!, /LLM sampling result:[\s\S]*"text": "Blue\."/);

  const snapshot = f.stats.snapshot();
  assert.equal(snapshot.chat.requests, 2);
  assert.equal(snapshot.sampling.requests, 1);
  assert.equal(snapshot.sampling.totalTokens, 32);
  assert.equal(snapshot.samplingByServer.everything.requests, 1);
  assert.equal(snapshot.session.totalTokens, 520 + 32 + 609);
  const text = formatStats(snapshot);
  assert.match(text, /Requests: {10}3 \(chat 2, sampling 1\)/);
  assert.match(
    text,
    /Sampling \(model requests made for servers\)\n {2}everything: 1 request, 32 tokens/,
  );
});

Deno.test("a declined sampling request reaches the server as a rejection", async () => {
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: SAMPLE, arguments: { prompt: "Anything" } }] },
      { text: "The server could not sample." },
    ],
  });
  const parts = shared(llm.baseUrl, [false]);
  await using host = await SdkToolHost.start([everythingServer()], {
    sampling: buildSamplingHandler(parts, { everything: "ask" }, parts.limits),
  });
  using f = buildAgent({ baseUrl: llm.baseUrl, host, trusted: ["everything"], ...parts });
  await f.agent.runTurn("Sample");

  const end = f.ui.ofType("samplingEnd")[0].end;
  assert.equal(end.status, "denied");
  assert.ok(end.error instanceof SamplingRejectedError);
  assert.equal(end.error.message, "Sampling request from server 'everything' rejected");
  assert.match(end.error.remedy, /"sampling": "allow"/);
  assert.equal(f.stored[2].isError, true);
  assert.match(f.stored[2].content!, /rejected/);
  assert.equal(llm.requests.length, 2, "no model request was made for the server");
  assert.equal(f.stats.snapshot().sampling.requests, 0);
});

Deno.test('"sampling": "deny" refuses without asking; "allow" answers without asking', async () => {
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: SAMPLE, arguments: { prompt: "one" } }] },
      { text: "Refused." },
      { toolCalls: [{ name: SAMPLE, arguments: { prompt: "two" } }] },
      { text: "sampled" },
      { text: "Allowed." },
    ],
  });
  for (const [setting, expected] of [["deny", "denied"], ["allow", "ok"]] as const) {
    const parts = shared(llm.baseUrl);
    await using host = await SdkToolHost.start([everythingServer()], {
      sampling: buildSamplingHandler(parts, { everything: setting }, parts.limits),
    });
    using f = buildAgent({ baseUrl: llm.baseUrl, host, trusted: ["everything"], ...parts });
    await f.agent.runTurn(`Sample (${setting})`);
    assert.equal(f.ui.ofType("approveSampling").length, 0, `${setting}: nobody was asked`);
    assert.equal(f.ui.ofType("samplingEnd")[0].end.status, expected);
  }
  assert.equal(llm.pending, 0);
});
