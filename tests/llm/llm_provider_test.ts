/**
 * The provider seam against the scripted OpenAI-compatible server: streaming, usage,
 * request fields, key checks, 401, 429 with retry-after, dropped connections, timeouts,
 * refused connections, cancellation, field fallbacks and the proxy from .env.
 */

import assert from "node:assert/strict";
import type { LlmConfig } from "../../lib/config/types.ts";
import { createEnvironment } from "../../lib/env.ts";
import {
  AuthenticationFailedError,
  CancelledError,
  ConnectionLostError,
  InvalidApiKeyError,
  NetworkError,
  type PatchbayError,
  ProviderRequestError,
  RateLimitError,
  TimeoutError,
} from "../../lib/errors.ts";
import { createOpenAiProvider } from "../../lib/llm/openai_provider.ts";
import type { RetryNotice } from "../../lib/llm/provider.ts";
import { Redactor } from "../../lib/redact/redact.ts";
import { capture, captureAny } from "../support/errors.ts";
import { reportedUsage, startScriptedLlm } from "../support/scripted_llm.ts";
import { freePort } from "../support/servers.ts";
import { startTestProxy } from "../support/proxy.ts";

const KEY = "sk-test-0123456789abcdef0123";

function llm(baseUrl: string, overrides: Partial<LlmConfig> = {}): LlmConfig {
  return {
    provider: "openai",
    model: "gpt-test",
    maxTokens: 256,
    maxContextLength: 8000,
    timeoutSeconds: 5,
    maxRetries: 2,
    baseUrl,
    ...overrides,
  };
}

const env = (
  vars: Record<string, string> = { LLM_API_KEY: KEY },
  file = new Map<string, string>(),
) => createEnvironment(vars, file);

const user = (text: string) => [{ role: "user" as const, content: text }];

Deno.test("a streamed answer arrives delta by delta with the provider's usage", async () => {
  await using server = await startScriptedLlm({
    replies: [{ text: "Hello there, world.", usage: { prompt_tokens: 42, completion_tokens: 7 } }],
  });
  const provider = createOpenAiProvider({ llm: llm(server.baseUrl), env: env() });
  const deltas: string[] = [];
  const result = await provider.generate({
    messages: user("hi"),
    onDelta: (d) => deltas.push(d),
  });
  provider.close();
  assert.ok(deltas.length >= 4, `expected several deltas, got ${deltas.length}`);
  assert.equal(deltas.join(""), "Hello there, world.");
  assert.equal(result.content, "Hello there, world.");
  assert.equal(result.finishReason, "stop");
  assert.deepEqual(result.usage, reportedUsage(42, 7));
  assert.equal(result.retries, 0);
  const body = server.requests[0].body;
  assert.equal(body.stream, true);
  assert.deepEqual(body.stream_options, { include_usage: true });
  assert.equal(body.model, "gpt-test");
  // OpenAI's own API: the field every model accepts.
  assert.equal(body.max_completion_tokens, 256);
  assert.equal("temperature" in body, false, "temperature is only sent when configured");
  assert.equal(server.requests[0].headers.authorization, `Bearer ${KEY}`);
});

Deno.test("configured fields reach the request; other providers get max_tokens", async () => {
  await using server = await startScriptedLlm({ replies: [{ text: "ok" }] });
  const provider = createOpenAiProvider({
    llm: llm(server.baseUrl, { provider: "groq", temperature: 0.3, maxTokens: 99 }),
    env: env({ LLM_API_KEY: "gsk_abcdefghijklmnop1234" }),
  });
  await provider.generate({
    messages: [{ role: "system", content: "sys" }, ...user("q")],
    tools: [{
      name: "fs_read",
      description: "Read",
      parameters: SCHEMA_2020_12,
    }],
    onDelta: () => {},
  });
  provider.close();
  const body = server.requests[0].body;
  assert.equal(body.max_tokens, 99);
  assert.equal(body.temperature, 0.3);
  assert.deepEqual(body.messages[0], { role: "system", content: "sys" });
  assert.deepEqual(body.tools, [{
    type: "function",
    function: { name: "fs_read", description: "Read", parameters: SCHEMA_2020_12 },
  }]);
  // The server's schema byte for byte: every keyword, in its order.
  assert.equal(JSON.stringify(body.tools[0].function.parameters), JSON.stringify(SCHEMA_2020_12));
});

