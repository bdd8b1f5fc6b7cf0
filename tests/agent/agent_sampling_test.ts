/**
 * MCP sampling from server-everything's trigger-sampling-request tool, wired as the client
 * wires it: the model session's sampling handler given to the connection manager before
 * the server connects. The server's `sampling/createMessage` goes through the user's
 * approval to the same provider seam, with its own accounting; refusals reach the server
 * as errors.
 */

import assert from "node:assert/strict";
import { SamplingRejectedError } from "../../lib/errors.ts";
import { scriptedConfig, wireSession } from "../support/agent_fixtures.ts";
import { everythingEntry, NODE } from "../support/deps.ts";
import { reportedUsage, startScriptedLlm } from "../support/scripted_llm.ts";
import { ScriptedUi } from "../support/scripted_ui.ts";

const SAMPLE = "everything__trigger-sampling-request";

/** A trusted server-everything whose entry has `sampling`, and the session around it. */
function session(baseUrl: string, sampling: "ask" | "allow" | "deny", ui = new ScriptedUi()) {
  const config = scriptedConfig(baseUrl, {
    mcpServers: {
      everything: { command: NODE, args: [everythingEntry(), "stdio"], trusted: true, sampling },
    },
  });
  return wireSession(config, ui);
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
  await using s = await session(llm.baseUrl, "ask");
  const result = await s.agent.runTurn("Sample a colour");

  assert.equal(result.text, "The server's model said blue.");
  // The user was asked, and shown what the server wants to send.
  const asked = s.ui.ofType("approveSampling");
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

  const end = s.ui.ofType("samplingEnd")[0].end;
  assert.equal(end.status, "ok");
  assert.equal(end.preview, "Blue.");
  assert.deepEqual(end.usage, reportedUsage(30, 2));

  // The tool's result carries the sampled answer back to the chat.
  assert.match(s.stored[2].content!, /LLM sampling result:[\s\S]*"text": "Blue\."/);

  const snapshot = s.model.stats.snapshot();
  assert.equal(snapshot.chat.requests, 2);
  assert.equal(snapshot.sampling.requests, 1);
  assert.equal(snapshot.sampling.totalTokens, 32);
  assert.equal(snapshot.samplingByServer.everything.requests, 1);
  assert.equal(snapshot.session.totalTokens, 520 + 32 + 609);
  const text = s.model.formatStats();
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
  await using s = await session(llm.baseUrl, "ask", new ScriptedUi({ samplingApprovals: [false] }));
  await s.agent.runTurn("Sample");

  const end = s.ui.ofType("samplingEnd")[0].end;
  assert.equal(end.status, "denied");
  assert.ok(end.error instanceof SamplingRejectedError);
  assert.equal(end.error.message, "Sampling request from server 'everything' rejected");
  assert.match(end.error.remedy, /"sampling": "allow"/);
  // The server was told it was refused and why (MCP's code for a rejection, -1), and its
  // tool passed that on to the model.
  assert.equal(s.stored[2].isError, true);
  assert.equal(
    s.stored[2].content,
    "Tool execution failed: everything/trigger-sampling-request: MCP error -1: patchbay " +
      "refused the sampling request: you declined it",
  );
  assert.equal(llm.requests.length, 2, "no model request was made for the server");
  assert.equal(s.model.stats.snapshot().sampling.requests, 0);
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
  {
    await using s = await session(llm.baseUrl, "deny");
    await s.agent.runTurn("Sample (deny)");
    assert.equal(s.ui.ofType("approveSampling").length, 0, "deny: nobody was asked");
    // Refused by the connection before any handler runs: the model is not involved.
    assert.equal(s.ui.ofType("samplingEnd").length, 0);
    assert.equal(llm.requests.length, 2, "no model request was made for the server");
    assert.equal(
      s.stored[2].content,
      "Tool execution failed: everything/trigger-sampling-request: MCP error -1: patchbay " +
        `refused the sampling request: the entry for server 'everything' has "sampling": "deny"`,
    );
  }
  {
    await using s = await session(llm.baseUrl, "allow");
    await s.agent.runTurn("Sample (allow)");
    assert.equal(s.ui.ofType("approveSampling").length, 0, "allow: nobody was asked");
    assert.equal(s.ui.ofType("samplingEnd")[0].end.status, "ok");
    assert.match(s.stored[2].content!, /LLM sampling result:[\s\S]*"text": "sampled"/);
    assert.equal(s.model.stats.snapshot().sampling.requests, 1);
  }
  assert.equal(llm.pending, 0);
});
