/**
 * One model request, retried, the same for every API patchbay speaks: each attempt is one
 * HTTP exchange (supplied by the provider) under a watchdog that covers the whole exchange,
 * headers and every chunk; a failed attempt is classified (`attempt_failure.ts`), retried
 * with backoff while it is worth it and the caller's budget admits it, and its last failure
 * worded as the typed error a person reads (`request_failures.ts`).
 *
 * What the caller's callbacks (`onDelta`, `admitRetry`, `onRetry`) throw is rethrown as it
 * is, never classified as the model's failure.
 *
 * @module
 */

import { CancelledError, DenoPermissionError } from "../errors.ts";
import { denoPermissionFlag } from "../deno_permission/denial.ts";
import type { LlmConfig } from "../config/types.ts";
import type { Log } from "../log/log.ts";
import { delay } from "../async/delay.ts";
import type { AssembledCompletion } from "./assemble.ts";
import {
  type AttemptFailure,
  classifyFailure,
  describeFailure,
  type FailureContext,
  isRetryable,
  mayHaveBeenBilled,
} from "./attempt_failure.ts";
import { failureError } from "./request_failures.ts";
import { generateResult } from "./generate_result.ts";
import type {
  GenerateRequest,
  GenerateResult,
  ListModelsOptions,
  RetryNotice,
} from "./provider.ts";
import { backoffMs, RETRY_AFTER_CAP_MS, retryAfterMs } from "./retry.ts";
import { Watchdog } from "./watchdog.ts";
import type { ApiKeySource } from "./api_key_source.ts";

/** What one exchange may do while it runs. */
export interface ExchangeIo {
  /** Aborted by the caller's signal or by the watchdog. */
  signal: AbortSignal;
  /** The success status and headers arrived: from now on a failure cuts an answer. */
  onResponse: () => void;
  /** A sign of life (a chunk, an event): the watchdog starts over. */
  alive: () => void;
  /** Passes streamed text to the caller's `onDelta`. */
  emit: (text: string) => void;
  /** The key to send with this exchange (`RequestLoopOptions.apiKey`'s). */
  apiKey?: string;
}

/**
 * One HTTP exchange: the request as the API takes it, sent once, its answer (whole, or
 * streamed through `io.emit` when the request has `onDelta`) assembled.
 */
export type Exchange = (
  request: GenerateRequest,
  maxTokens: number,
  io: ExchangeIo,
) => Promise<AssembledCompletion>;

/** Where requests go and how they are tried, for one provider. */
export interface RequestLoopOptions {
  llm: Pick<LlmConfig, "maxRetries" | "maxTokens" | "timeoutSeconds">;
  /** Where the failed request was going, for the wording (retries are added). */
  context: Omit<FailureContext, "retries" | "waitedMs">;
  log: Log;
  random: () => number;
  exchange: Exchange;
  /**
   * Drops or renames a field the server refused; `true` when the request is worth
   * resending (a correction, not a retry; at most twice per request).
   */
  adjustFor?: (failure: AttemptFailure) => boolean;
  /** The configured model, for an answer that names none. */
  model: string;
  /**
   * The key of each attempt; renewed once per request when the provider answers 401 (a
   * helper's key may have expired). @default none sent
   */
  apiKey?: ApiKeySource;
}

/**
 * Sends `request` with retries. Rejects with a `PatchbayError` (`CancelledError` when its
 * signal aborts), or with exactly what one of its callbacks threw.
 */
export async function generateWithRetries(
  request: GenerateRequest,
  options: RequestLoopOptions,
): Promise<GenerateResult> {
  const { llm, log, context } = options;
  const maxRetries = llm.maxRetries;
  let maxTokens = request.maxTokens ?? llm.maxTokens;
  let retries = 0;
  let waitedMs = 0;
  let adjustments = 0;
  let keyRenewed = false;
  // The summary's "over N s" is the whole request's time, attempts and waits together.
  const started = performance.now();
  while (true) {
    if (request.signal?.aborted) throw new CancelledError("the model request");
    // A helper's failure is its own error, never the model's: it is thrown as it is.
    const apiKey = await options.apiKey?.current(request.signal);
    const attempt = await attemptOnce(request, maxTokens, options, apiKey);
    if (attempt.ok) {
      return { ...generateResult(attempt.result, request, options.model), retries };
    }
    const failure = attempt.failure;
    if (failure.kind === "cancelled") throw new CancelledError("the model request");
    if (adjustments < 2 && options.adjustFor?.(failure)) {
      adjustments++;
      continue;
    }
    if (
      !keyRenewed && failure.kind === "status" && failure.status === 401 &&
      await options.apiKey?.renew(apiKey, request.signal)
    ) {
      keyRenewed = true;
      continue;
    }
    const asked = failure.kind === "status" ? retryAfterMs(failure.headers) : undefined;
    const retryable = isRetryable(failure) && retries < maxRetries &&
      (asked === undefined || asked <= RETRY_AFTER_CAP_MS);
    log.warn(`model request failed: ${describeFailure(failure)}`, {
      provider: context.provider,
      model: context.model,
      retry: retryable ? retries + 1 : undefined,
    });
    if (!retryable) {
      throw failureError(failure, {
        ...context,
        ...keyWords(options.apiKey),
        retries,
        waitedMs,
        elapsedMs: performance.now() - started,
      });
    }
    const notice: RetryNotice = {
      attempt: retries + 1,
      maxRetries,
      delayMs: backoffMs(retries + 1, asked, options.random),
      reason: describeFailure(failure),
      discardedPartial: attempt.emitted,
      billable: mayHaveBeenBilled(failure),
    };
    // The caller's budget decides whether the retry may go out, and with what answer cap;
    // its refusal (a session limit) propagates as it is.
    maxTokens = request.admitRetry?.(notice) ?? maxTokens;
    retries++;
    request.onRetry?.(notice);
    try {
      await delay(notice.delayMs, { signal: request.signal });
    } catch {
      throw new CancelledError("the model request");
    }
    waitedMs += notice.delayMs;
  }
}

