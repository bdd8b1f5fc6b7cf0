/**
 * The session limits of AgentConfig, kept (not just noticed) for every model request,
 * chat and sampling alike.
 *
 * A request is admitted before it goes out and holds its share of the limits until it
 * ends: one request, and its estimated prompt plus its answer cap in tokens. Requests
 * under way count as if they had finished, so concurrent ones (a server's sampling
 * requests while the chat streams, several tools sampling at once) cannot all pass the
 * same check. `total_tokens_limit`: a request goes out only when its estimated prompt
 * leaves room for at least {@linkcode MIN_ANSWER_TOKENS}, and its answer is capped to the
 * room that is left. A retry is part of the same request (it is not counted again), but an
 * attempt that reached the model before it failed may have been billed, so its estimated
 * cost is counted and the retry must fit in what is left. The session can then pass the
 * token limit only by the error of the prompt estimate (`lib/llm/tokens.ts`).
 *
 * @module
 */

import type { AgentLimits } from "../config/types.ts";
import { DEFAULTS } from "../defaults.ts";
import { LimitReachedError } from "../errors.ts";
import { MODEL_STEPS } from "../errors/model_steps.ts";
import type { RetryNotice, TokenUsage } from "../llm/provider.ts";
import { estimateTextTokens } from "../llm/tokens.ts";
import type { UsageStats } from "./stats.ts";

/** Fewest answer tokens worth a request; with less room left, the limit counts as reached. */
export const MIN_ANSWER_TOKENS = 16;

/**
 * Admits one model request or throws `LimitReachedError`. The returned admission holds the
 * request's share of the limits: call {@linkcode Admission.release} when it has ended and
 * its usage is recorded.
 */
export function admitRequest(
  stats: UsageStats,
  limits: AgentLimits,
  estimatedPromptTokens: number,
  maxTokens: number,
): Admission {
  const { requestLimit } = limits;
  if (requestLimit !== undefined && stats.requests + stats.heldRequests >= requestLimit) {
    const underWay = stats.heldRequests > 0
      ? ` (${stats.heldRequests} of them still under way)`
      : "";
    throw new LimitReachedError(
      "request_limit",
      `this session has made ${stats.requests + stats.heldRequests} model requests${underWay} ` +
        `and AgentConfig.request_limit is ${requestLimit}`,
      MODEL_STEPS.requestLimit,
    );
  }
  const cap = answerCap(stats, limits, estimatedPromptTokens, maxTokens, 0);
  return new Admission(stats, limits, estimatedPromptTokens, maxTokens, cap);
}

/**
 * Admits one sampling request of `server` or throws `LimitReachedError`: at most
 * `sampling_per_tool_call` while one of its tool calls runs, and `sampling_request_limit`
 * in the session. Counted when admitted, whatever becomes of the request, so a server
 * whose requests fail cannot try without end. The request is then admitted to the model
 * like any other ({@linkcode admitRequest}).
 */
export function admitSampling(stats: UsageStats, limits: AgentLimits, server: string): void {
  const samplingPerToolCall = limits.samplingPerToolCall ?? DEFAULTS.agent.samplingPerToolCall;
  const inCall = stats.samplingInToolCall(server);
  if (inCall !== undefined && inCall >= samplingPerToolCall) {
    throw new LimitReachedError(
      "sampling_per_tool_call",
      `'${server}' asked for a model request ${inCall + 1} times during one tool call, and ` +
        `AgentConfig.sampling_per_tool_call is ${samplingPerToolCall}; this request was refused`,
      MODEL_STEPS.samplingPerToolCall,
    );
  }
  const samplingRequestLimit = limits.samplingRequestLimit ??
    DEFAULTS.agent.samplingRequestLimit;
  if (stats.samplingRequests >= samplingRequestLimit) {
    throw new LimitReachedError(
      "sampling_request_limit",
      `servers have asked for ${stats.samplingRequests} model requests in this session, and ` +
        `AgentConfig.sampling_request_limit is ${samplingRequestLimit}; '${server}' was refused`,
      MODEL_STEPS.samplingRequestLimit,
    );
  }
  stats.countSampling(server);
}

/** One admitted model request and the share of the limits it holds. */
export class Admission {
  readonly #stats: UsageStats;
  readonly #limits: AgentLimits;
  readonly #prompt: number;
  readonly #maxTokens: number;
  #cap: number;
  #heldTokens = 0;
  #released = false;
  /** What failed attempts of this request may have cost (estimated). */
  #spent: TokenUsage | undefined;

  constructor(
    stats: UsageStats,
    limits: AgentLimits,
    estimatedPromptTokens: number,
    maxTokens: number,
    cap: number,
  ) {
    this.#stats = stats;
    this.#limits = limits;
    this.#prompt = estimatedPromptTokens;
    this.#maxTokens = maxTokens;
    this.#cap = cap;
    this.#hold(estimatedPromptTokens + cap);
    stats.hold(1, 0);
  }

