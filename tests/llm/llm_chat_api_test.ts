/**
 * patchbay's own OpenAI-compatible client (`lib/llm/chat_api.ts`) against raw loopback
 * servers that answer exactly what each test needs: error bodies of every shape, streams
 * with `[DONE]`, error events and broken JSON, answers past the cap, Azure's paths, a
 * server that ignores `stream`; and how the provider words an answer it cannot read.
 */

import assert from "node:assert/strict";
import { createEnvironment } from "../../lib/env.ts";
import { ConnectionLostError, ProviderRequestError } from "../../lib/errors.ts";
import { CompletionAssembler } from "../../lib/llm/assemble.ts";
import { ChatApi, MAX_ERROR_BODY_BYTES } from "../../lib/llm/chat_api.ts";
import {
  type ChatCompletionChunk,
  MalformedAnswerError,
  ModelApiError,
} from "../../lib/llm/chat_wire.ts";
import { createOpenAiProvider } from "../../lib/llm/openai_provider.ts";
import { captureAny } from "../support/errors.ts";

interface Seen {
  method: string;
  url: URL;
  headers: Headers;
  body: string;
}

/** A loopback server answering every request with `answer(request)`; it records each one. */
function serve(answer: (seen: Seen) => Response) {
  const seen: Seen[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const request = {
      method: req.method,
      url: new URL(req.url),
      headers: req.headers,
      body: await req.text(),
    };
    seen.push(request);
    return answer(request);
  });
  return {
    seen,
    baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** The provider against `baseUrl`, keyless, with `maxRetries`; backoff without jitter. */
function providerAt(baseUrl: string, maxRetries: number) {
  const provider = createOpenAiProvider({
    llm: {
      provider: "openai-compatible",
      model: "m",
      maxTokens: 16,
      maxContextLength: 1000,
      timeoutSeconds: 5,
      maxRetries,
      baseUrl,
    },
    env: createEnvironment({}),
    random: () => 0,
  });
  return Object.assign(provider, { [Symbol.dispose]: () => provider.close() });
}

const BODY = { model: "m", messages: [{ role: "user" as const, content: "hi" }] };

const sse = (...events: string[]) =>
  new Response(events.join(""), { headers: { "content-type": "text/event-stream" } });
const data = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
const textChunk = (text: string): ChatCompletionChunk => ({
  choices: [{ index: 0, delta: { content: text }, finish_reason: null }],
});

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<string> {
  const assembler = new CompletionAssembler();
  for await (const chunk of stream) assembler.push(chunk);
  return assembler.text;
}

Deno.test("chat api: an error answer keeps the status, the provider's words and code, whatever the body's shape", async () => {
  const bodies: [number, string, string, string | undefined][] = [
    [
      429,
      '{"error":{"message":"Rate limit reached","code":"rate_limit"}}',
      "Rate limit reached",
      "rate_limit",
    ],
    [400, '{"message":"model is required"}', "model is required", undefined],
    [403, '{"error":"forbidden here"}', "forbidden here", undefined],
    [502, "<html>Bad gateway</html>\n", "<html>Bad gateway</html>", undefined],
    [500, "", "", undefined],
  ];
  for (const [status, body, said, code] of bodies) {
    await using server = serve(() =>
      new Response(body, { status, headers: { "x-request-id": "r1" } })
    );
    const api = new ChatApi({ baseUrl: server.baseUrl, apiKey: "k" });
    const error = await api.complete(BODY).catch((e) => e);
    assert.ok(error instanceof ModelApiError, String(error));
    assert.equal(error.status, status);
    assert.equal(error.providerMessage, said, body);
    assert.equal(error.code, code);
    assert.equal(error.headers?.get("x-request-id"), "r1");
    assert.equal(error.message, said ? `${status} ${said}` : `${status} status code (no body)`);
  }
});

Deno.test("chat api: a success status with an error object and no completion is the API's error", async () => {
  await using server = serve(() =>
    Response.json({ error: { message: "quota gone", code: "insufficient_quota" } })
  );
  const api = new ChatApi({ baseUrl: server.baseUrl });
  for (const exchange of [() => api.complete(BODY), async () => collect(await api.stream(BODY))]) {
    const error = await exchange().catch((e) => e);
    assert.ok(error instanceof ModelApiError, String(error));
    assert.equal(error.status, 200);
    assert.equal(error.providerMessage, "quota gone");
    assert.equal(error.code, "insufficient_quota");
  }
});

Deno.test("chat api: a gateway's numeric error code stands for the status; an error member of null keeps the body's words", async () => {
  {
    await using server = serve(() =>
      Response.json({ error: { message: "upstream down", code: 502 } })
    );
    const error = await new ChatApi({ baseUrl: server.baseUrl }).complete(BODY).catch((e) => e);
    assert.ok(error instanceof ModelApiError, String(error));
    assert.equal(error.status, 502);
    assert.equal(error.providerMessage, "upstream down");
  }
  {
    await using server = serve(() =>
      Response.json({ error: null, detail: "bad thing" }, { status: 400 })
    );
    const error = await new ChatApi({ baseUrl: server.baseUrl }).complete(BODY).catch((e) => e);
    assert.ok(error instanceof ModelApiError, String(error));
    assert.equal(error.providerMessage, '{"error":null,"detail":"bad thing"}');
  }
});

Deno.test("chat api: an error body is read only up to its cap", async () => {
  await using server = serve(() =>
    new Response("x".repeat(4 * MAX_ERROR_BODY_BYTES), { status: 500 })
  );
  const error = await new ChatApi({ baseUrl: server.baseUrl }).complete(BODY).catch((e) => e);
  assert.ok(error instanceof ModelApiError);
  assert.equal(error.providerMessage.length, MAX_ERROR_BODY_BYTES);
});

Deno.test("chat api: a stream ends at [DONE]; an error event or an error chunk inside it is the API's error", async () => {
  {
    await using server = serve(() =>
      sse(
        data(textChunk("Hel")),
        ": keep-alive\n\n",
        data(textChunk("lo")),
        "data: [DONE]\n\n",
        data(textChunk("!")),
      )
    );
    const api = new ChatApi({ baseUrl: server.baseUrl, apiKey: "k" });
    assert.equal(await collect(await api.stream(BODY)), "Hello");
    const sent = JSON.parse(server.seen[0].body);
    assert.equal(sent.stream, true);
    assert.equal(server.seen[0].headers.get("authorization"), "Bearer k");
  }
  for (
    const events of [
      [data(textChunk("a")), `event: error\n${data({ error: { message: "overloaded" } })}`],
      [data(textChunk("a")), data({ error: { message: "overloaded", code: "server_busy" } })],
    ]
  ) {
    await using server = serve(() => sse(...events));
    const stream = await new ChatApi({ baseUrl: server.baseUrl }).stream(BODY);
    const error = await collect(stream).catch((e) => e);
    assert.ok(error instanceof ModelApiError, String(error));
    // No status: the answer had started, so it is a dropped answer, not a refusal.
    assert.equal(error.status, undefined);
    assert.equal(error.message, "overloaded");
  }
  {
    await using server = serve(() =>
      sse(data(textChunk("a")), "event: error\ndata: upstream reset\n\n")
    );
    const stream = await new ChatApi({ baseUrl: server.baseUrl }).stream(BODY);
    const error = await collect(stream).catch((e) => e);
    assert.ok(error instanceof ModelApiError, String(error));
    assert.equal(error.message, "upstream reset");
  }
  {
    // A broken event in a stream is a cut answer (worth another attempt), not a wrong address.
    await using server = serve(() => sse(data(textChunk("a")), "data: {not json\n\n"));
    const stream = await new ChatApi({ baseUrl: server.baseUrl }).stream(BODY);
    const error = await collect(stream).catch((e) => e);
    assert.ok(error instanceof Error && !(error instanceof MalformedAnswerError), String(error));
    assert.match(error.message, /a streamed event was not JSON: "\{not json"/);
  }
});

Deno.test("chat api: the last event counts without its closing blank line, and the body, not its label, says it is a stream", async () => {
  const last = data({
    choices: [{ index: 0, delta: { content: "b" }, finish_reason: "length" }],
    usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 },
  }).trimEnd();
  for (const type of ["text/event-stream", "application/json", "text/plain"]) {
    await using server = serve(() =>
      new Response(data(textChunk("a")) + last, { headers: { "content-type": type } })
    );
    const assembler = new CompletionAssembler();
    for await (const chunk of await new ChatApi({ baseUrl: server.baseUrl }).stream(BODY)) {
      assembler.push(chunk);
    }
    const result = assembler.result();
    assert.equal(result.content, "ab", type);
    assert.equal(result.finishReason, "length", type);
    assert.deepEqual(result.usage, { promptTokens: 7, completionTokens: 2, totalTokens: 9 }, type);
  }
});

