/**
 * The typed error for a model request the provider answered with an HTTP error status
 * ({@linkcode statusError}): a redirect patchbay would not or could not follow, a refused
 * key, a rate limit or used-up quota, an unknown model, a conversation too long, the
 * server's own failure, or a rejected request with a pointer to the setting behind it.
 *
 * @module
 */

import {
  AuthenticationFailedError,
  type PatchbayError,
  ProviderRequestError,
  RateLimitError,
} from "../errors.ts";
import { STEPS } from "../errors/failure_table.ts";
import { MODEL_STEPS } from "../errors/model_steps.ts";
import { abridge } from "../text/text.ts";
import { type AttemptFailure, type FailureContext, statusText } from "./attempt_failure.ts";
import { MAX_SAME_ORIGIN_REDIRECTS, redirectStopOf, redirectTarget } from "./redirects.ts";
import { RETRY_AFTER_CAP_MS, retryAfterMs } from "./retry.ts";

/**
 * The error for an HTTP error answer; `host` is where the request went and `tries` says
 * what retrying was done.
 */
export function statusError(
  failure: Extract<AttemptFailure, { kind: "status" }>,
  context: FailureContext,
  host: string,
  tries: string,
): PatchbayError {
  const { label, model, provider } = context;
  const said = `HTTP ${failure.status}${statusText(failure.status)}: ${
    abridge(failure.message, 300)
  }`;
  const stop = failure.status >= 300 && failure.status < 400
    ? redirectStopOf(failure.headers)
    : undefined;
  if (stop?.kind === "loop") {
    return new ProviderRequestError(
      `Model request failed: ${label} redirects the request in a loop`,
      failure.status,
      {
        reason: `${host} sent the request round ${stop.chain.join(" -> ")}, back to an ` +
          `address it had already redirected (last answer HTTP ${failure.status}` +
          `${statusText(failure.status)}); no address in the loop answers the request`,
        remedy: MODEL_STEPS.redirectLoop,
      },
    );
  }
  if (stop?.kind === "too_many") {
    return new ProviderRequestError(
      `Model request failed: ${label} redirected the request too many times`,
      failure.status,
      {
        reason: `${host} redirected the request ${stop.chain.length} times within its own ` +
          `origin (${stop.chain.join(" -> ")}), more than the ${MAX_SAME_ORIGIN_REDIRECTS} ` +
          "patchbay follows",
        remedy: MODEL_STEPS.tooManyRedirects,
      },
    );
  }
  if (failure.status >= 300 && failure.status < 400) {
    const target = redirectTarget(failure.headers?.get("location") ?? null, context.baseUrl);
    return new ProviderRequestError(
      `Model request failed: ${label} redirected the request to another address`,
      failure.status,
      {
        reason: `${host} answered HTTP ${failure.status}${statusText(failure.status)} with ` +
          `Location ${target ?? "(none)"}; patchbay does not follow a model request to ` +
          "another origin, since it would send the conversation and the key there",
        remedy: target
          ? `if ${new URL(target).origin} is really your provider's address, set LLM.base_url ` +
            "to it; otherwise check LLM.base_url and any gateway or proxy in between"
          : "check LLM.base_url and any gateway or proxy in between",
      },
    );
  }
  if (failure.status === 401 || failure.status === 403) {
    return new AuthenticationFailedError(
      `${label} (provider ${provider}) refused ${
        context.keyName ?? "LLM_API_KEY"
      } for model "${model}" (${said})`,
      undefined,
      context.keyRemedy,
    );
  }
  if (failure.status === 429) {
    if (failure.code === "insufficient_quota") {
      return new RateLimitError(
        `${label} reports the account's quota is used up for model "${model}" (${said}); ` +
          "retrying cannot help",
      );
    }
    const asked = retryAfterMs(failure.headers);
    const tooLong = asked !== undefined && asked > RETRY_AFTER_CAP_MS
      ? `; it asked to wait ${Math.ceil(asked / 1000)} s, longer than patchbay waits ` +
        `(${RETRY_AFTER_CAP_MS / 1000} s)`
      : asked !== undefined
      ? `; it asked to wait ${Math.ceil(asked / 1000)} s`
      : "";
    return new RateLimitError(
      `${label} limited requests for model "${model}" (${said}); ${tries}${tooLong}`,
    );
  }
  if (failure.status === 404) {
    return new ProviderRequestError(
      `Model request failed: ${label} has no such model or path`,
      404,
      {
        reason: `${host} answered ${said} for model "${model}"`,
        remedy: MODEL_STEPS.unknownModel,
      },
    );
  }
  if (
    failure.code === "context_length_exceeded" ||
    /context.{0,20}(length|window|limit)|too many tokens|maximum context|prompt is too long/i
      .test(failure.message)
  ) {
    return new ProviderRequestError(
      `Model request failed: the conversation is too long for "${model}"`,
      failure.status,
      {
        reason: said,
        remedy: MODEL_STEPS.contextTooLong,
      },
    );
  }
  if (failure.status >= 500) {
    return new ProviderRequestError(
      `Model request failed: ${label}'s server failed`,
      failure.status,
      {
        reason: `${said} (${tries})`,
        remedy: MODEL_STEPS.providerDown,
      },
    );
  }
  return new ProviderRequestError(
    `Model request failed: ${label} rejected the request`,
    failure.status,
    {
      reason: `${said}${parameterHint(failure.message)}`,
      remedy: STEPS.modelSettings,
    },
  );
}

/** A pointer to the setting behind the provider's complaint about a parameter. */
function parameterHint(message: string): string {
  if (/temperature/i.test(message)) return "; remove LLM.temperature if this model rejects it";
  if (/max_(completion_)?tokens/i.test(message)) return "; lower LLM.max_tokens";
  if (/tools?\b|function/i.test(message)) {
    return "; the model may not support tool calling (pick one that does)";
  }
  return "";
}
