/**
 * Token counts without a tokenizer.
 *
 * OpenAI-compatible APIs do not expose their tokenizers, and bundling every provider's
 * vocabulary would cost megabytes, so patchbay estimates: one token per
 * {@linkcode BYTES_PER_TOKEN} bytes of UTF-8, plus {@linkcode TOKENS_PER_MESSAGE} per
 * message. For English prose and JSON this errs slightly high (modern BPE vocabularies
 * average 4 to 5 bytes per token); for CJK text (3 bytes per character, about one token
 * each) it errs low by about a quarter.
 *
 * {@linkcode TokenEstimator} then corrects the estimate with what the provider reported:
 * after each answer, the ratio between the reported prompt tokens and the estimate for the
 * same prompt scales later estimates. Estimates serve only to trim history and to keep a
 * request inside `total_tokens_limit`; usage figures come from the provider whenever it
 * reports them.
 *
 * @module
 */

import type { ChatMessage, ToolDefinition } from "./provider.ts";

/** UTF-8 bytes counted as one token. */
export const BYTES_PER_TOKEN = 4;

/** Tokens a chat format spends around each message (role, separators). */
export const TOKENS_PER_MESSAGE = 4;

/** Tokens assumed for one image (a detailed 512 px tile costs about this much). */
export const TOKENS_PER_IMAGE = 800;

/** Bounds of the calibration factor: a wild report must not wreck trimming. */
const FACTOR_RANGE = { min: 0.5, max: 3 } as const;

const encoder = new TextEncoder();

/** Estimated tokens of a piece of text. */
export function estimateTextTokens(text: string): number {
  if (text === "") return 0;
  return Math.ceil(encoder.encode(text).length / BYTES_PER_TOKEN);
}

/** Estimated tokens of one message, its tool calls included. */
export function estimateMessageTokens(message: ChatMessage): number {
  let tokens = TOKENS_PER_MESSAGE;
  if (typeof message.content === "string") {
    tokens += estimateTextTokens(message.content);
  } else if (Array.isArray(message.content)) {
    for (const part of message.content) {
      tokens += part.type === "text" ? estimateTextTokens(part.text) : TOKENS_PER_IMAGE;
    }
  }
  if (message.role === "assistant") {
    for (const call of message.toolCalls ?? []) {
      tokens += TOKENS_PER_MESSAGE + estimateTextTokens(call.name) +
        estimateTextTokens(call.arguments);
    }
  }
  return tokens;
}

/** Estimated tokens the tool definitions add to every request. */
export function estimateToolTokens(tools: readonly ToolDefinition[]): number {
  let tokens = 0;
  for (const tool of tools) tokens += TOKENS_PER_MESSAGE + estimateTextTokens(JSON.stringify(tool));
  return tokens;
}

/** Estimates calibrated against the provider's own counts. */
export class TokenEstimator {
  #factor = 1;

  /** Current correction factor (1 until the provider has reported usage). */
  get factor(): number {
    return this.#factor;
  }

  /** Uncalibrated estimate of a prompt: messages plus tool definitions. */
  raw(messages: readonly ChatMessage[], tools: readonly ToolDefinition[] = []): number {
    let tokens = estimateToolTokens(tools);
    for (const message of messages) tokens += estimateMessageTokens(message);
    return tokens;
  }

  /** Calibrated estimate of a prompt. */
  prompt(messages: readonly ChatMessage[], tools: readonly ToolDefinition[] = []): number {
    return this.scale(this.raw(messages, tools));
  }

  /** A raw count scaled by the calibration factor. */
  scale(rawTokens: number): number {
    return Math.ceil(rawTokens * this.#factor);
  }

  /** Learns from a provider's report of the prompt whose raw estimate was `rawEstimate`. */
  calibrate(rawEstimate: number, reportedPromptTokens: number): void {
    if (rawEstimate <= 0 || reportedPromptTokens <= 0) return;
    const ratio = reportedPromptTokens / rawEstimate;
    this.#factor = Math.min(FACTOR_RANGE.max, Math.max(FACTOR_RANGE.min, ratio));
  }
}
