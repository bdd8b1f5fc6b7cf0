/**
 * Sampling with nobody watching: a server allowed to sample (`"sampling": "allow"`, or
 * `--yes`) is bounded per tool call and per session (`AgentConfig.sampling_per_tool_call`
 * and `sampling_request_limit`, docs/security-limits.md). A hostile fixture server asks
 * for dozens of model answers from one tool call and carries on after refusals; the
 * scripted model counts what reached it. Run through `deno task start`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  type RecordedRequest,
  type ScriptedReply,
  startScriptedLlm,
} from "../support/scripted_llm.ts";
import { runPatchbay, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { DENO } from "../support/deps.ts";
import { startRepl } from "../support/repl.ts";

const FLOOD = fileURLToPath(new URL("../fixtures/sampling_flood_server.ts", import.meta.url));

/**
 * The model: sampling requests (not streamed) get a short answer; the chat calls `flood`
 * `calls` times (one step each), then answers "Done.".
 */
function floodingModel(calls: number) {
  let made = 0;
  return (request: RecordedRequest): ScriptedReply => {
    const messages = request.body.messages as { role: string }[];
    const fromChat = messages.some((m) => m.role === "system") &&
      request.body.tools !== undefined;
    if (!fromChat) return { text: "sampled" };
    if (made < calls) {
      made++;
      return { toolCalls: [{ name: "flood__flood", arguments: { count: 40 } }] };
    }
    return { text: "Done." };
  };
}

async function floodConfig(box: Sandbox, baseUrl: string, agent: Record<string, unknown> = {}) {
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: baseUrl },
    mcpServers: {
      flood: {
        command: DENO,
        args: ["run", "--quiet", "--no-config", FLOOD],
        sampling: "allow",
        trusted: true,
      },
    },
    AgentConfig: agent,
  });
}

const samplingRequests = (requests: RecordedRequest[]) =>
  requests.filter((r) => r.body.tools === undefined).length;

/** The text of each tool result the model was sent, in order. */
function toolResults(requests: RecordedRequest[]): string[] {
  const last = requests.filter((r) => r.body.tools !== undefined).at(-1)!;
  return (last.body.messages as { role: string; content: string }[])
    .filter((m) => m.role === "tool")
    .map((m) => m.content);
}

Deno.test("one tool call gets at most sampling_per_tool_call answers by default; the rest are refused by name", async () => {
  await using llm = await startScriptedLlm({ fallback: floodingModel(1) });
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await floodConfig(box, llm.baseUrl);
  const result = await runPatchbay(box, ["run", "flood it"]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(samplingRequests(llm.requests), 10, "the default bound per tool call");
  const [text] = toolResults(llm.requests);
  assert.match(text, /answered 10, refused 30/);
  assert.match(text, /Limit reached: sampling_per_tool_call/);
});

Deno.test("the session bound holds across tool calls, and --yes does not lift it", async () => {
  await using llm = await startScriptedLlm({ fallback: floodingModel(3) });
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await floodConfig(box, llm.baseUrl, { sampling_per_tool_call: 8, sampling_request_limit: 20 });
  const result = await runPatchbay(box, ["run", "--yes", "flood it three times"]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(samplingRequests(llm.requests), 20);
  const texts = toolResults(llm.requests);
  assert.equal(texts.length, 3);
  assert.match(texts[0], /answered 8, refused 32/);
  assert.match(texts[1], /answered 8, refused 32/);
  assert.match(texts[2], /answered 4, refused 36; last refusal: .*sampling_request_limit/);
});

Deno.test("/api_stats shows the sampling bounds like the other limits", async () => {
  await using llm = await startScriptedLlm({ fallback: floodingModel(1) });
  await using box = await sandbox();
  await floodConfig(box, llm.baseUrl, { sampling_per_tool_call: 5 });
  await using repl = await startRepl(box);
  await repl.send("flood it", "Done.");
  const stats = await repl.send("/api_stats", "sampling_per_tool_call");
  assert.match(stats, /request_limit: unlimited/);
  assert.match(stats, /sampling_request_limit: 5 of 100 used, 95 remaining/);
  assert.match(stats, /sampling_per_tool_call: 5 per tool call \(most in one call so far: 5\)/);
  assert.equal(samplingRequests(llm.requests), 5);
});

Deno.test("the sampling bounds are AgentConfig fields: a wrong value is a configuration error", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await floodConfig(box, "http://127.0.0.1:9/v1", { sampling_request_limit: 0 });
  const result = await runPatchbay(box, ["config", "check"]);
  assert.notEqual(result.code, 0);
  assert.match(result.stderr + result.stdout, /AgentConfig\.sampling_request_limit/);
});