/** A tool schema with JSON Schema 2020-12 keywords a client must not drop. */
const SCHEMA_2020_12 = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  $defs: { path: { $anchor: "path", type: "string", minLength: 1 } },
  properties: { p: { $ref: "#/$defs/path" }, mode: { enum: ["r", "w"] } },
  allOf: [{ required: ["p"] }],
  if: { properties: { mode: { const: "w" } } },
  then: { required: ["mode"] },
  else: {},
  additionalProperties: false,
};

Deno.test("a non-streamed request returns the whole answer and its tool calls", async () => {
  await using server = await startScriptedLlm({
    replies: [{ toolCalls: [{ name: "echo", arguments: { message: "x" } }] }],
  });
  const provider = createOpenAiProvider({ llm: llm(server.baseUrl), env: env() });
  const result = await provider.generate({ messages: user("call echo") });
  provider.close();
  assert.equal(server.requests[0].body.stream, false);
  assert.equal(result.content, null);
  assert.equal(result.finishReason, "tool_calls");
  assert.equal(result.toolCalls.length, 1);
  assert.equal(result.toolCalls[0].name, "echo");
  assert.deepEqual(JSON.parse(result.toolCalls[0].arguments), { message: "x" });
  assert.equal(result.usage.estimated, false);
});

Deno.test("usage is estimated, and marked so, only when the provider reports none", async () => {
  await using server = await startScriptedLlm({ replies: [{ text: "twelve chars", usage: null }] });
  const provider = createOpenAiProvider({ llm: llm(server.baseUrl), env: env() });
  const result = await provider.generate({ messages: user("hi"), onDelta: () => {} });
  provider.close();
  assert.equal(result.usage.estimated, true);
  assert.equal(result.usage.completionTokens, 3);
  assert.ok(result.usage.promptTokens > 0);
  assert.equal(result.usage.totalTokens, result.usage.promptTokens + 3);
});

Deno.test("a missing or foreign key fails before any request with Invalid API key", async () => {
  await using server = await startScriptedLlm();
  const missing = assert.throws(
    () => createOpenAiProvider({ llm: llm(server.baseUrl, { baseUrl: undefined }), env: env({}) }),
    InvalidApiKeyError,
  );
  void missing;
  const error = captureSync(() =>
    createOpenAiProvider({
      llm: llm(server.baseUrl, { baseUrl: undefined }),
      env: env({ LLM_API_KEY: "gsk_abcdefghijklmnop1234" }),
    })
  );
  assert.ok(error instanceof InvalidApiKeyError);
  assert.equal(error.message, "Invalid API key");
  assert.match(error.reason, /OpenAI keys start with "sk-"/);
  assert.match(error.reason, /looks like a Groq key/);
  assert.doesNotMatch(error.reason, /abcdefghijklmnop/, "the key itself is never shown");
  assert.match(error.remedy, /\.env/);
  assert.match(error.remedy, /restart/);
  assert.equal(server.requests.length, 0);
});

Deno.test("401 gives Authentication failed naming provider and model, without retrying", async () => {
  await using server = await startScriptedLlm({
    replies: [{ status: 401, errorMessage: "Incorrect API key provided" }],
  });
  const redactor = new Redactor();
  const provider = createOpenAiProvider({ llm: llm(server.baseUrl), env: env(), redactor });
  const error = await capture(provider.generate({ messages: user("hi"), onDelta: () => {} }));
  provider.close();
  assert.ok(error instanceof AuthenticationFailedError);
  assert.equal(error.message, "Authentication failed");
  assert.match(error.reason, /OpenAI \(provider openai\)/);
  assert.match(error.reason, /model "gpt-test"/);
  assert.match(error.reason, /HTTP 401/);
  assert.match(error.remedy, /LLM_API_KEY/);
  assert.equal(server.requests.length, 1);
  assert.equal(redactor.redact(`key ${KEY}`), "key [REDACTED]", "the key is registered");
});

