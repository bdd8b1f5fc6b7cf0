/**
 * The typed error a person reads for the last failure of a model request:
 * {@linkcode failureError} gives each kind of {@linkcode AttemptFailure} its message, the
 * cause as far as it is known, and the remedy. HTTP answers are worded in
 * `status_failures.ts`, connections that could not be made in `network_failures.ts`.
 *
 * @module
 */

import {
  CancelledError,
  ConnectionLostError,
  type PatchbayError,
  ProviderRequestError,
  TimeoutError,
} from "../errors.ts";
import { abridge } from "../text/text.ts";
import { proxyName } from "../proxy.ts";
import type { AttemptFailure, FailureContext } from "./attempt_failure.ts";
import { networkError, proxyHint, proxyRemedy } from "./network_failures.ts";
import { MODEL_STEPS } from "../errors/model_steps.ts";
import { statusError } from "./status_failures.ts";

/** The typed error for the last failure of a request. */
export function failureError(failure: AttemptFailure, context: FailureContext): PatchbayError {
  const { label } = context;
  const host = hostWithPort(context.baseUrl);
  const tries = context.retries === 0
    ? "no retry was made"
    : `${context.retries} ${context.retries === 1 ? "retry was" : "retries were"} made over ` +
      `${((context.elapsedMs ?? context.waitedMs) / 1000).toFixed(1)} s`;
  switch (failure.kind) {
    case "cancelled":
      return new CancelledError("the model request");
    case "status":
      return statusError(failure, context, host, tries);
    case "timeout": {
      if (failure.phase === "connect" && context.proxy) {
        return new TimeoutError(
          "Connection timeout",
          `no connection to the proxy ${proxyName(context.proxy)} could be made (${tries}); ` +
            `requests to ${label} at ${host} go through it`,
          proxyRemedy(context.proxy, host),
        );
      }
      const remedy = MODEL_STEPS.timeout(context.timeoutSeconds, host, proxyHint(context));
      if (failure.phase === "connect") {
        return new TimeoutError(
          "Connection timeout",
          `no connection to ${label} at ${host} could be made (${tries})`,
          remedy,
        );
      }
      return new TimeoutError(
        "Request timeout",
        failure.phase === "stream"
          ? `${label} stopped sending the answer for ${context.timeoutSeconds} s (${tries})`
          : `${label} did not answer within ${context.timeoutSeconds} s (${tries})`,
        remedy,
      );
    }
    case "dropped":
      return new ConnectionLostError(
        `the connection to ${label} at ${host} closed mid-answer (${tries}): ` +
          abridge(failure.message, 200),
        MODEL_STEPS.dropped(proxyHint(context)),
      );
    case "network":
      return networkError(failure, context, host, tries);
    case "malformed":
      return new ProviderRequestError(
        `Model request failed: ${label} sent an answer patchbay cannot read`,
        undefined,
        {
          reason: `${host} answered, but ${abridge(failure.message, 300)}`,
          remedy: MODEL_STEPS.notTheApi(context.api ?? "OpenAI-compatible API"),
        },
      );
  }
}

function hostWithPort(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
