/**
 * The model's output masked where it enters patchbay (lib/llm/masked_provider.ts): a
 * secret split between streamed pieces, a secret in a tool call's arguments written with
 * JSON escapes; credential shapes the model writes in code are left alone.
 */

import assert from "node:assert/strict";
import { maskedProvider } from "../../lib/llm/masked_provider.ts";
import type { GenerateRequest, GenerateResult, ModelProvider } from "../../lib/llm/provider.ts";
import { Redactor } from "../../lib/redact/redact.ts";

const SECRET = "ctx-secret-9d8c7b6a5f";

function answering(pieces: string[], args: string): ModelProvider {
  return {
    provider: "openai",
    label: "scripted",
    model: "m",
    baseUrl: "http://127.0.0.1",
    generate(request: GenerateRequest): Promise<GenerateResult> {
      for (const piece of pieces) request.onDelta?.(piece);
      return Promise.resolve({
        content: pieces.join(""),
        toolCalls: [{ id: "c1", name: "s__t", arguments: args }],
        finishReason: "tool_calls",
        usage: { promptTokens: 1, completionTokens: 1 },
        model: "m",
        retries: 0,
      } as GenerateResult);
    },
  } as unknown as ModelProvider;
}

Deno.test("a secret the model streams in pieces, or escapes in tool arguments, is masked", async () => {
  const redactor = new Redactor();
  redactor.addSecret(SECRET);
  const escaped = [...SECRET].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
    .join("");
  const provider = maskedProvider(
    answering(
      ["the pass is ctx-se", "cret-9d8", "c7b6a5f; password=hunter2 in the sample"],
      `{"note":"${escaped}","ok":"password=hunter2"}`,
    ),
    redactor,
  );
  const streamed: string[] = [];
  const result = await provider.generate({ messages: [], onDelta: (t) => streamed.push(t) });
  assert.equal(streamed.join(""), "the pass is [REDACTED]; password=hunter2 in the sample");
  assert.ok(streamed.every((piece) => !piece.includes("ctx-se")), "no piece shows part of it");
  assert.equal(result.content, "the pass is [REDACTED]; password=hunter2 in the sample");
  assert.deepEqual(JSON.parse(result.toolCalls[0].arguments), {
    note: "[REDACTED]",
    ok: "password=hunter2",
  });
  assert.equal(provider.model, "m", "the rest of the provider is as it was");
});

Deno.test("arguments without a secret are passed on byte for byte", async () => {
  const redactor = new Redactor();
  redactor.addSecret(SECRET);
  const args = '{ "path" : "a.txt",  "n": 1.50 }';
  const result = await maskedProvider(answering(["hi"], args), redactor).generate({
    messages: [],
  });
  assert.equal(result.toolCalls[0].arguments, args);
  assert.equal(result.content, "hi");
});