Deno.test("429 with retry-after is retried after the wait the provider asked for", async () => {
  await using server = await startScriptedLlm({
    replies: [
      { status: 429, errorMessage: "Rate limit reached", headers: { "retry-after": "1" } },
      { text: "after the wait" },
    ],
  });
  const provider = createOpenAiProvider({ llm: llm(server.baseUrl), env: env() });
  const notices: RetryNotice[] = [];
  const result = await provider.generate({
    messages: user("hi"),
    onDelta: () => {},
    onRetry: (n) => notices.push(n),
  });
  provider.close();
  assert.equal(result.content, "after the wait");
  assert.equal(result.retries, 1);
  assert.equal(notices.length, 1);
  assert.equal(notices[0].delayMs, 1000);
  assert.match(notices[0].reason, /HTTP 429 Too Many Requests/);
  const gap = server.requests[1].receivedAt - server.requests[0].receivedAt;
  // A lower bound only (load makes it longer, never shorter): the wait asked for was kept.
  assert.ok(gap >= 950, `the retry waited ${gap} ms`);
});

Deno.test("429 on every attempt ends in Rate limit exceeded with the retries made", async () => {
  const limited = {
    status: 429,
    errorMessage: "Too many requests",
    headers: { "retry-after-ms": "20" },
  };
  await using server = await startScriptedLlm({ replies: [limited, limited, limited] });
  const provider = createOpenAiProvider({ llm: llm(server.baseUrl), env: env() });
  const error = await capture(provider.generate({ messages: user("hi"), onDelta: () => {} }));
  provider.close();
  assert.ok(error instanceof RateLimitError);
  assert.equal(error.message, "Rate limit exceeded (Too many requests)");
  assert.match(error.reason, /2 retries were made/);
  assert.match(error.remedy, /request_limit/);
  assert.match(error.remedy, /\/api_stats/);
  assert.equal(server.requests.length, 3);
});

Deno.test("a retry-after beyond the cap is not waited out", async () => {
  await using server = await startScriptedLlm({
    replies: [{ status: 429, errorMessage: "slow down", headers: { "retry-after": "3600" } }],
  });
  const provider = createOpenAiProvider({ llm: llm(server.baseUrl), env: env() });
  const error = await capture(provider.generate({ messages: user("hi"), onDelta: () => {} }));
  provider.close();
  assert.ok(error instanceof RateLimitError);
  assert.match(error.reason, /asked to wait 3600 s, longer than patchbay waits \(60 s\)/);
  assert.equal(server.requests.length, 1);
});

Deno.test("a connection dropped mid-stream is retried, and the partial answer voided", async () => {
  await using server = await startScriptedLlm({
    replies: [
      { text: "This answer will be cut", dropAfterChunks: 3 },
      { text: "Complete answer." },
    ],
  });
  const provider = createOpenAiProvider({ llm: llm(server.baseUrl), env: env(), random: () => 0 });
  const notices: RetryNotice[] = [];
  const deltas: string[] = [];
  const result = await provider.generate({
    messages: user("hi"),
    onDelta: (d) => deltas.push(d),
    onRetry: (n) => notices.push(n),
  });
  provider.close();
  assert.equal(result.content, "Complete answer.");
  assert.equal(notices.length, 1);
  assert.equal(notices[0].discardedPartial, true);
  assert.equal(notices[0].reason, "the connection dropped mid-answer");
  assert.equal(notices[0].delayMs, 500);
  assert.ok(deltas.join("").startsWith("This"), "the first attempt had started streaming");
});

Deno.test("what onDelta throws (a closed pipe) ends the request as it is, unretried", async () => {
  await using server = await startScriptedLlm({
    replies: [{ text: "An answer nobody can print.", chunkDelayMs: 5 }, { text: "retried" }],
  });
  const provider = createOpenAiProvider({ llm: llm(server.baseUrl), env: env(), random: () => 0 });
  const broken = new Deno.errors.BrokenPipe("Broken pipe (os error 32)");
  const notices: RetryNotice[] = [];
  let deltas = 0;
  const error = await captureAny(provider.generate({
    messages: user("hi"),
    onDelta: () => {
      if (++deltas === 2) throw broken;
    },
    onRetry: (n) => notices.push(n),
  }));
  provider.close();
  assert.equal(error, broken, "the very error the callback threw");
  assert.equal(deltas, 2, "no text was delivered after the failure");
  assert.equal(notices.length, 0, "not retried");
  assert.equal(server.requests.length, 1);
  await waitFor(() => server.requests[0].serviceMs !== undefined);
  assert.equal(server.requests[0].clientAborted, true, "the stream was abandoned at once");
});

