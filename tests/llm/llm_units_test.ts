/** Pure tests of the provider layer's parts: stream assembly, keys, presets, proxy, retries. */

import assert from "node:assert/strict";
import { createEnvironment } from "../../lib/env.ts";
import {
  AuthenticationFailedError,
  InvalidApiKeyError,
  NetworkError,
  ProviderRequestError,
  RateLimitError,
  TimeoutError,
} from "../../lib/errors.ts";
import type { LlmConfig } from "../../lib/config/types.ts";
import { checkApiKey } from "../../lib/llm/api_key.ts";
import { CompletionAssembler } from "../../lib/llm/assemble.ts";
import type { ChatCompletionChunk } from "../../lib/llm/chat_wire.ts";
import { classifyFailure, isRetryable } from "../../lib/llm/attempt_failure.ts";
import { isLoopback } from "../../lib/llm/network_failures.ts";
import { failureError } from "../../lib/llm/request_failures.ts";
import { createProvider } from "../../lib/llm/create_provider.ts";
import { PROVIDER_NAMES, type ProviderName } from "../../lib/providers.ts";
import { bypassesProxy, proxyFor } from "../../lib/proxy.ts";
import { backoffMs, RETRY_AFTER_CAP_MS, retryAfterMs } from "../../lib/llm/retry.ts";
import { listItem, readDoc } from "../support/docs.ts";

type Chunk = ChatCompletionChunk;

const configurationPage = await readDoc("docs/configuration.md");
const chunk = (
  delta: Record<string, unknown>,
  extra: Partial<Chunk> = {},
  finish: string | null = null,
): Chunk =>
  ({
    id: "c",
    object: "chat.completion.chunk",
    created: 0,
    model: "m",
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  }) as Chunk;

Deno.test("tool-call deltas are assembled by index, interleaved or not", () => {
  const a = new CompletionAssembler();
  a.push(
    chunk({ tool_calls: [{ index: 0, id: "c0", function: { name: "read", arguments: "" } }] }),
  );
  a.push(
    chunk({ tool_calls: [{ index: 1, id: "c1", function: { name: "list", arguments: '{"p' } }] }),
  );
  a.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"path":' } }] }));
  a.push(chunk({ tool_calls: [{ index: 1, function: { arguments: '":1}' } }] }));
  a.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '"/a"}' } }] }, {}, "tool_calls"));
  a.push({
    ...chunk({}),
    choices: [],
    usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
  });
  assert.deepEqual(a.result(), {
    content: null,
    toolCalls: [
      { id: "c0", name: "read", arguments: '{"path":"/a"}' },
      { id: "c1", name: "list", arguments: '{"p":1}' },
    ],
    finishReason: "tool_calls",
    usage: { promptTokens: 5, completionTokens: 2, totalTokens: 7 },
    model: "m",
  });
});

Deno.test("text deltas come back in order; quirks of other servers are tolerated", () => {
  const a = new CompletionAssembler();
  assert.equal(a.push(chunk({ role: "assistant", content: "" })), "");
  assert.equal(a.push(chunk({ content: "Hel" })), "Hel");
  assert.equal(a.push(chunk({ content: "lo" })), "lo");
  // No index, no id: appended as a new call; "stop" with tool calls still means tool calls.
  a.push(chunk({ tool_calls: [{ function: { name: "t", arguments: "{}" } }] }, {}, "stop"));
  const result = a.result();
  assert.equal(result.content, "Hello");
  assert.deepEqual(result.toolCalls, [{ id: "call_1", name: "t", arguments: "{}" }]);
  assert.equal(result.finishReason, "tool_calls");
  assert.equal(result.usage, undefined);
});