Deno.test("chat api: an event stream with no event in it was cut; another body without one is not the API's", async () => {
  {
    await using server = serve(() => sse(": OPENROUTER PROCESSING\n\n"));
    const stream = await new ChatApi({ baseUrl: server.baseUrl }).stream(BODY);
    const error = await collect(stream).catch((e) => e);
    assert.ok(error instanceof Error && !(error instanceof MalformedAnswerError), String(error));
    assert.equal(error.message, "the answer ended before its first event");
  }
  {
    await using server = serve(() =>
      new Response("Service temporarily moved", { headers: { "content-type": "text/plain" } })
    );
    const stream = await new ChatApi({ baseUrl: server.baseUrl }).stream(BODY);
    const error = await collect(stream).catch((e) => e);
    assert.ok(error instanceof MalformedAnswerError, String(error));
    assert.equal(
      error.message,
      `the answer is not the API's (text/plain): "Service temporarily moved"`,
    );
  }
});

Deno.test("chat api: an answer past the cap is refused, streamed or whole", async () => {
  const big = "y".repeat(5000);
  {
    await using server = serve(() => sse(data(textChunk(big))));
    const api = new ChatApi({ baseUrl: server.baseUrl, maxAnswerBytes: 1000 });
    const error = await collect(await api.stream(BODY)).catch((e) => e);
    assert.ok(error instanceof MalformedAnswerError, String(error));
    assert.equal(error.message, "the streamed answer grew past 1000 bytes, patchbay's cap");
  }
  {
    await using server = serve(() => Response.json({ choices: [{ message: { content: big } }] }));
    const api = new ChatApi({ baseUrl: server.baseUrl, maxAnswerBytes: 1000 });
    const error = await api.complete(BODY).catch((e) => e);
    assert.ok(error instanceof MalformedAnswerError, String(error));
    assert.equal(error.message, "the answer grew past 1000 bytes, patchbay's cap");
    // Under the cap the same answer is read.
    const roomy = new ChatApi({ baseUrl: server.baseUrl, maxAnswerBytes: 10_000 });
    assert.equal((await roomy.complete(BODY)).choices?.[0].message?.content, big);
  }
});