Deno.test("what onRetry or admitRetry throws ends the request as it is", async () => {
  await using server = await startScriptedLlm({
    replies: [{ status: 503, errorMessage: "busy" }, { status: 503, errorMessage: "busy" }],
  });
  const provider = createOpenAiProvider({ llm: llm(server.baseUrl), env: env(), random: () => 0 });
  /** What a request for "hi" with `hooks` rejects with. */
  const rejectionWith = (hooks: Partial<Parameters<typeof provider.generate>[0]>) =>
    captureAny(provider.generate({ messages: user("hi"), onDelta: () => {}, ...hooks }));
  const fromUi = new Error("the terminal went away");
  const error = await rejectionWith({
    onRetry: () => {
      throw fromUi;
    },
  });
  assert.equal(error, fromUi);
  assert.equal(server.requests.length, 1);

  const refusal = new Error("no budget for a retry");
  const refused = await rejectionWith({
    admitRetry: () => {
      throw refusal;
    },
  });
  provider.close();
  assert.equal(refused, refusal);
  assert.equal(server.requests.length, 2);
});

Deno.test("admitRetry learns what the failed attempt may have cost and sets the next cap", async () => {
  await using server = await startScriptedLlm({
    replies: [
      { status: 503, errorMessage: "busy" },
      { text: "This answer will be cut", dropAfterChunks: 3 },
      { text: "Complete." },
    ],
  });
  const provider = createOpenAiProvider({ llm: llm(server.baseUrl), env: env(), random: () => 0 });
  const asked: RetryNotice[] = [];
  const result = await provider.generate({
    messages: user("hi"),
    maxTokens: 200,
    onDelta: () => {},
    admitRetry: (notice) => {
      asked.push(notice);
      return 200 - 50 * asked.length;
    },
  });
  provider.close();
  assert.equal(result.content, "Complete.");
  // A refusal (503) cost nothing; an answer cut off mid-stream may have been billed.
  assert.deepEqual(asked.map((n) => [n.attempt, n.billable]), [[1, false], [2, true]]);
  assert.deepEqual(server.requests.map((r) => r.body.max_completion_tokens ?? r.body.max_tokens), [
    200,
    150,
    100,
  ]);
});

Deno.test("a dropped connection with no retries left ends in Connection lost", async () => {
  await using server = await startScriptedLlm({
    replies: [{ text: "cut short", dropAfterChunks: 2 }],
  });
  const provider = createOpenAiProvider({
    llm: llm(server.baseUrl, { maxRetries: 0 }),
    env: env(),
  });
  const error = await capture(provider.generate({ messages: user("hi"), onDelta: () => {} }));
  provider.close();
  assert.ok(error instanceof ConnectionLostError);
  assert.match(error.message, /^Connection lost/);
  assert.match(error.reason, /closed mid-answer \(no retry was made\)/);
});

Deno.test("a stalled stream ends in Request timeout naming LLM.timeout", async () => {
  await using server = await startScriptedLlm({
    replies: [{ text: "slow answer here", chunkDelayMs: 2000 }],
  });
  const provider = createOpenAiProvider({
    llm: llm(server.baseUrl, { maxRetries: 0, timeoutSeconds: 0.3 }),
    env: env(),
  });
  const error = await capture(provider.generate({ messages: user("hi"), onDelta: () => {} }));
  provider.close();
  assert.ok(error instanceof TimeoutError);
  assert.equal(error.message, "Request timeout");
  assert.match(error.reason, /stopped sending the answer for 0.3 s/);
  assert.match(error.remedy, /raise LLM\.timeout \(now 0.3 s\)/);
});