/** One exchange under a watchdog: no byte for `timeout` seconds ends it. */
async function attemptOnce(
  request: GenerateRequest,
  maxTokens: number,
  options: RequestLoopOptions,
  apiKey: string | undefined,
): Promise<
  | { ok: true; result: AssembledCompletion }
  | { ok: false; failure: AttemptFailure; emitted: boolean }
> {
  const { log, context } = options;
  const controller = new AbortController();
  const onAbort = () => controller.abort(request.signal?.reason);
  request.signal?.addEventListener("abort", onAbort, { once: true });
  const watchdog = new Watchdog(options.llm.timeoutSeconds * 1000, () => controller.abort());
  let responded = false;
  let emitted = false;
  const started = performance.now();
  try {
    const result = await options.exchange(request, maxTokens, {
      apiKey,
      signal: controller.signal,
      onResponse: () => {
        responded = true;
      },
      alive: () => watchdog.reset(),
      emit: (text) => {
        if (text === "" || !request.onDelta) return;
        emitted = true;
        try {
          request.onDelta(text);
        } catch (error) {
          throw new CallerFailure(error);
        }
      },
    });
    // A body that ends quietly after an abort was cut by us, not finished.
    if (controller.signal.aborted) throw controller.signal.reason;
    return { ok: true, result };
  } catch (error) {
    if (error instanceof CallerFailure) {
      // The caller's own code failed (its UI could not print: a closed pipe): that is
      // neither the model's failure nor worth a retry, so it goes back as it was thrown.
      controller.abort();
      log.debug("the caller's onDelta threw; the request is abandoned", { error: error.error });
      throw error.error;
    }
    // A sandbox refusal is not a network failure: retrying cannot help, the flag can.
    const flag = denoPermissionFlag(error);
    if (flag) {
      throw new DenoPermissionError(flag, `connecting to ${context.label} at ${context.baseUrl}`);
    }
    const failure = classifyFailure(error, {
      timedOut: watchdog.fired,
      responded,
      cancelled: request.signal?.aborted === true,
    });
    log.debug("model request attempt failed", {
      kind: failure.kind,
      ms: Math.round(performance.now() - started),
      error,
    });
    return { ok: false, failure, emitted };
  } finally {
    watchdog.stop();
    request.signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * The model list, one request without retries under the watchdog (`timeoutSeconds`,
 * default `LLM.timeout`), its failure worded like a chat request's.
 */
export async function listModelsOnce(
  list: (signal: AbortSignal, apiKey: string | undefined) => Promise<string[]>,
  options: Pick<RequestLoopOptions, "llm" | "context" | "apiKey">,
  listOptions: ListModelsOptions = {},
): Promise<string[]> {
  const { context } = options;
  const apiKey = await options.apiKey?.current(listOptions.signal);
  const controller = new AbortController();
  const onAbort = () => controller.abort(listOptions.signal?.reason);
  listOptions.signal?.addEventListener("abort", onAbort, { once: true });
  const timeoutSeconds = listOptions.timeoutSeconds ?? options.llm.timeoutSeconds;
  const watchdog = new Watchdog(timeoutSeconds * 1000, () => controller.abort());
  try {
    return await list(controller.signal, apiKey);
  } catch (error) {
    const flag = denoPermissionFlag(error);
    if (flag) {
      throw new DenoPermissionError(flag, `connecting to ${context.label} at ${context.baseUrl}`);
    }
    const failure = classifyFailure(error, {
      timedOut: watchdog.fired,
      responded: false,
      cancelled: listOptions.signal?.aborted === true,
    });
    if (failure.kind === "cancelled") throw new CancelledError("listing the models");
    throw failureError(failure, {
      ...context,
      ...keyWords(options.apiKey),
      retries: 0,
      waitedMs: 0,
      timeoutSeconds,
    });
  } finally {
    watchdog.stop();
    listOptions.signal?.removeEventListener("abort", onAbort);
  }
}

/** How a refused key is named, and what to do about it, for the failure's wording. */
function keyWords(source: ApiKeySource | undefined): Pick<FailureContext, "keyName" | "keyRemedy"> {
  if (!source) return {};
  return { keyName: source.name, ...(source.remedy ? { keyRemedy: source.remedy } : {}) };
}

/** Carries an error thrown by the caller's callback past the failure classification. */
class CallerFailure {
  constructor(readonly error: unknown) {}
}