Deno.test("chat api: Azure puts the deployment in the path once, with api-version and api-key", async () => {
  await using server = serve(() => Response.json({ choices: [], data: [{ id: "gpt-4o" }] }));
  const azure = { apiVersion: "2024-10-21", deployment: "my deploy" };
  const origin = server.baseUrl.replace(/\/v1$/, "");
  const api = new ChatApi({ baseUrl: `${origin}/openai/`, apiKey: "azure-key", azure });
  await api.complete(BODY);
  assert.deepEqual(await api.listModels(), ["gpt-4o"]);
  // A base URL that already names the deployment gets none added.
  const named = new ChatApi({ baseUrl: `${origin}/openai/deployments/d1`, apiKey: "k", azure });
  await named.complete(BODY);
  const [chat, models, direct] = server.seen;
  assert.equal(chat.url.pathname, "/openai/deployments/my%20deploy/chat/completions");
  assert.equal(chat.url.searchParams.get("api-version"), "2024-10-21");
  assert.equal(chat.headers.get("api-key"), "azure-key");
  assert.equal(chat.headers.get("authorization"), null);
  assert.equal(models.url.pathname, "/openai/models");
  assert.equal(models.method, "GET");
  assert.equal(direct.url.pathname, "/openai/deployments/d1/chat/completions");
});

Deno.test("chat api: the path goes after base_url's own, and a query in base_url is kept", async () => {
  await using server = serve(() => Response.json({ data: [] }));
  await new ChatApi({ baseUrl: `${server.baseUrl}/?tenant=t1` }).listModels();
  assert.equal(server.seen[0].url.pathname, "/v1/models");
  assert.equal(server.seen[0].url.searchParams.get("tenant"), "t1");
});