Deno.test("a refused connection gives Connection refused with what to start", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const provider = createOpenAiProvider({
    llm: llm(`http://127.0.0.1:${port}/v1`, { maxRetries: 1 }),
    env: env(),
    random: () => 0,
  });
  const notices: RetryNotice[] = [];
  const error = await capture(provider.generate({
    messages: user("hi"),
    onDelta: () => {},
    onRetry: (n) => notices.push(n),
  }));
  provider.close();
  assert.ok(error instanceof NetworkError);
  assert.equal(error.message, "Connection refused");
  assert.match(error.reason, /1 retry was made/);
  assert.match(error.remedy, new RegExp(`listens at http://127.0.0.1:${port}/v1`));
  assert.equal(notices.length, 1);
});

Deno.test("aborting mid-stream stops the request at once with Cancelled", async () => {
  await using server = await startScriptedLlm({
    replies: [{ text: "a long, slow answer that never finishes", chunkDelayMs: 200 }],
  });
  const provider = createOpenAiProvider({ llm: llm(server.baseUrl), env: env() });
  const controller = new AbortController();
  const deltas: string[] = [];
  const pending = provider.generate({
    messages: user("hi"),
    signal: controller.signal,
    onDelta: (d) => {
      deltas.push(d);
      if (deltas.length === 2) controller.abort();
    },
  });
  const error = await capture(pending);
  provider.close();
  assert.ok(error instanceof CancelledError);
  assert.equal(deltas.length, 2);
  await waitFor(() => server.requests[0].serviceMs !== undefined);
  assert.equal(server.requests[0].clientAborted, true);
  assert.equal(server.requests.length, 1, "a cancelled request is not retried");
});

Deno.test("a server that rejects stream_options gets the request again without it", async () => {
  await using server = await startScriptedLlm({
    replies: [
      { status: 400, errorMessage: "Unrecognized request argument supplied: stream_options" },
      { text: "fine", usage: null },
      { text: "again", usage: null },
    ],
  });
  const provider = createOpenAiProvider({ llm: llm(server.baseUrl), env: env() });
  const first = await provider.generate({ messages: user("hi"), onDelta: () => {} });
  await provider.generate({ messages: user("hi"), onDelta: () => {} });
  provider.close();
  assert.equal(first.content, "fine");
  assert.equal(first.retries, 0);
  assert.equal(first.usage.estimated, true);
  assert.equal(server.requests[1].body.stream_options, undefined);
  assert.equal(server.requests[2].body.stream_options, undefined, "remembered for the session");
});

Deno.test("other 4xx answers become a provider error with the provider's words", async () => {
  await using server = await startScriptedLlm({
    replies: [{ status: 404, errorMessage: "The model `gpt-nope` does not exist" }],
  });
  const provider = createOpenAiProvider({ llm: llm(server.baseUrl), env: env() });
  const error = await capture(provider.generate({ messages: user("hi"), onDelta: () => {} }));
  provider.close();
  assert.ok(error instanceof ProviderRequestError);
  assert.equal(error.status, 404);
  assert.match(error.reason, /does not exist/);
  assert.match(error.remedy, /LLM\.model/);
});

Deno.test("a local provider needs no key and sends no Authorization header", async () => {
  await using server = await startScriptedLlm({ replies: [{ text: "local" }] });
  const provider = createOpenAiProvider({
    llm: llm(server.baseUrl, { provider: "openai-compatible" }),
    env: env({}),
  });
  const result = await provider.generate({ messages: user("hi"), onDelta: () => {} });
  provider.close();
  assert.equal(result.content, "local");
  assert.equal(server.requests[0].headers.authorization, undefined);
});

Deno.test("Azure requests go to the deployment path with api-version and api-key", async () => {
  await using server = await startScriptedLlm({ replies: [{ text: "azure" }] });
  const endpoint = `http://127.0.0.1:${server.port}`;
  const provider = createOpenAiProvider({
    llm: llm("", {
      provider: "azure",
      baseUrl: undefined,
      endpoint,
      deployment: "my-deploy",
      apiVersion: "2024-10-21",
    }),
    env: env({ LLM_API_KEY: "0123456789abcdef0123456789abcdef" }),
  });
  const result = await provider.generate({ messages: user("hi"), onDelta: () => {} });
  provider.close();
  assert.equal(result.content, "azure");
  const request = server.requests[0];
  assert.equal(request.path, "/openai/deployments/my-deploy/chat/completions");
  assert.equal(request.query["api-version"], "2024-10-21");
  assert.equal(request.headers["api-key"], "0123456789abcdef0123456789abcdef");
});

