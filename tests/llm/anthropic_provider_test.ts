/**
 * `provider: "anthropic"` against the scripted Messages endpoint, which holds every request
 * to the API's rules (headers, body, at most four cache markers) and keeps a prompt cache:
 * streaming, tool use, whole answers (sampling), the markers and the cache reads they earn
 * across requests, `prompt_caching: false`, the API's errors worded as the OpenAI path's
 * (401, 429 with retry-after, 529 overloaded, an `error` event mid-stream), the model
 * list, and where `base_url` sends requests.
 */

import assert from "node:assert/strict";
import type { LlmConfig } from "../../lib/config/types.ts";
import { createEnvironment } from "../../lib/env.ts";
import {
  AuthenticationFailedError,
  InvalidApiKeyError,
  ProviderRequestError,
  RateLimitError,
} from "../../lib/errors.ts";
import { createProvider } from "../../lib/llm/create_provider.ts";
import { messagesUrl } from "../../lib/llm/messages_api.ts";
import type { ChatMessage, RetryNotice, ToolDefinition } from "../../lib/llm/provider.ts";
import { rejection } from "../support/errors.ts";
import { API_MAX_BREAKPOINTS } from "../support/messages_checks.ts";
import { startScriptedMessages } from "../support/scripted_messages.ts";

const KEY = "sk-ant-api03-test0123456789abcdef";

function llm(baseUrl: string, overrides: Partial<LlmConfig> = {}): LlmConfig {
  return {
    provider: "anthropic",
    model: "claude-test-4-5",
    maxTokens: 512,
    maxContextLength: 100_000,
    timeoutSeconds: 5,
    maxRetries: 2,
    baseUrl,
    ...overrides,
  };
}

const env = () => createEnvironment({ LLM_API_KEY: KEY });

/** Tools big enough to be cached (the endpoint keeps prefixes of 1,024 tokens and more). */
const TOOLS: ToolDefinition[] = Array.from({ length: 12 }, (_, i) => ({
  name: `srv__tool_${i}`,
  description: `Tool number ${i}. `.repeat(40),
  parameters: { type: "object", properties: { text: { type: "string" } } },
}));

const SYSTEM: ChatMessage = { role: "system", content: "You are a test. ".repeat(20) };

/** The markers of a recorded request: where each one is. */
// deno-lint-ignore no-explicit-any
function markers(body: any): string[] {
  const found: string[] = [];
  body.tools?.forEach((t: { cache_control?: unknown }, i: number) => {
    if (t.cache_control) found.push(`tools.${i}`);
  });
  body.system?.forEach((b: { cache_control?: unknown }, i: number) => {
    if (b.cache_control) found.push(`system.${i}`);
  });
  body.messages.forEach((m: { content: { cache_control?: unknown }[] }, i: number) => {
    m.content.forEach((b, j) => {
      if (b.cache_control) found.push(`messages.${i}.${j}`);
    });
  });
  return found;
}

Deno.test("anthropic: a streamed answer over the Messages API, headers and body as the API wants", async () => {
  await using api = await startScriptedMessages({
    apiKey: KEY,
    replies: [{ text: "Hello from Claude.", outputTokens: 6 }],
  });
  const provider = createProvider({ llm: llm(api.baseUrl, { temperature: 0.2 }), env: env() });
  assert.equal(provider.label, "Anthropic");
  const deltas: string[] = [];
  const result = await provider.generate({
    messages: [SYSTEM, { role: "user", content: "hi" }],
    stop: ["END"],
    onDelta: (d) => deltas.push(d),
  });
  provider.close();
  assert.equal(result.content, "Hello from Claude.");
  assert.ok(deltas.length > 1, "the text arrived in pieces");
  assert.equal(deltas.join(""), "Hello from Claude.");
  assert.equal(result.finishReason, "stop");
  const [request] = api.requests;
  assert.deepEqual(request.problems, []);
  assert.equal(request.path, "/v1/messages");
  assert.equal(request.headers["x-api-key"], KEY);
  assert.equal(request.headers["anthropic-version"], "2023-06-01");
  assert.equal(request.headers["authorization"], undefined);
  assert.equal(request.body.stream, true);
  assert.equal(request.body.max_tokens, 512);
  assert.equal(request.body.temperature, 0.2);
  assert.deepEqual(request.body.stop_sequences, ["END"]);
  assert.equal(request.body.system[0].text, SYSTEM.content);
  assert.deepEqual(result.usage.completionTokens, 6);
  assert.equal(result.usage.estimated, false);
  assert.equal(
    result.usage.promptTokens,
    request.usage!.input_tokens + request.usage!.cache_read_input_tokens +
      request.usage!.cache_creation_input_tokens,
  );
});