Deno.test("key checks: missing, quoted, spaced, placeholder, foreign; local servers need none", () => {
  const reason = (provider: Parameters<typeof checkApiKey>[0], key: string | undefined) => {
    try {
      checkApiKey(provider, key);
    } catch (error) {
      assert.ok(error instanceof InvalidApiKeyError);
      assert.equal(error.message, "Invalid API key");
      return error.reason;
    }
    return "accepted";
  };
  assert.match(
    reason("openai", undefined),
    /LLM_API_KEY is not set; provider openai \(OpenAI\) needs a key \(get one at https:\/\/platform\.openai\.com/,
  );
  assert.match(reason("openai", "   "), /is empty/);
  assert.match(reason("openai", '"sk-abcdefghijklmnop"'), /quote characters/);
  assert.match(reason("groq", "gsk_abc def"), /contains a blank/);
  assert.match(reason("anthropic", "your-api-key-here"), /placeholder/);
  assert.match(
    reason("anthropic", "sk-proj-abcdefghijklmnop"),
    /an Anthropic key: Anthropic keys start with "sk-ant-", and this one looks like an OpenAI or DeepSeek key/,
  );
  assert.match(reason("gemini", "sk-ant-abcdefghijklmnop"), /looks like an Anthropic key/);
  assert.equal(
    reason("openai", " sk-abcdefghijklmnop\n"),
    "accepted",
    "surrounding blanks are trimmed",
  );
  assert.equal(checkApiKey("openai", " sk-abc123456789 "), "sk-abc123456789");
  assert.equal(checkApiKey("ollama", undefined), undefined);
  assert.equal(checkApiKey("ollama", "anything"), "anything");
  assert.equal(checkApiKey("mistral", "abcdef0123456789"), "abcdef0123456789", "no known prefix");
  assert.equal(
    checkApiKey("openai", "gateway-key-123456", { baseUrlOverridden: true }),
    "gateway-key-123456",
    "a base_url gateway takes its own keys",
  );
});

Deno.test("proxy: the scheme's variable, credentials split off, NO_PROXY honoured", () => {
  const env = createEnvironment(
    {},
    new Map([
      ["HTTPS_PROXY", "http://user:p%40ss@proxy.corp:3128"],
      ["HTTP_PROXY", "proxy.corp:8080"],
      ["NO_PROXY", "localhost,.internal.example, 10.1.2.3,api.local:8443"],
    ]),
  );
  assert.deepEqual(proxyFor("https://api.openai.com/v1", env), {
    url: "http://proxy.corp:3128",
    basicAuth: { username: "user", password: "p@ss" },
    variable: "HTTPS_PROXY",
  });
  assert.deepEqual(proxyFor("http://models.example/v1", env), {
    url: "http://proxy.corp:8080",
    basicAuth: undefined,
    variable: "HTTP_PROXY",
  });
  assert.equal(proxyFor("http://localhost:11434/v1", env), undefined);
  assert.equal(proxyFor("https://llm.internal.example/v1", env), undefined);
  assert.equal(proxyFor("https://10.1.2.3/v1", env), undefined);
  assert.equal(proxyFor("https://api.local:8443/v1", env), undefined);
  assert.ok(proxyFor("https://api.local/v1", env), "port must match when given");
  assert.equal(proxyFor("https://x.example", createEnvironment({})), undefined);
  const lower = createEnvironment(
    { https_proxy: "http://lower:1" },
    new Map([["HTTPS_PROXY", "http://upper:2"]]),
  );
  assert.equal(proxyFor("https://x.example", lower)?.url, "http://lower:1");
  assert.equal(bypassesProxy(new URL("https://any.example"), "*"), true);
  assert.throws(
    () => proxyFor("https://x.example", createEnvironment({ HTTPS_PROXY: "http://[bad" })),
    /HTTPS_PROXY is not a URL/,
  );
});

Deno.test("retry: retry-after in seconds, ms or a date, capped; backoff grows with jitter", () => {
  assert.equal(retryAfterMs(new Headers({ "retry-after": "2" })), 2000);
  assert.equal(retryAfterMs(new Headers({ "retry-after-ms": "250", "retry-after": "9" })), 250);
  const now = Date.parse("2026-01-01T00:00:00Z");
  assert.equal(
    retryAfterMs(new Headers({ "retry-after": "Thu, 01 Jan 2026 00:00:05 GMT" }), now),
    5000,
  );
  assert.equal(retryAfterMs(new Headers({ "retry-after": "soon" })), undefined);
  assert.equal(backoffMs(1, 120_000), RETRY_AFTER_CAP_MS);
  assert.equal(backoffMs(1, undefined, () => 0), 500);
  assert.equal(backoffMs(3, undefined, () => 0), 2000);
  assert.equal(backoffMs(3, undefined, () => 1), 1500);
  assert.equal(backoffMs(10, undefined, () => 0), 8000);
});

Deno.test("failures: what is retried and what is not", () => {
  const ctx = { timedOut: false, responded: false, cancelled: false };
  const refused = classifyFailure(
    new TypeError("tcp connect error: Connection refused (os error 111)"),
    ctx,
  );
  assert.deepEqual(refused.kind === "network" && refused.problem, "refused");
  assert.equal(isRetryable(refused), true);
  const dns = classifyFailure(
    new TypeError("dns error: failed to lookup address information"),
    ctx,
  );
  assert.equal(isRetryable(dns), false);
  assert.equal(
    classifyFailure(new Error("x"), { ...ctx, timedOut: true, responded: true }).kind,
    "timeout",
  );
  assert.equal(classifyFailure(new Error("reset"), { ...ctx, responded: true }).kind, "dropped");
  assert.equal(classifyFailure(new Error("x"), { ...ctx, cancelled: true }).kind, "cancelled");
  assert.equal(
    isRetryable({ kind: "status", status: 429, message: "", code: "insufficient_quota" }),
    false,
  );
  assert.equal(isRetryable({ kind: "status", status: 503, message: "" }), true);
  assert.equal(isRetryable({ kind: "status", status: 400, message: "" }), false);
  assert.equal(isLoopback("http://localhost:1234/v1"), true);
  assert.equal(isLoopback("http://127.0.0.1:1/v1"), true);
  assert.equal(isLoopback("https://api.openai.com/v1"), false);
});

Deno.test("failures: each kind gets the contract's message and a remedy that fits", () => {
  const context = {
    label: "OpenAI",
    provider: "openai",
    model: "gpt-x",
    baseUrl: "https://api.openai.com/v1",
    timeoutSeconds: 120,
    retries: 2,
    waitedMs: 1500,
  };
  const connect = failureError({ kind: "timeout", phase: "connect" }, context);
  assert.ok(connect instanceof TimeoutError);
  assert.equal(connect.message, "Connection timeout");
  assert.match(connect.reason, /2 retries were made over 1.5 s/);
  assert.match(connect.remedy, /raise LLM\.timeout \(now 120 s\)/);

  const refused = failureError({ kind: "network", problem: "refused", message: "x" }, context);
  assert.ok(refused instanceof NetworkError);
  assert.equal(refused.message, "Connection refused");
  assert.match(refused.remedy, /outbound 443.*HTTPS_PROXY/);

  const dns = failureError({ kind: "network", problem: "dns", message: "x" }, context);
  assert.equal(dns.message, "Network unreachable");
  assert.match(
    dns.reason,
    /the host name 'api\.openai\.com' does not resolve \(DNS lookup failed\)/,
  );

  const tls = failureError({ kind: "network", problem: "tls", message: "UnknownIssuer" }, context);
  assert.match(tls.remedy, /DENO_CERT/);

  const quota = failureError(
    { kind: "status", status: 429, message: "You exceeded your quota", code: "insufficient_quota" },
    context,
  );
  assert.ok(quota instanceof RateLimitError);
  assert.match(quota.reason, /quota is used up.*retrying cannot help/);

  const long = failureError(
    { kind: "status", status: 400, message: "maximum context length is 8192 tokens" },
    context,
  );
  assert.ok(long instanceof ProviderRequestError);
  assert.match(long.remedy, /lower LLM\.max_context_length/);

  const down = failureError({ kind: "status", status: 503, message: "overloaded" }, context);
  assert.match(down.message, /server failed/);
  assert.match(down.reason, /HTTP 503 Service Unavailable: overloaded \(2 retries/);

  const forbidden = failureError({ kind: "status", status: 403, message: "no access" }, context);
  assert.ok(forbidden instanceof AuthenticationFailedError);
});

/**
 * Each preset's address and key rule, as docs/configuration.md's list of providers documents them. The
 * literals were checked against the providers' own documentation of their
 * OpenAI-compatible APIs and key formats; they are not copied from `lib/providers.ts`, so a typo
 * there (or in the docs) fails here. `prefix`: a key is required and must start with it
 * ("" when the provider's keys have no known prefix); `null`: no key is needed.
 */
const DOCUMENTED_PRESETS: { provider: ProviderName; baseUrl: string; prefix: string | null }[] = [
  { provider: "openai", baseUrl: "https://api.openai.com/v1", prefix: "sk-" },
  { provider: "anthropic", baseUrl: "https://api.anthropic.com/v1", prefix: "sk-ant-" },
  {
    provider: "gemini",
    baseUrl: "https://generativelanguage.googleapis.com/v1beta/openai/",
    prefix: "AIza",
  },
  { provider: "groq", baseUrl: "https://api.groq.com/openai/v1", prefix: "gsk_" },
  { provider: "deepseek", baseUrl: "https://api.deepseek.com/v1", prefix: "sk-" },
  { provider: "mistral", baseUrl: "https://api.mistral.ai/v1", prefix: "" },
  { provider: "openrouter", baseUrl: "https://openrouter.ai/api/v1", prefix: "sk-or-" },
  { provider: "together", baseUrl: "https://api.together.xyz/v1", prefix: "" },
  { provider: "xai", baseUrl: "https://api.x.ai/v1", prefix: "xai-" },
  { provider: "ollama", baseUrl: "http://localhost:11434/v1", prefix: null },
  { provider: "lmstudio", baseUrl: "http://localhost:1234/v1", prefix: null },
];

Deno.test("provider presets: each resolves to its documented address and key rule", () => {
  const llm = (provider: ProviderName, extra: Partial<LlmConfig> = {}): LlmConfig => ({
    provider,
    model: "some-model",
    maxTokens: 256,
    maxContextLength: 100_000,
    timeoutSeconds: 10,
    maxRetries: 0,
    ...extra,
  });
  const open = (config: LlmConfig, key?: string) => {
    const provider = createProvider({
      llm: config,
      env: createEnvironment(key === undefined ? {} : { LLM_API_KEY: key }),
    });
    provider.close();
    return provider;
  };
  // `- \`openai\`: https://api.openai.com/v1; key (LLM_API_KEY): required, starts with \`sk-\``
  const documented = (provider: string) => {
    const item = listItem(configurationPage, `\`${provider}\`: `);
    assert.ok(item, `docs/configuration.md lists no provider ${provider}`);
    const cells = /^`[^`]+`: (.*); key \(LLM_API_KEY\): (.*)$/.exec(item);
    assert.ok(cells, `docs/configuration.md's item for ${provider} reads: ${item}`);
    return [cells[1], cells[2]];
  };

  for (const { provider, baseUrl, prefix } of DOCUMENTED_PRESETS) {
    const [address, keyCell] = documented(provider);
    assert.equal(address, baseUrl, `docs/configuration.md's address of ${provider}`);
    if (prefix === null) {
      assert.equal(keyCell, "none needed", provider);
      assert.equal(open(llm(provider)).baseUrl, baseUrl, provider);
      continue;
    }
    assert.match(keyCell, /^required/, provider);
    if (prefix !== "") {
      assert.ok(keyCell.includes(`\`${prefix}\``), `docs/configuration.md's key of ${provider}`);
    }
    assert.throws(() => open(llm(provider)), InvalidApiKeyError, `${provider} needs a key`);
    assert.equal(open(llm(provider), `${prefix}0123456789abcdefghij`).baseUrl, baseUrl, provider);
    if (prefix !== "") {
      assert.throws(
        () => open(llm(provider), "key-0123456789abcdefghij"),
        InvalidApiKeyError,
        `${provider} keys start with ${prefix}`,
      );
    }
  }

  // Azure: the resource's endpoint (the SDK adds /deployments/<deployment>); a key always.
  const azure = llm("azure", {
    endpoint: "https://my-resource.openai.azure.com/",
    apiVersion: "2024-10-21",
  });
  assert.throws(() => open(azure), InvalidApiKeyError);
  assert.equal(
    open(azure, "0123456789abcdef").baseUrl,
    "https://my-resource.openai.azure.com/openai",
  );
  // openai-compatible: no address of its own, and a key only if that server wants one.
  assert.throws(() => open(llm("openai-compatible")), /Provider openai-compatible has no address/);
  const local = llm("openai-compatible", { baseUrl: "http://127.0.0.1:8000/v1" });
  assert.equal(open(local).baseUrl, "http://127.0.0.1:8000/v1");
  // base_url overrides any preset.
  assert.equal(
    open(llm("groq", { baseUrl: "https://gateway.example/v1" }), "gateway-key").baseUrl,
    "https://gateway.example/v1",
  );

  // Every preset is covered here, so a new one cannot go unchecked.
  assert.deepEqual(
    [...DOCUMENTED_PRESETS.map((p) => p.provider), "azure", "openai-compatible"].sort(),
    [...PROVIDER_NAMES].sort(),
  );
});
