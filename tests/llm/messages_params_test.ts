/**
 * patchbay's conversation as the Messages API takes it (`messages_params.ts`), each result
 * checked against the API's own rules (`tests/support/messages_checks.ts`): system blocks,
 * roles that alternate, tool calls and results paired, images, ids and texts the API
 * accepts; and the streamed and whole answers assembled (`messages_assemble.ts`).
 */

import assert from "node:assert/strict";
import { EMPTY_TEXT, OPENING_TEXT, toMessagesParams } from "../../lib/llm/messages_params.ts";
import { assembleMessage, MessageAssembler } from "../../lib/llm/messages_assemble.ts";
import type { ChatMessage } from "../../lib/llm/provider.ts";
import { bodyProblems } from "../support/messages_checks.ts";

const body = (messages: ChatMessage[]) => {
  const params = toMessagesParams(messages, [{
    name: "srv__echo",
    description: "Echo",
    parameters: { type: "object", properties: { text: { type: "string" } } },
  }]);
  return { model: "claude-test", max_tokens: 64, ...params };
};

Deno.test("messages: system prompt, tool calls and results, images, in the API's shape", () => {
  const request = body([
    { role: "system", content: "Be brief." },
    { role: "user", content: "Echo two things" },
    {
      role: "assistant",
      content: "Calling.",
      toolCalls: [
        { id: "call_1", name: "srv__echo", arguments: '{"text":"a"}' },
        { id: "call:2/x", name: "srv__echo", arguments: "not json" },
      ],
    },
    { role: "tool", toolCallId: "call_1", content: "a" },
    { role: "tool", toolCallId: "call:2/x", content: "invalid arguments" },
    {
      role: "user",
      content: [{ type: "text", text: "Images from the tools:" }, {
        type: "image",
        mimeType: "image/png",
        data: "iVBORw0KGgo=",
      }, { type: "image", mimeType: "image/svg+xml", data: "PHN2Zz4=" }],
    },
  ]);
  assert.deepEqual(bodyProblems(request), []);
  assert.deepEqual(request.system, [{ type: "text", text: "Be brief." }]);
  assert.deepEqual(request.messages.map((m) => m.role), ["user", "assistant", "user"]);
  const [, assistant, results] = request.messages;
  assert.deepEqual(assistant.content[1], {
    type: "tool_use",
    id: "call_1",
    name: "srv__echo",
    input: { text: "a" },
  });
  // An id another provider made is made acceptable, the same for the call and its result;
  // arguments that are not an object go as {} (the result says what was wrong).
  assert.deepEqual(assistant.content[2], {
    type: "tool_use",
    id: "call_2_x",
    name: "srv__echo",
    input: {},
  });
  assert.deepEqual(results.content.map((b) => b.type), [
    "tool_result",
    "tool_result",
    "text",
    "image",
    "text",
  ]);
  assert.deepEqual(results.content[1], {
    type: "tool_result",
    tool_use_id: "call_2_x",
    content: "invalid arguments",
  });
  assert.deepEqual(results.content[3], {
    type: "image",
    source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" },
  });
  assert.match((results.content[4] as { text: string }).text, /image\/svg\+xml was not sent/);
  assert.deepEqual(request.tools, [{
    name: "srv__echo",
    description: "Echo",
    input_schema: { type: "object", properties: { text: { type: "string" } } },
  }]);
});

Deno.test("messages: empty texts, a conversation opened by the model, a trailing prefill", () => {
  const request = body([
    { role: "assistant", content: "Earlier answer" },
    { role: "user", content: "" },
    { role: "assistant", content: null },
    { role: "user", content: "   " },
    { role: "assistant", content: "Prefill ends in a blank " },
  ]);
  assert.deepEqual(bodyProblems(request), []);
  assert.deepEqual(request.messages[0].content, [{ type: "text", text: OPENING_TEXT }]);
  assert.deepEqual(request.messages[2].content, [{ type: "text", text: EMPTY_TEXT }]);
  assert.deepEqual(request.messages.at(-1)!.content, [{
    type: "text",
    text: "Prefill ends in a blank",
  }]);
  assert.equal(request.system, undefined);
  assert.equal(toMessagesParams([{ role: "user", content: "x" }]).tools, undefined);
});

Deno.test("messages: a streamed answer's text, tool calls and cached usage assembled", () => {
  const assembler = new MessageAssembler();
  const deltas: string[] = [];
  const events = [
    {
      type: "message_start",
      message: {
        model: "claude-test-20250929",
        usage: {
          input_tokens: 12,
          cache_read_input_tokens: 3000,
          cache_creation_input_tokens: 200,
        },
      },
    },
    { type: "ping" },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "lo" } },
    { type: "content_block_stop", index: 0 },
    {
      type: "content_block_start",
      index: 1,
      content_block: { type: "tool_use", id: "toolu_1", name: "srv__echo", input: {} },
    },
    {
      type: "content_block_delta",
      index: 1,
      delta: { type: "input_json_delta", partial_json: '{"te' },
    },
    {
      type: "content_block_delta",
      index: 1,
      delta: { type: "input_json_delta", partial_json: 'xt":"a"}' },
    },
    {
      type: "content_block_start",
      index: 2,
      content_block: { type: "tool_use", id: "toolu_2", name: "srv__echo", input: {} },
    },
    { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 30 } },
    { type: "surprise", whatever: true },
  ];
  for (const event of events) deltas.push(assembler.push(event as never));
  assert.equal(deltas.join(""), "Hello");
  const result = assembler.result();
  assert.equal(result.content, "Hello");
  assert.deepEqual(result.toolCalls, [
    { id: "toolu_1", name: "srv__echo", arguments: '{"text":"a"}' },
    { id: "toolu_2", name: "srv__echo", arguments: "{}" },
  ]);
  assert.equal(result.finishReason, "tool_calls");
  assert.equal(result.model, "claude-test-20250929");
  assert.deepEqual(result.usage, {
    promptTokens: 3212,
    completionTokens: 30,
    totalTokens: 3242,
    cacheReadTokens: 3000,
    cacheWriteTokens: 200,
  });

  const whole = assembleMessage({
    model: "m",
    content: [{ type: "text", text: "Done." }, {
      type: "tool_use",
      id: "toolu_9",
      name: "srv__echo",
      input: { text: "b" },
    }],
    stop_reason: "max_tokens",
    usage: { input_tokens: 5, output_tokens: 2 },
  });
  assert.equal(whole.content, "Done.");
  assert.deepEqual(whole.toolCalls, [{
    id: "toolu_9",
    name: "srv__echo",
    arguments: '{"text":"b"}',
  }]);
  assert.equal(whole.finishReason, "length");
  assert.deepEqual(whole.usage, { promptTokens: 5, completionTokens: 2, totalTokens: 7 });
  // Garbage is ignored, not fatal.
  assert.equal(assembleMessage(null as never).usage, undefined);
  assert.equal(new MessageAssembler().push("x" as never), "");
});