Deno.test("anthropic: tool calls stream in, results go back, and each request reads the cache the last one wrote", async () => {
  await using api = await startScriptedMessages({
    replies: [
      { text: "Calling.", toolUses: [{ name: "srv__tool_1", input: { text: "a" } }] },
      { text: "Done: a." },
      { text: "Second turn." },
    ],
  });
  const provider = createProvider({ llm: llm(api.baseUrl), env: env() });
  const messages: ChatMessage[] = [SYSTEM, { role: "user", content: "use a tool" }];
  const first = await provider.generate({ messages, tools: TOOLS, onDelta: () => {} });
  assert.deepEqual(first.toolCalls, [{
    id: first.toolCalls[0].id,
    name: "srv__tool_1",
    arguments: '{"text":"a"}',
  }]);
  assert.equal(first.finishReason, "tool_calls");
  messages.push(
    { role: "assistant", content: first.content, toolCalls: first.toolCalls },
    { role: "tool", toolCallId: first.toolCalls[0].id, content: "a" },
  );
  const second = await provider.generate({ messages, tools: TOOLS, onDelta: () => {} });
  messages.push({ role: "assistant", content: second.content });
  messages.push({ role: "user", content: "and now?" });
  const third = await provider.generate({ messages, tools: TOOLS, onDelta: () => {} });
  provider.close();

  for (const request of api.requests) {
    assert.deepEqual(request.problems, []);
    assert.ok(markers(request.body).length <= API_MAX_BREAKPOINTS);
  }
  const [r1, r2, r3] = api.requests;
  assert.deepEqual(markers(r1.body), ["tools.11", "system.0", "messages.0.0"]);
  assert.deepEqual(markers(r2.body), ["tools.11", "system.0", "messages.0.0", "messages.2.0"]);
  assert.deepEqual(markers(r3.body), ["tools.11", "system.0", "messages.2.0", "messages.4.0"]);
  // The first request writes the prefix; each later one reads all the one before it sent.
  assert.equal(first.usage.cacheReadTokens, undefined);
  assert.ok(first.usage.cacheWriteTokens! > 1024, "tools and system written");
  assert.equal(second.usage.cacheReadTokens, r1.usage!.cache_creation_input_tokens);
  assert.equal(
    third.usage.cacheReadTokens,
    r2.usage!.cache_read_input_tokens + r2.usage!.cache_creation_input_tokens,
  );
  assert.ok(third.usage.cacheReadTokens! > third.usage.promptTokens * 0.9);
});

Deno.test("anthropic: a tool list that grew keeps the cache of the part it shares", async () => {
  await using api = await startScriptedMessages({
    replies: [{ text: "one" }, { text: "two" }, { text: "three" }],
  });
  const provider = createProvider({ llm: llm(api.baseUrl), env: env() });
  const messages: ChatMessage[] = [SYSTEM, { role: "user", content: "hi" }];
  await provider.generate({ messages, tools: TOOLS.slice(0, 8), onDelta: () => {} });
  const grown = await provider.generate({ messages, tools: TOOLS, onDelta: () => {} });
  const again = await provider.generate({ messages, tools: TOOLS, onDelta: () => {} });
  provider.close();
  const [, r2, r3] = api.requests;
  assert.deepEqual(markers(r2.body), ["tools.7", "system.0", "messages.0.0"]);
  assert.deepEqual(markers(r3.body), ["tools.11", "system.0", "messages.0.0"]);
  assert.ok(grown.usage.cacheReadTokens! > 0, "the eight tools both lists share were read");
  assert.ok(grown.usage.cacheWriteTokens! > 0, "the new tools and what follows were written");
  assert.equal(again.usage.cacheWriteTokens ?? 0, r3.usage!.cache_creation_input_tokens);
  assert.ok(again.usage.cacheReadTokens! >= grown.usage.promptTokens - 20);
});

Deno.test("anthropic: prompt_caching false sends no marker; a whole answer for a request without onDelta", async () => {
  await using api = await startScriptedMessages({
    replies: [{ text: "Sampled.", outputTokens: 3 }, { text: "again" }, {
      text: "Whole, though streaming was asked.",
      toolUses: [{ name: "srv__tool_2", input: { text: "b" } }],
      ignoreStream: true,
    }],
  });
  const provider = createProvider({
    llm: llm(api.baseUrl, { promptCaching: false }),
    env: env(),
  });
  const result = await provider.generate({ messages: [SYSTEM, { role: "user", content: "x" }] });
  await provider.generate({ messages: [SYSTEM, { role: "user", content: "x" }], tools: TOOLS });
  // A server that ignores `stream` sends the whole message: it is the answer all the same.
  const deltas: string[] = [];
  const whole = await provider.generate({
    messages: [{ role: "user", content: "x" }],
    temperature: 1.5,
    onDelta: (d) => deltas.push(d),
  });
  provider.close();
  assert.equal(whole.content, "Whole, though streaming was asked.");
  assert.equal(deltas.join(""), whole.content);
  assert.deepEqual(whole.toolCalls.map((c) => [c.name, c.arguments]), [[
    "srv__tool_2",
    '{"text":"b"}',
  ]]);
  assert.equal(whole.usage.completionTokens, 10);
  assert.equal(api.requests[2].body.temperature, 1, "the Messages API's range is 0 to 1");
  assert.equal(result.content, "Sampled.");
  assert.equal(result.usage.completionTokens, 3);
  assert.equal(api.requests[0].body.stream, false);
  for (const request of api.requests) {
    assert.deepEqual(request.problems, []);
    assert.deepEqual(markers(request.body), []);
    assert.equal(request.usage!.cache_read_input_tokens, 0);
  }
});

