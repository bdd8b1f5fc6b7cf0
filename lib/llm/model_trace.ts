/**
 * The `--trace-model` line of one model request: {@linkcode traceGeneration} runs the
 * request and records one line for it (its retries included) with the usage, the finish
 * reason and, when bodies are asked for, the messages and the answer; or the failure.
 *
 * @module
 */

import type { LlmConfig } from "../config/types.ts";
import { activeTrace } from "../trace/active.ts";
import type { GenerateRequest, GenerateResult } from "./provider.ts";

/** The model a traced request goes to. */
export interface TracedModel {
  provider: LlmConfig["provider"];
  model: string;
  /** The API's method. @default "chat/completions" */
  method?: string;
}

/** Runs `generate(request)`, recording it when model tracing is on. */
export async function traceGeneration(
  target: TracedModel,
  request: GenerateRequest,
  generate: (request: GenerateRequest) => Promise<GenerateResult>,
): Promise<GenerateResult> {
  const trace = activeTrace();
  if (!trace?.model) return await generate(request);
  // With `--trace-model`: one line per request (its retries included), bodies when asked.
  const started = performance.now();
  const common = {
    kind: "model" as const,
    method: target.method ?? "chat/completions",
    provider: target.provider,
    model: target.model,
    stream: request.onDelta !== undefined,
    // The request's span, so the line and the exported span can be matched.
    ...(request.trace ? { trace_id: request.trace.traceId, span_id: request.trace.spanId } : {}),
    ...(trace.modelBodies ? { request: { messages: request.messages, tools: request.tools } } : {}),
  };
  const ms = () => Math.round((performance.now() - started) * 100) / 100;
  try {
    const result = await generate(request);
    trace.record({
      ...common,
      answered_by: result.model,
      ms: ms(),
      prompt_tokens: result.usage.promptTokens,
      completion_tokens: result.usage.completionTokens,
      total_tokens: result.usage.totalTokens,
      ...(result.usage.cacheReadTokens ? { cache_read_tokens: result.usage.cacheReadTokens } : {}),
      ...(result.usage.cacheWriteTokens
        ? { cache_write_tokens: result.usage.cacheWriteTokens }
        : {}),
      estimated: result.usage.estimated,
      finish_reason: result.finishReason,
      retries: result.retries,
      tool_calls: result.toolCalls.length,
      ...(trace.modelBodies
        ? { response: { content: result.content, tool_calls: result.toolCalls } }
        : {}),
    });
    return result;
  } catch (error) {
    trace.record({ ...common, ms: ms(), failure: (error as Error).message });
    throw error;
  }
}