Deno.test("chat api: a server that ignores stream answers whole, and the answer is taken as one chunk", async () => {
  await using server = serve(() =>
    Response.json({
      model: "local-model",
      choices: [{
        index: 0,
        message: {
          content: "Sure.",
          tool_calls: [{ id: "t1", type: "function", function: { name: "echo", arguments: "{}" } }],
        },
        finish_reason: "tool_calls",
      }],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    })
  );
  const assembler = new CompletionAssembler();
  for await (const chunk of await new ChatApi({ baseUrl: server.baseUrl }).stream(BODY)) {
    assembler.push(chunk);
  }
  const result = assembler.result();
  assert.equal(result.content, "Sure.");
  assert.deepEqual(result.toolCalls, [{ id: "t1", name: "echo", arguments: "{}" }]);
  assert.equal(result.finishReason, "tool_calls");
  assert.deepEqual(result.usage, { promptTokens: 3, completionTokens: 2, totalTokens: 5 });
  assert.equal(result.model, "local-model");
});

Deno.test("chat api: chunks of the wrong shape are ignored, not fatal", () => {
  const assembler = new CompletionAssembler();
  const odd = [
    { choices: { 0: "not an array" } },
    { choices: [null, "x", { index: 0, delta: { tool_calls: "nope" } }] },
    { choices: [{ index: 0, delta: { tool_calls: [null, { index: 0, function: { name: 7 } }] } }] },
    {
      choices: [{ index: 0, delta: { content: "ok" }, finish_reason: 3 }],
      usage: { prompt_tokens: "9" },
    },
    { model: 5, usage: "lots" },
  ] as unknown as ChatCompletionChunk[];
  for (const chunk of odd) assembler.push(chunk);
  const result = assembler.result();
  assert.equal(result.content, "ok");
  assert.deepEqual(result.toolCalls, []);
  assert.equal(result.finishReason, "stop");
  assert.deepEqual(result.usage, { promptTokens: 0, completionTokens: 0, totalTokens: 0 });
  assert.equal(result.model, undefined);
});

Deno.test("an answer that is not the API's (a web page) says so, names base_url, and is not retried", async () => {
  await using server = serve(() =>
    new Response("<!doctype html><title>Welcome</title>", {
      headers: { "content-type": "text/html" },
    })
  );
  using provider = providerAt(server.baseUrl, 2);
  for (const onDelta of [undefined, () => {}]) {
    const error = await captureAny(
      provider.generate({ messages: [{ role: "user", content: "hi" }], onDelta }),
    );
    assert.ok(error instanceof ProviderRequestError, String(error));
    assert.match(error.message, /sent an answer patchbay cannot read/);
    assert.match(
      error.reason ?? "",
      /^127\.0\.0\.1:\d+ answered, but the answer is not the API's \(text\/html\): "<!doctype html><title>Welcome<\/title>"$/,
    );
    assert.match(error.remedy ?? "", /LLM\.base_url/);
  }
  assert.equal(server.seen.length, 2, "one request each, no retry");
});

Deno.test("a broken event mid-stream is a cut answer, tried again", async () => {
  let requests = 0;
  await using server = serve(() =>
    ++requests === 1
      ? sse(data(textChunk("Hal")), "data: {oops\n\n")
      : sse(data(textChunk("Hello.")), "data: [DONE]\n\n")
  );
  using provider = providerAt(server.baseUrl, 1);
  const notices: string[] = [];
  const result = await provider.generate({
    messages: [{ role: "user", content: "hi" }],
    onDelta: () => {},
    onRetry: (notice) => notices.push(notice.reason),
  });
  assert.equal(result.content, "Hello.");
  assert.equal(result.retries, 1);
  assert.deepEqual(notices, ["the connection dropped mid-answer"]);
});

Deno.test("a whole answer cut off after its headers reads as a connection closed mid-answer", async () => {
  await using server = serve(() =>
    new Response(
      new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"choices": [{"message": {"content": "Hal'));
          setTimeout(() => controller.error(new Error("cut")), 50);
        },
      }),
      { headers: { "content-type": "application/json" } },
    )
  );
  using provider = providerAt(server.baseUrl, 0);
  const error = await captureAny(
    provider.generate({ messages: [{ role: "user", content: "hi" }] }),
  );
  assert.ok(error instanceof ConnectionLostError, String(error));
  assert.match(error.reason ?? "", /closed mid-answer \(no retry was made\)/);
});
