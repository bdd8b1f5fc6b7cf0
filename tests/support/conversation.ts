/**
 * Conversations for the memory tests: realistic messages, tool calls and results
 * included.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { AppendResult } from "../../lib/memory/mod.ts";
import type { StoredMessage } from "../../lib/memory/types.ts";

let clock = Date.parse("2026-03-01T09:00:00Z");

/** A timestamp one second after the previous one, so order and times are predictable. */
export function tick(): string {
  clock += 1000;
  return new Date(clock).toISOString();
}

/** One exchange: a question, a tool call, its result, and the answer. */
export function exchange(question: string, model = "gpt-4o-mini"): StoredMessage[] {
  const callId = `call_${crypto.randomUUID().slice(0, 8)}`;
  return [
    { role: "user", content: question, timestamp: tick() },
    {
      role: "assistant",
      content: null,
      toolCalls: [{ id: callId, name: "fs__read_file", arguments: '{"path":"/tmp/notes.txt"}' }],
      model,
      timestamp: tick(),
    },
    {
      role: "tool",
      content: 'line one\nline two with "quotes" and unicode: żółw 🐢',
      toolCallId: callId,
      server: "fs",
      tool: "read_file",
      isError: false,
      timestamp: tick(),
    },
    { role: "assistant", content: `Answer to: ${question}`, model, timestamp: tick() },
  ];
}

/** A system prompt followed by `turns` exchanges. */
export function conversation(turns = 2, model = "gpt-4o-mini"): StoredMessage[] {
  const messages: StoredMessage[] = [
    { role: "system", content: "You are a helpful assistant.", timestamp: tick() },
  ];
  for (let i = 1; i <= turns; i++) messages.push(...exchange(`Question ${i}?`, model));
  return messages;
}

/** Appends `messages` to `session` in order, asserting that each append had `outcome`. */
export async function appendEach(
  session: { append(message: StoredMessage): Promise<AppendResult> },
  messages: readonly StoredMessage[],
  outcome: AppendResult,
): Promise<void> {
  for (const [i, message] of messages.entries()) {
    assert.equal(await session.append(message), outcome, `message ${i + 1} of ${messages.length}`);
  }
}
