/**
 * What a model's tokens cost, for the estimated cost of a session (`/api_stats`, `run
 * --json`): a small table of list prices by model name ({@linkcode MODEL_PRICES}), which
 * `LLM.price` replaces. Only an estimate: providers change prices, bill long prompts,
 * batches and regions differently, and a model the table does not know has no estimate.
 *
 * A leaf (it imports nothing): the configuration's types, the statistics and the model
 * client all read it.
 *
 * @module
 */

/** US dollars per million tokens, as providers list them (`LLM.price`). */
export interface PricePerMillionTokens {
  /** Prompt tokens billed at the full price. */
  input: number;
  output: number;
  /** Prompt tokens read from the provider's cache. @default input */
  cacheRead: number;
  /** Prompt tokens written to the provider's cache. @default input */
  cacheWrite: number;
}

/** One row of the table: the model names it covers, and their price. */
interface PriceRow {
  /** Matched anywhere in the model name, case-insensitive (dated snapshots included). */
  pattern: RegExp;
  price: PricePerMillionTokens;
}

/**
 * Anthropic's price: a cache read costs a tenth of the input price, a write (five-minute
 * entry) 1.25 times it.
 */
const claude = (input: number, output: number): PricePerMillionTokens => ({
  input,
  output,
  cacheRead: input / 10,
  cacheWrite: input * 1.25,
});

/**
 * OpenAI's price: cached prompt tokens at a discount, writes not billed apart (its cache
 * fills by itself).
 */
const openai = (input: number, cached: number, output: number): PricePerMillionTokens => ({
  input,
  output,
  cacheRead: cached,
  cacheWrite: input,
});

/**
 * List prices (USD per million tokens) of a few widely used models, from Anthropic's and
 * OpenAI's pricing pages when this table was written (2026); any other model needs
 * `LLM.price` for an estimate. First match wins, so the narrower names come first.
 */
export const MODEL_PRICES: readonly PriceRow[] = [
  { pattern: /claude-opus-4-[5-8]/i, price: claude(5, 25) },
  { pattern: /claude-opus-4|claude-3-opus/i, price: claude(15, 75) },
  { pattern: /claude-sonnet-4|claude-3-7-sonnet|claude-3-5-sonnet/i, price: claude(3, 15) },
  { pattern: /claude-haiku-4-5/i, price: claude(1, 5) },
  { pattern: /claude-3-5-haiku/i, price: claude(0.8, 4) },
  { pattern: /claude-3-haiku/i, price: claude(0.25, 1.25) },
  { pattern: /gpt-4o-mini/i, price: openai(0.15, 0.075, 0.6) },
  { pattern: /gpt-4o/i, price: openai(2.5, 1.25, 10) },
  { pattern: /gpt-4\.1-mini/i, price: openai(0.4, 0.1, 1.6) },
  { pattern: /gpt-4\.1-nano/i, price: openai(0.1, 0.025, 0.4) },
  { pattern: /gpt-4\.1/i, price: openai(2, 0.5, 8) },
];

/** The price of `model`: `configured` (`LLM.price`) when set, else the table's, if any. */
export function priceOf(
  model: string,
  configured?: PricePerMillionTokens,
): PricePerMillionTokens | undefined {
  if (configured) return configured;
  return MODEL_PRICES.find((row) => row.pattern.test(model))?.price;
}

/** Token counts to price: the prompt whole, with its cached parts counted again. */
export interface PricedTokens {
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

/** What `tokens` cost at `price`, in US dollars. */
export function costUsd(tokens: PricedTokens, price: PricePerMillionTokens): number {
  const read = tokens.cacheReadTokens ?? 0;
  const written = tokens.cacheWriteTokens ?? 0;
  const full = Math.max(0, tokens.promptTokens - read - written);
  return (full * price.input + read * price.cacheRead + written * price.cacheWrite +
    tokens.completionTokens * price.output) / 1_000_000;
}
