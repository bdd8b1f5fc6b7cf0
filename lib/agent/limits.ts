/**
 * The session limits of AgentConfig, checked before every model request (chat and
 * sampling alike).
 *
 * `total_tokens_limit` is kept, not just noticed afterwards: a request goes out only when
 * its estimated prompt leaves room for at least {@linkcode MIN_ANSWER_TOKENS}, and its
 * answer is capped to the room that is left, so the session cannot run past the limit by
 * more than the estimate's error.
 *
 * @module
 */

import type { AgentLimits } from "../config/types.ts";
import { LimitReachedError } from "../errors.ts";
import type { UsageStats } from "./stats.ts";

/** Fewest answer tokens worth a request; with less room left, the limit counts as reached. */
export const MIN_ANSWER_TOKENS = 16;

const RAISE = "in the AgentConfig section of servers_config.json (remove it for no limit), " +
  "then restart patchbay; /api_stats shows what the session has used";

/**
 * Admits one request or throws `LimitReachedError`. Returns the answer-token cap to use:
 * `maxTokens`, or less when `total_tokens_limit` leaves less room.
 */
export function admitRequest(
  stats: UsageStats,
  limits: AgentLimits,
  estimatedPromptTokens: number,
  maxTokens: number,
): number {
  const { requestLimit, totalTokensLimit } = limits;
  if (requestLimit !== undefined && stats.requests >= requestLimit) {
    throw new LimitReachedError(
      "request_limit",
      `this session has made ${stats.requests} model requests and AgentConfig.request_limit ` +
        `is ${requestLimit}`,
      `raise request_limit ${RAISE}`,
    );
  }
  if (totalTokensLimit === undefined) return maxTokens;
  const room = totalTokensLimit - stats.totalTokens - estimatedPromptTokens;
  if (room < MIN_ANSWER_TOKENS) {
    throw new LimitReachedError(
      "total_tokens_limit",
      `this session has used ${stats.totalTokens} tokens; the next request needs about ` +
        `${estimatedPromptTokens} more for its prompt (estimated), which would pass ` +
        `AgentConfig.total_tokens_limit (${totalTokensLimit})`,
      `raise total_tokens_limit ${RAISE}; a lower LLM.max_context_length sends less history ` +
        "per request",
    );
  }
  return Math.min(maxTokens, room);
}

/** The error for a turn that used all its steps. */
export function maxStepsError(maxSteps: number): LimitReachedError {
  return new LimitReachedError(
    "max_steps",
    `the model was still calling tools after ${maxSteps} steps in this turn, and ` +
      `AgentConfig.max_steps is ${maxSteps}`,
    `raise max_steps ${RAISE.replace("(remove it for no limit), ", "")}, or split the task; ` +
      'the tool results so far are kept, so "continue" carries on from here',
  );
}