Deno.test("a proxy set only in .env carries the requests (forwarding)", async () => {
  await using server = await startScriptedLlm({ replies: [{ text: "via proxy" }] });
  await using proxy = startTestProxy();
  const provider = createOpenAiProvider({
    llm: llm(server.baseUrl),
    // The variable exists only in the .env map, not in the process environment.
    env: env({ LLM_API_KEY: KEY }, new Map([["HTTP_PROXY", proxy.url]])),
  });
  const result = await provider.generate({ messages: user("hi"), onDelta: () => {} });
  provider.close();
  assert.equal(result.content, "via proxy");
  assert.deepEqual(proxy.requestLines, [
    `POST ${server.baseUrl}/chat/completions HTTP/1.1`,
  ]);
});

Deno.test("HTTPS_PROXY from .env tunnels https requests with CONNECT", async () => {
  await using proxy = startTestProxy();
  const provider = createOpenAiProvider({
    // The proxy refuses anything but loopback, so nothing reaches the real host.
    llm: llm("https://api.openai.com/v1", { maxRetries: 0 }),
    env: env(
      { LLM_API_KEY: KEY },
      new Map([["HTTPS_PROXY", proxy.url.replace("http://", "http://u:p@")]]),
    ),
  });
  const error = await capture(provider.generate({ messages: user("hi"), onDelta: () => {} }));
  provider.close();
  assert.deepEqual(proxy.requestLines, ["CONNECT api.openai.com:443 HTTP/1.1"]);
  assert.deepEqual(proxy.authorizations, [`Basic ${btoa("u:p")}`]);
  assert.ok(error instanceof NetworkError);
  assert.equal(error.message, "Connection refused");
  assert.equal(
    error.reason,
    `the proxy ${proxy.url} (HTTPS_PROXY) refused to open a connection to api.openai.com`,
  );
  assert.match(error.remedy, /credentials \(user:password@ in HTTPS_PROXY\)/);
});

Deno.test("a proxy that is down is named as the cause, with the proxy's remedy", async () => {
  // The model server is up; the proxy the requests must go through is not.
  await using server = await startScriptedLlm({ replies: [{ text: "never asked" }] });
  const proxyPort = freePort();
  const proxyUrl = `http://127.0.0.1:${proxyPort}`;
  const provider = createOpenAiProvider({
    llm: llm(server.baseUrl, { maxRetries: 0 }),
    env: env({ LLM_API_KEY: KEY, HTTP_PROXY: proxyUrl }),
  });
  const error = await capture(provider.generate({ messages: user("hi"), onDelta: () => {} }));
  provider.close();
  assert.equal(server.requests.length, 0);
  assert.ok(error instanceof NetworkError);
  assert.equal(error.message, "Connection refused");
  assert.equal(
    error.reason,
    `nothing accepted the connection to the proxy ${proxyUrl} (HTTP_PROXY) (no retry was ` +
      `made); requests to OpenAI at ${new URL(server.baseUrl).host} go through it`,
  );
  assert.equal(
    error.remedy,
    `start the proxy at ${proxyUrl}, or correct HTTP_PROXY (in .env or the environment); if ` +
      "127.0.0.1 should be reached directly, add it to NO_PROXY (or unset HTTP_PROXY); then " +
      "restart patchbay",
  );
  assert.doesNotMatch(error.remedy, /start OpenAI/);
});

Deno.test("NO_PROXY bypasses a proxy that is down", async () => {
  await using server = await startScriptedLlm({ replies: [{ text: "direct" }] });
  const provider = createOpenAiProvider({
    llm: llm(server.baseUrl),
    env: env({
      LLM_API_KEY: KEY,
      HTTP_PROXY: `http://127.0.0.1:${freePort()}`,
      NO_PROXY: "127.0.0.1",
    }),
  });
  const result = await provider.generate({ messages: user("hi"), onDelta: () => {} });
  provider.close();
  assert.equal(result.content, "direct");
});

function captureSync(fn: () => unknown): PatchbayError {
  try {
    fn();
  } catch (error) {
    return error as PatchbayError;
  }
  throw new assert.AssertionError({ message: "expected a throw" });
}

async function waitFor(condition: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
