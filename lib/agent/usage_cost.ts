/**
 * The prompt cache and the estimated cost in the session's usage: what `/api_stats` says of
 * them ({@linkcode cacheLine}, {@linkcode costLine}) and the estimate itself
 * ({@linkcode estimateCost}, from the models' prices in `lib/llm/prices.ts` or `LLM.price`).
 *
 * @module
 */

import { costUsd, priceOf, type PricePerMillionTokens } from "../llm/prices.ts";

/** Token counts of one slice of the session, as far as the cache and the cost need them. */
export interface CachedTotals {
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** What the session cost at list prices: an estimate, never a bill. */
export interface CostEstimate {
  /** US dollars, over the models whose price is known. */
  usd: number;
  /** Models priced (by `LLM.price`, or the table). */
  priced: string[];
  /** Models used whose price is not known: their tokens are not in `usd`. */
  unpriced: string[];
}

/** The estimate for the usage of each model, at `configured` (`LLM.price`) or the table's. */
export function estimateCost(
  byModel: Readonly<Record<string, CachedTotals>>,
  configured?: PricePerMillionTokens,
): CostEstimate {
  const estimate: CostEstimate = { usd: 0, priced: [], unpriced: [] };
  for (const [model, totals] of Object.entries(byModel).sort(([a], [b]) => a.localeCompare(b))) {
    const price = priceOf(model, configured);
    if (!price) {
      estimate.unpriced.push(model);
      continue;
    }
    estimate.priced.push(model);
    estimate.usd += costUsd(totals, price);
  }
  return estimate;
}

/** The line under "Prompt tokens" when the provider's cache served or stored any. */
export function cacheLine(totals: CachedTotals): string[] {
  const { cacheReadTokens: read, cacheWriteTokens: written, promptTokens } = totals;
  if (read === 0 && written === 0) return [];
  const share = promptTokens > 0 ? ` (${Math.round((read / promptTokens) * 100)}%)` : "";
  return [
    `    from cache:      ${number(read)} read${share}` +
    (written > 0 ? `, ${number(written)} written` : ""),
  ];
}

/** The estimated cost line, when the price of a model used is known. */
export function costLine(cost: CostEstimate): string[] {
  if (cost.priced.length === 0) return [];
  const unpriced = cost.unpriced.length > 0
    ? `; not counted: ${cost.unpriced.join(", ")} (no price known; set LLM.price)`
    : "";
  return [`  Estimated cost:    ${formatUsd(cost.usd)} (at list prices, an estimate${unpriced})`];
}

/** Dollars with the precision a small session needs ("$0.0123", "$1.25"). */
export function formatUsd(usd: number): string {
  if (usd === 0) return "$0.00";
  if (usd < 0.0001) return "under $0.0001";
  return usd >= 1 ? `$${usd.toFixed(2)}` : `$${usd.toPrecision(3).replace(/0+$/, "")}`;
}

const number = (n: number) => n.toLocaleString("en-US");
