/**
 * Builds one answer out of a chat-completions stream: text deltas in order, tool-call
 * deltas merged by their index, the finish reason, and the usage of the final chunk.
 *
 * Providers differ in small ways this tolerates: usage on the last choice chunk or on a
 * separate chunk without choices; tool calls without an `index` (matched by id, or
 * appended); missing tool-call ids (generated); `finish_reason: "stop"` with tool calls.
 *
 * @module
 */

import type {
  ChatCompletion as Completion,
  ChatCompletionChunk as Chunk,
  WireToolCall,
  WireUsage,
} from "./chat_wire.ts";
import type { FinishReason, ToolCall } from "./provider.ts";

/** Usage exactly as the provider reported it. */
export interface ReportedUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Prompt tokens read from the provider's prompt cache (part of `promptTokens`). */
  cacheReadTokens?: number;
  /** Prompt tokens written to the provider's prompt cache (part of `promptTokens`). */
  cacheWriteTokens?: number;
}

/** What the stream (or a whole completion) amounted to. */
export interface AssembledCompletion {
  content: string | null;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  /** `undefined` when the provider reported none. */
  usage: ReportedUsage | undefined;
  model: string | undefined;
}

interface PartialCall {
  id: string | undefined;
  name: string;
  arguments: string;
}

/** Accumulates chunks; {@linkcode push} returns the text each one adds. */
export class CompletionAssembler {
  #text = "";
  #calls: PartialCall[] = [];
  #byIndex = new Map<number, PartialCall>();
  #finish: string | null | undefined;
  #usage: ReportedUsage | undefined;
  #model: string | undefined;

  /** Adds one chunk; returns its text delta ("" when it has none). */
  push(chunk: Chunk): string {
    if (typeof chunk.model === "string" && chunk.model) this.#model = chunk.model;
    if (isObject(chunk.usage)) this.#usage = toUsage(chunk.usage);
    let delta = "";
    for (const choice of Array.isArray(chunk.choices) ? chunk.choices : []) {
      // Only the first choice is ever requested; others would be a provider quirk.
      if (!isObject(choice) || (choice.index ?? 0) !== 0) continue;
      const content = choice.delta?.content;
      if (typeof content === "string" && content !== "") {
        this.#text += content;
        delta += content;
      }
      const calls = choice.delta?.tool_calls;
      if (Array.isArray(calls)) { for (const call of calls) this.#mergeCall(call); }
      if (typeof choice.finish_reason === "string") this.#finish = choice.finish_reason;
    }
    return delta;
  }

  /** Whether any text or tool call has arrived. */
  get started(): boolean {
    return this.#text !== "" || this.#calls.length > 0;
  }

  /** The text so far. */
  get text(): string {
    return this.#text;
  }

  result(): AssembledCompletion {
    const toolCalls = this.#calls
      .filter((call) => call.name !== "")
      .map((call, i) => ({
        id: call.id ?? `call_${i + 1}`,
        name: call.name,
        arguments: call.arguments,
      }));
    return {
      content: this.#text === "" ? null : this.#text,
      toolCalls,
      finishReason: finishReason(this.#finish, toolCalls.length),
      usage: this.#usage,
      model: this.#model,
    };
  }

  #mergeCall(delta: WireToolCall): void {
    // The server's output is untrusted: a field of the wrong type is ignored, not fatal.
    if (typeof delta !== "object" || delta === null) return;
    let call = delta.index === undefined ? undefined : this.#byIndex.get(delta.index);
    if (!call && delta.index === undefined && delta.id) {
      call = this.#calls.find((c) => c.id === delta.id);
    }
    if (!call) {
      call = { id: undefined, name: "", arguments: "" };
      this.#calls.push(call);
      if (delta.index !== undefined) this.#byIndex.set(delta.index, call);
    }
    if (typeof delta.id === "string" && delta.id) call.id = delta.id;
    if (typeof delta.function?.name === "string") call.name += delta.function.name;
    if (typeof delta.function?.arguments === "string") call.arguments += delta.function.arguments;
  }
}

/** The same result from a non-streamed completion. */
export function assembleCompletion(completion: Completion): AssembledCompletion {
  const choice = Array.isArray(completion?.choices) ? completion.choices[0] : undefined;
  const message = choice?.message;
  const toolCalls: ToolCall[] = [];
  const calls = Array.isArray(message?.tool_calls) ? message.tool_calls : [];
  for (const [i, call] of calls.entries()) {
    if (call?.type !== "function" || typeof call.function?.name !== "string") continue;
    toolCalls.push({
      id: typeof call.id === "string" && call.id ? call.id : `call_${i + 1}`,
      name: call.function.name,
      arguments: typeof call.function.arguments === "string" ? call.function.arguments : "",
    });
  }
  const content = typeof message?.content === "string" && message.content !== ""
    ? message.content
    : null;
  return {
    content,
    toolCalls,
    finishReason: finishReason(
      typeof choice?.finish_reason === "string" ? choice.finish_reason : undefined,
      toolCalls.length,
    ),
    usage: isObject(completion.usage) ? toUsage(completion.usage) : undefined,
    model: typeof completion.model === "string" && completion.model ? completion.model : undefined,
  };
}

function toUsage(usage: WireUsage): ReportedUsage {
  const promptTokens = count(usage.prompt_tokens) ?? 0;
  const completionTokens = count(usage.completion_tokens) ?? 0;
  // OpenAI (and Gemini, Groq, xAI) count cached prompt tokens in `prompt_tokens_details`;
  // DeepSeek in `prompt_cache_hit_tokens`. Either way they are part of `prompt_tokens`.
  const cached = count(usage.prompt_tokens_details?.cached_tokens) ??
    count(usage.prompt_cache_hit_tokens);
  return {
    promptTokens,
    completionTokens,
    totalTokens: count(usage.total_tokens) ?? promptTokens + completionTokens,
    ...(cached ? { cacheReadTokens: Math.min(cached, promptTokens) } : {}),
  };
}

/** A token count as reported, if it is one. */
function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function isObject<T>(value: T): value is NonNullable<T> & object {
  return typeof value === "object" && value !== null;
}

function finishReason(reason: string | null | undefined, toolCalls: number): FinishReason {
  // Some servers say "stop" while calling tools; the calls are what matter.
  if (toolCalls > 0 && reason !== "length") return "tool_calls";
  switch (reason) {
    case "stop":
    case "length":
    case "content_filter":
      return reason;
    case "tool_calls":
    case "function_call":
      return "tool_calls";
    case null:
    case undefined:
      return "stop";
    default:
      return "other";
  }
}
