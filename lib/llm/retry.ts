/**
 * When a failed model request is tried again, and how long to wait first.
 *
 * Waits grow exponentially with jitter, so that several clients hitting one rate limit do
 * not retry in step; a provider's `retry-after` (or `retry-after-ms`) wins when it says
 * more, up to a cap, so that a provider asking for an hour does not freeze the terminal.
 *
 * @module
 */

/** First backoff wait; doubled on each further retry. */
export const RETRY_BASE_DELAY_MS = 500;

/** Longest backoff wait patchbay picks by itself. */
export const RETRY_MAX_DELAY_MS = 8_000;

/**
 * Longest wait patchbay accepts from a provider's `retry-after`. A longer demand is not
 * waited out: the request fails at once with the rate-limit error, which says how long the
 * provider asked for.
 */
export const RETRY_AFTER_CAP_MS = 60_000;

/** HTTP statuses worth another attempt: timeouts, conflicts, rate limits, server faults. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * The wait the provider asked for, from `retry-after-ms` or `retry-after` (seconds or an
 * HTTP date), in milliseconds; `undefined` when it asked for nothing usable.
 */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const ms = headers?.get("retry-after-ms");
  if (ms && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const value = headers?.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * The wait before retry number `attempt` (1-based): the provider's demand when it made
 * one, else exponential backoff with up to 25% jitter.
 */
export function backoffMs(attempt: number, requested?: number, random = Math.random): number {
  if (requested !== undefined) return Math.min(requested, RETRY_AFTER_CAP_MS);
  const base = Math.min(RETRY_BASE_DELAY_MS * 2 ** (attempt - 1), RETRY_MAX_DELAY_MS);
  return Math.round(base * (1 - 0.25 * random()));
}