  /** The answer cap of the current attempt: `maxTokens`, or less to stay within the limit. */
  get maxTokens(): number {
    return this.#cap;
  }

  /** Whether the cap is lower than asked, because of `total_tokens_limit`. */
  get capped(): boolean {
    return this.#cap < this.#maxTokens;
  }

  /**
   * Before a retry: counts what the failed attempt may have cost (its prompt and the text
   * it streamed, when {@linkcode RetryNotice.billable}) and admits the retry within what
   * is left. Returns the retry's answer cap; throws `LimitReachedError` when no room is left.
   */
  retry(notice: RetryNotice, streamedText: string): number {
    if (notice.billable) {
      const completion = estimateTextTokens(streamedText);
      const spent = this.#spent ?? emptyUsage();
      spent.promptTokens += this.#prompt;
      spent.completionTokens += completion;
      spent.totalTokens += this.#prompt + completion;
      this.#spent = spent;
    }
    this.#hold(0);
    try {
      this.#cap = answerCap(
        this.#stats,
        this.#limits,
        this.#prompt + (this.#spent?.totalTokens ?? 0),
        this.#maxTokens,
        this.#prompt,
        notice.reason,
      );
    } finally {
      this.#hold((this.#spent?.totalTokens ?? 0) + this.#prompt + this.#cap);
    }
    return this.#cap;
  }

  /**
   * `usage` with what failed attempts may have cost added (then marked estimated), or
   * that cost alone when the request produced no usage of its own; `undefined` when
   * there is nothing to count.
   */
  withSpent(usage?: TokenUsage): TokenUsage | undefined {
    if (!this.#spent) return usage;
    if (!usage) return { ...this.#spent };
    return {
      promptTokens: usage.promptTokens + this.#spent.promptTokens,
      completionTokens: usage.completionTokens + this.#spent.completionTokens,
      totalTokens: usage.totalTokens + this.#spent.totalTokens,
      estimated: true,
      // What the answered attempt read from or wrote to the cache, as reported.
      ...(usage.cacheReadTokens ? { cacheReadTokens: usage.cacheReadTokens } : {}),
      ...(usage.cacheWriteTokens ? { cacheWriteTokens: usage.cacheWriteTokens } : {}),
    };
  }

  /** Gives the held share back (the request's usage must be recorded by then). Idempotent. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#stats.hold(-1, -this.#heldTokens);
    this.#heldTokens = 0;
  }

  #hold(tokens: number): void {
    if (this.#released) return;
    this.#stats.hold(0, tokens - this.#heldTokens);
    this.#heldTokens = tokens;
  }
}

/**
 * The answer cap `total_tokens_limit` allows a request that needs `needed` tokens besides
 * its answer; throws `LimitReachedError` when less than MIN_ANSWER_TOKENS would be left.
 */
function answerCap(
  stats: UsageStats,
  limits: AgentLimits,
  needed: number,
  maxTokens: number,
  prompt: number,
  retryReason?: string,
): number {
  const { totalTokensLimit } = limits;
  if (totalTokensLimit === undefined) return maxTokens;
  const room = totalTokensLimit - stats.totalTokens - stats.heldTokens - needed;
  if (room >= MIN_ANSWER_TOKENS) return Math.min(maxTokens, room);
  const used = `this session has used ${stats.totalTokens} tokens` +
    (stats.heldTokens > 0 ? ` (and requests under way hold ${stats.heldTokens} more)` : "");
  const reason = retryReason === undefined
    ? `${used}; the next request needs about ${needed} more for its prompt (estimated), ` +
      `which would pass AgentConfig.total_tokens_limit (${totalTokensLimit})`
    : `the model request failed (${retryReason}) and was not retried: ${used}, the failed ` +
      `attempts may have cost about ${needed - prompt} more, and a retry would need about ` +
      `${prompt} more for its prompt (estimated), which would pass ` +
      `AgentConfig.total_tokens_limit (${totalTokensLimit})`;
  throw new LimitReachedError(
    "total_tokens_limit",
    reason,
    MODEL_STEPS.totalTokensLimit,
  );
}

function emptyUsage(): TokenUsage {
  return { promptTokens: 0, completionTokens: 0, totalTokens: 0, estimated: true };
}

/** The error for a turn that used all its steps. */
export function maxStepsError(maxSteps: number): LimitReachedError {
  return new LimitReachedError(
    "max_steps",
    `the model was still calling tools after ${maxSteps} steps in this turn, and ` +
      `AgentConfig.max_steps is ${maxSteps}`,
    MODEL_STEPS.maxSteps,
  );
}