Deno.test("anthropic: errors read as the OpenAI path's: key refused, rate limit with retry-after, overloaded", async () => {
  await using api = await startScriptedMessages({ apiKey: "sk-ant-other" });
  const refused = createProvider({ llm: llm(api.baseUrl), env: env() });
  const denied = await rejection(
    () => refused.generate({ messages: [{ role: "user", content: "x" }] }),
    AuthenticationFailedError,
  );
  refused.close();
  assert.equal(denied.message, "Authentication failed");
  assert.match(denied.reason, /Anthropic \(provider anthropic\) refused LLM_API_KEY/);
  assert.match(denied.reason, /HTTP 401 Unauthorized: invalid x-api-key/);

  await using busy = await startScriptedMessages({
    replies: [
      {
        status: 429,
        errorType: "rate_limit_error",
        errorMessage: "slow down",
        headers: { "retry-after": "0" },
      },
      { status: 529, errorType: "overloaded_error", errorMessage: "Overloaded" },
      { text: "made it" },
    ],
  });
  const notices: RetryNotice[] = [];
  const provider = createProvider({ llm: llm(busy.baseUrl), env: env(), random: () => 0 });
  const result = await provider.generate({
    messages: [{ role: "user", content: "x" }],
    onDelta: () => {},
    onRetry: (notice) => notices.push(notice),
  });
  assert.equal(result.content, "made it");
  assert.equal(result.retries, 2);
  assert.match(notices[0].reason, /HTTP 429 Too Many Requests: slow down/);
  assert.match(notices[1].reason, /HTTP 529 Overloaded: Overloaded/);

  busy.enqueue(
    ...Array(3).fill({ status: 429, errorType: "rate_limit_error", errorMessage: "limit" }),
  );
  const limited = await rejection(
    () => provider.generate({ messages: [{ role: "user", content: "x" }] }),
    RateLimitError,
  );
  assert.match(limited.message, /^Rate limit exceeded/);
  assert.match(limited.reason, /Anthropic limited requests for model "claude-test-4-5"/);
  busy.enqueue({
    status: 400,
    errorType: "invalid_request_error",
    errorMessage: "prompt is too long: 215000 tokens > 200000 maximum",
  });
  const long = await rejection(
    () => provider.generate({ messages: [{ role: "user", content: "x" }] }),
    ProviderRequestError,
  );
  assert.match(long.message, /the conversation is too long for "claude-test-4-5"/);
  provider.close();
});

Deno.test("anthropic: an error event mid-stream is the API's error (overloaded: retried), not a dropped line", async () => {
  await using api = await startScriptedMessages({
    replies: [
      { text: "partial answer", streamError: { type: "overloaded_error", message: "Overloaded" } },
      { text: "whole answer" },
    ],
  });
  const provider = createProvider({ llm: llm(api.baseUrl), env: env(), random: () => 0 });
  const notices: RetryNotice[] = [];
  const result = await provider.generate({
    messages: [{ role: "user", content: "x" }],
    onDelta: () => {},
    onRetry: (notice) => notices.push(notice),
  });
  provider.close();
  assert.equal(result.content, "whole answer");
  assert.equal(notices.length, 1);
  assert.match(notices[0].reason, /HTTP 529 Overloaded: Overloaded/);
});

Deno.test("anthropic: the model list, the key checked before any request, where base_url sends requests", async () => {
  await using api = await startScriptedMessages({ models: ["claude-a", "claude-b"] });
  const provider = createProvider({ llm: llm(api.baseUrl), env: env() });
  assert.deepEqual(await provider.listModels(), ["claude-a", "claude-b"]);
  provider.close();

  assert.throws(
    () =>
      createProvider({
        llm: llm(api.baseUrl, { baseUrl: undefined }),
        env: createEnvironment({ LLM_API_KEY: "sk-proj-openai-key-0123456789" }),
      }),
    (error) =>
      error instanceof InvalidApiKeyError && /Anthropic keys start with "sk-ant-"/.test(
        error.reason,
      ),
  );
  const preset = createProvider({ llm: llm("", { baseUrl: undefined }), env: env() });
  preset.close();
  assert.equal(preset.baseUrl, "https://api.anthropic.com/v1");
  assert.equal(
    messagesUrl(preset.baseUrl, "/messages").href,
    "https://api.anthropic.com/v1/messages",
  );
  // A bare origin, as Anthropic's SDKs take it, gets /v1; a gateway's path is kept.
  assert.equal(
    messagesUrl("https://api.anthropic.com", "/messages").href,
    "https://api.anthropic.com/v1/messages",
  );
  assert.equal(
    messagesUrl("https://gw.example/anthropic/v1/", "/models?limit=1000").href,
    "https://gw.example/anthropic/v1/models?limit=1000",
  );
});
