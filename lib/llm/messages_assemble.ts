/**
 * Builds one answer out of a Messages API stream ({@linkcode MessageAssembler}) or a whole
 * message ({@linkcode assembleMessage}): text blocks in order, `tool_use` blocks with their
 * input assembled from `input_json_delta` pieces, the stop reason, and the usage, with the
 * prompt split the API reports (`input_tokens` after the last cache breakpoint,
 * `cache_read_input_tokens`, `cache_creation_input_tokens`) summed into the whole prompt.
 *
 * Every field may be missing or of another type (the model's server is not trusted): such
 * a field is ignored, not fatal.
 *
 * @module
 */

import type { AssembledCompletion, ReportedUsage } from "./assemble.ts";
import { isRecord } from "./chat_wire.ts";
import type { AnswerBlock, MessagesAnswer, MessagesEvent, MessagesUsage } from "./messages_wire.ts";
import type { FinishReason, ToolCall } from "./provider.ts";

interface Block {
  kind: "text" | "tool_use" | "other";
  text: string;
  id?: string;
  name?: string;
  /** `tool_use`: the input as it started (`content_block_start`), for a call without deltas. */
  startInput?: unknown;
  json: string;
}

/** Accumulates stream events; {@linkcode push} returns the text each one adds. */
export class MessageAssembler {
  #blocks = new Map<number, Block>();
  #order: Block[] = [];
  #stop: string | undefined;
  #usage: MessagesUsage = {};
  #reported = false;
  #model: string | undefined;

  /** Adds one event; returns its text delta ("" when it has none). */
  push(event: MessagesEvent): string {
    if (typeof event !== "object" || event === null || Array.isArray(event)) return "";
    switch (event.type) {
      case "message_start":
        if (isRecord(event.message)) {
          if (typeof event.message.model === "string") this.#model = event.message.model;
          this.#mergeUsage(event.message.usage);
        }
        return "";
      case "content_block_start":
        this.#start(event.index, event.content_block);
        return "";
      case "content_block_delta":
        return this.#delta(event);
      case "message_delta":
        if (isRecord(event.delta) && typeof event.delta.stop_reason === "string") {
          this.#stop = event.delta.stop_reason;
        }
        this.#mergeUsage(event.usage);
        return "";
      default:
        // content_block_stop, message_stop, ping, and event types added later.
        return "";
    }
  }

  result(): AssembledCompletion {
    const text = this.#order.filter((b) => b.kind === "text").map((b) => b.text).join("");
    const toolCalls = this.#order.flatMap((block, i): ToolCall[] =>
      block.kind === "tool_use" && block.name
        ? [{
          id: block.id || `toolu_${i + 1}`,
          name: block.name,
          arguments: block.json !== "" ? block.json : inputText(block.startInput),
        }]
        : []
    );
    return {
      content: text === "" ? null : text,
      toolCalls,
      finishReason: finishReason(this.#stop, toolCalls.length),
      usage: this.#reported ? toUsage(this.#usage) : undefined,
      model: this.#model,
    };
  }

  #start(index: unknown, block: AnswerBlock | undefined): void {
    if (typeof index !== "number" || !isRecord(block)) return;
    const kind = block.type === "text" ? "text" : block.type === "tool_use" ? "tool_use" : "other";
    const entry: Block = {
      kind,
      text: kind === "text" && typeof block.text === "string" ? block.text : "",
      json: "",
      ...(kind === "tool_use"
        ? {
          id: typeof block.id === "string" ? block.id : undefined,
          name: typeof block.name === "string" ? block.name : undefined,
          startInput: block.input,
        }
        : {}),
    };
    this.#blocks.set(index, entry);
    this.#order.push(entry);
  }

  #delta(event: MessagesEvent): string {
    const block = typeof event.index === "number" ? this.#blocks.get(event.index) : undefined;
    const delta = event.delta;
    if (!block || !isRecord(delta)) return "";
    if (delta.type === "text_delta" && block.kind === "text" && typeof delta.text === "string") {
      block.text += delta.text;
      return delta.text;
    }
    if (
      delta.type === "input_json_delta" && block.kind === "tool_use" &&
      typeof delta.partial_json === "string"
    ) {
      block.json += delta.partial_json;
    }
    return "";
  }

  /** The API reports usage in `message_start` and again, cumulative, in `message_delta`. */
  #mergeUsage(usage: unknown): void {
    if (!isRecord(usage)) return;
    this.#reported = true;
    for (
      const key of [
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
      ] as const
    ) {
      const value = count(usage[key]);
      if (value !== undefined) this.#usage[key] = value;
    }
  }
}

/** The same result from a whole message (a request without `onDelta`). */
export function assembleMessage(answer: MessagesAnswer): AssembledCompletion {
  const assembler = new MessageAssembler();
  if (typeof answer !== "object" || answer === null) return assembler.result();
  assembler.push({ type: "message_start", message: { model: answer.model, usage: answer.usage } });
  const content = Array.isArray(answer.content) ? answer.content : [];
  content.forEach((block, index) => {
    assembler.push({ type: "content_block_start", index, content_block: block });
  });
  assembler.push({
    type: "message_delta",
    delta: { stop_reason: typeof answer.stop_reason === "string" ? answer.stop_reason : null },
  });
  return assembler.result();
}

/** The API's usage as patchbay's: the prompt is its three parts together. */
function toUsage(usage: MessagesUsage): ReportedUsage {
  const uncached = usage.input_tokens ?? 0;
  const read = usage.cache_read_input_tokens ?? 0;
  const written = usage.cache_creation_input_tokens ?? 0;
  const promptTokens = uncached + read + written;
  const completionTokens = usage.output_tokens ?? 0;
  return {
    promptTokens,
    completionTokens,
    totalTokens: promptTokens + completionTokens,
    ...(read > 0 ? { cacheReadTokens: read } : {}),
    ...(written > 0 ? { cacheWriteTokens: written } : {}),
  };
}

/** A tool call's input that arrived whole (a message not streamed) as JSON text. */
function inputText(input: unknown): string {
  return isRecord(input) ? JSON.stringify(input) : "{}";
}

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function finishReason(reason: string | undefined, toolCalls: number): FinishReason {
  if (toolCalls > 0 && reason !== "max_tokens") return "tool_calls";
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
    case "pause_turn":
    case undefined:
      return "stop";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "refusal":
      return "content_filter";
    default:
      return "other";
  }
}
