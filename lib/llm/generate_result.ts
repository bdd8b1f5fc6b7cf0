/**
 * The provider's answer from an assembled completion: {@linkcode generateResult} keeps the
 * usage the provider reported and, only when it reported none, estimates it (marked
 * `estimated`, so that everywhere it shows it reads as an estimate).
 *
 * @module
 */

import type { AssembledCompletion } from "./assemble.ts";
import type { GenerateRequest, GenerateResult, TokenUsage } from "./provider.ts";
import { estimateTextTokens, TokenEstimator } from "./tokens.ts";

/** The result of `request`, answered by `result`; `model` when the answer names none. */
export function generateResult(
  result: AssembledCompletion,
  request: GenerateRequest,
  model: string,
): Omit<GenerateResult, "retries"> {
  let usage: TokenUsage;
  if (result.usage) {
    usage = { ...result.usage, estimated: false };
  } else {
    // Only when the provider says nothing: estimated, and marked so everywhere it shows.
    const promptTokens = new TokenEstimator().raw(request.messages, request.tools ?? []);
    const completionTokens = estimateTextTokens(result.content ?? "") +
      result.toolCalls.reduce(
        (sum, call) => sum + estimateTextTokens(call.name + call.arguments),
        0,
      );
    usage = {
      promptTokens,
      completionTokens,
      totalTokens: promptTokens + completionTokens,
      estimated: true,
    };
  }
  return {
    content: result.content,
    toolCalls: result.toolCalls,
    finishReason: result.finishReason,
    usage,
    model: result.model ?? model,
  };
}
