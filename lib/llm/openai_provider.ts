/**
 * {@linkcode ModelProvider} for every OpenAI-compatible API, over {@linkcode ChatApi}.
 *
 * Retries are made here, so that patchbay can tell the UI why it waits, count the retries
 * for `/api_stats` and the error text, and time out a stalled stream (a watchdog covers the
 * whole exchange, headers and every chunk). Nothing is read from `OPENAI_*` variables: the
 * configuration alone says where requests go.
 *
 * @module
 */

import { CancelledError, DenoPermissionError, ProviderRequestError } from "../errors.ts";
import { denoPermissionFlag } from "../deno_permission/denial.ts";
import type { LlmConfig } from "../config/types.ts";
import type { Environment } from "../env.ts";
import { type Log, silentLog } from "../log.ts";
import type { Redactor } from "../redact.ts";
import { API_KEY_VARIABLE, checkApiKey } from "./api_key.ts";
import { assembleCompletion, type AssembledCompletion, CompletionAssembler } from "./assemble.ts";
import {
  type AttemptFailure,
  classifyFailure,
  describeFailure,
  type FailureContext,
  isRetryable,
  mayHaveBeenBilled,
} from "./attempt_failure.ts";
import { failureError } from "./request_failures.ts";
import { PROVIDERS } from "../providers.ts";
import { resolveBaseUrl } from "./base_url.ts";
import type {
  GenerateRequest,
  GenerateResult,
  ListModelsOptions,
  ModelProvider,
  RetryNotice,
} from "./provider.ts";
import { proxyFor, type ProxySettings } from "../proxy.ts";
import { ChatApi } from "./chat_api.ts";
import type { ChatCompletionRequest } from "./chat_wire.ts";
import { toMessageParam, toToolParam } from "./chat_params.ts";
import { sameOriginFetch } from "./redirects.ts";
import { delay } from "../async/delay.ts";
import { backoffMs, RETRY_AFTER_CAP_MS, retryAfterMs } from "./retry.ts";
import { generateResult } from "./generate_result.ts";
import { traceGeneration } from "./model_trace.ts";
import { Watchdog } from "./watchdog.ts";

/** Options of {@linkcode createOpenAiProvider}. */
export interface OpenAiProviderOptions {
  llm: LlmConfig;
  /** Source of LLM_API_KEY and the proxy variables (process environment over .env). */
  env: Environment;
  /** The key is registered here so that no log line or error ever shows it. */
  redactor?: Redactor;
  /** @default silent */
  log?: Log;
  /** Jitter source for backoff (tests pin it). @default Math.random */
  random?: () => number;
}

/**
 * Builds the provider for `LLM`. Throws `InvalidApiKeyError` before any request when the
 * key is missing or cannot be a key of this provider, and `ProviderRequestError` when the
 * entry names no usable address.
 */
export function createOpenAiProvider(options: OpenAiProviderOptions): ModelProvider {
  return new OpenAiProvider(options);
}

class OpenAiProvider implements ModelProvider {
  readonly provider: LlmConfig["provider"];
  readonly label: string;
  readonly model: string;
  readonly baseUrl: string;
  #llm: LlmConfig;
  #api: ChatApi;
  #httpClient: Deno.HttpClient | undefined;
  #proxy: ProxySettings | undefined;
  #log: Log;
  #random: () => number;
  /** Cleared when the server rejects `stream_options` (some OpenAI-compatible servers do). */
  #streamUsage = true;
  #maxTokensField: "max_tokens" | "max_completion_tokens";

  constructor(options: OpenAiProviderOptions) {
    const { llm, env } = options;
    const preset = PROVIDERS[llm.provider];
    this.#llm = llm;
    this.#log = options.log ?? silentLog;
    this.#random = options.random ?? Math.random;
    this.provider = llm.provider;
    this.label = preset.label;
    this.model = llm.model;
    this.#maxTokensField = "maxTokensField" in preset && preset.maxTokensField
      ? preset.maxTokensField
      : "max_tokens";

    if (
      preset.keyRequired && env.get(API_KEY_VARIABLE) === undefined && env.denied(API_KEY_VARIABLE)
    ) {
      throw new DenoPermissionError(
        `--allow-env=${API_KEY_VARIABLE}`,
        `reading ${API_KEY_VARIABLE}`,
      );
    }
    const key = checkApiKey(llm.provider, env.get(API_KEY_VARIABLE), {
      baseUrlOverridden: llm.baseUrl !== undefined,
    });
    options.redactor?.addSecret(key);

    this.baseUrl = resolveBaseUrl(llm);
    try {
      this.#proxy = proxyFor(this.baseUrl, env);
    } catch (error) {
      throw new ProviderRequestError("Invalid proxy setting", undefined, {
        reason: (error as Error).message,
        remedy: "set the proxy variable to a URL such as http://proxy.example.com:3128, " +
          "in .env or the environment, then restart patchbay",
      });
    }
    if (this.#proxy) {
      this.#httpClient = Deno.createHttpClient({
        proxy: { url: this.#proxy.url, basicAuth: this.#proxy.basicAuth },
      });
      this.#log.info(`model requests go through the proxy ${this.#proxy.url}`, {
        variable: this.#proxy.variable,
      });
    }

    this.#api = new ChatApi({
      baseUrl: this.baseUrl,
      apiKey: key,
      azure: llm.provider === "azure"
        ? { apiVersion: llm.apiVersion ?? "", deployment: llm.deployment ?? llm.model }
        : undefined,
      client: this.#httpClient,
      // The conversation and the key never follow a redirect to another origin.
      fetch: sameOriginFetch(),
    });
  }

  close(): void {
    this.#httpClient?.close();
    this.#httpClient = undefined;
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    return await traceGeneration(this, request, (request) => this.#generate(request));
  }

  async #generate(request: GenerateRequest): Promise<GenerateResult> {
    const maxRetries = this.#llm.maxRetries;
    let maxTokens = request.maxTokens ?? this.#llm.maxTokens;
    let retries = 0;
    let waitedMs = 0;
    let adjustments = 0;
    // The summary's "over N s" is the whole request's time, attempts and waits together.
    const started = performance.now();
    while (true) {
      if (request.signal?.aborted) throw new CancelledError("the model request");
      const attempt = await this.#attempt(request, maxTokens);
      if (attempt.ok) {
        return { ...generateResult(attempt.result, request, this.model), retries };
      }
      const failure = attempt.failure;
      if (failure.kind === "cancelled") throw new CancelledError("the model request");
      // A server that rejects one of the optional fields gets the request again without it;
      // this is a correction, not a retry, and happens at most once per field.
      if (adjustments < 2 && this.#adjustFor(failure)) {
        adjustments++;
        continue;
      }
      const asked = failure.kind === "status" ? retryAfterMs(failure.headers) : undefined;
      const retryable = isRetryable(failure) && retries < maxRetries &&
        (asked === undefined || asked <= RETRY_AFTER_CAP_MS);
      this.#log.warn(`model request failed: ${describeFailure(failure)}`, {
        provider: this.provider,
        model: this.model,
        retry: retryable ? retries + 1 : undefined,
      });
      if (!retryable) {
        throw failureError(failure, {
          ...this.#failureContext(retries, waitedMs),
          elapsedMs: performance.now() - started,
        });
      }
      const notice: RetryNotice = {
        attempt: retries + 1,
        maxRetries,
        delayMs: backoffMs(retries + 1, asked, this.#random),
        reason: describeFailure(failure),
        discardedPartial: attempt.emitted,
        billable: mayHaveBeenBilled(failure),
      };
      // The caller's budget decides whether the retry may go out, and with what answer cap;
      // its refusal (a session limit) propagates as it is.
      maxTokens = request.admitRetry?.(notice) ?? maxTokens;
      retries++;
      const delayMs = notice.delayMs;
      request.onRetry?.(notice);
      try {
        await delay(delayMs, { signal: request.signal });
      } catch {
        throw new CancelledError("the model request");
      }
      waitedMs += delayMs;
    }
  }

  async listModels(options: ListModelsOptions = {}): Promise<string[]> {
    const controller = new AbortController();
    const onAbort = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const timeoutSeconds = options.timeoutSeconds ?? this.#llm.timeoutSeconds;
    const watchdog = new Watchdog(timeoutSeconds * 1000, () => controller.abort());
    try {
      return await this.#api.listModels({ signal: controller.signal });
    } catch (error) {
      const flag = denoPermissionFlag(error);
      if (flag) {
        throw new DenoPermissionError(flag, `connecting to ${this.label} at ${this.baseUrl}`);
      }
      const failure = classifyFailure(error, {
        timedOut: watchdog.fired,
        responded: false,
        cancelled: options.signal?.aborted === true,
      });
      if (failure.kind === "cancelled") throw new CancelledError("listing the models");
      throw failureError(failure, { ...this.#failureContext(0, 0), timeoutSeconds });
    } finally {
      watchdog.stop();
      options.signal?.removeEventListener("abort", onAbort);
    }
  }

  #failureContext(retries: number, waitedMs: number): FailureContext {
    return {
      label: this.label,
      provider: this.provider,
      model: this.model,
      baseUrl: this.baseUrl,
      timeoutSeconds: this.#llm.timeoutSeconds,
      retries,
      waitedMs,
      proxy: this.#proxy,
    };
  }

  /** One HTTP exchange under a watchdog: no byte for `timeout` seconds ends it. */
  async #attempt(request: GenerateRequest, maxTokens: number): Promise<
    | { ok: true; result: AssembledCompletion }
    | { ok: false; failure: AttemptFailure; emitted: boolean }
  > {
    const controller = new AbortController();
    const onAbort = () => controller.abort(request.signal?.reason);
    request.signal?.addEventListener("abort", onAbort, { once: true });
    const watchdog = new Watchdog(this.#llm.timeoutSeconds * 1000, () => controller.abort());
    let responded = false;
    let emitted = false;
    const started = performance.now();
    try {
      const body = this.#body(request, maxTokens);
      // From the headers on, a failure cuts an answer that had started.
      const options = {
        signal: controller.signal,
        onResponse: () => {
          responded = true;
        },
      };
      if (!request.onDelta) {
        const completion = await this.#api.complete(body, options);
        return { ok: true, result: assembleCompletion(completion) };
      }
      const stream = await this.#api.stream({
        ...body,
        ...(this.#streamUsage ? { stream_options: { include_usage: true } } : {}),
      }, options);
      watchdog.reset();
      const assembler = new CompletionAssembler();
      for await (const chunk of stream) {
        watchdog.reset();
        const delta = assembler.push(chunk);
        if (delta !== "") {
          emitted = true;
          deliver(request.onDelta, delta);
        }
      }
      // A body that ends quietly after an abort was cut by us, not finished.
      if (controller.signal.aborted) throw controller.signal.reason;
      return { ok: true, result: assembler.result() };
    } catch (error) {
      if (error instanceof CallerFailure) {
        // The caller's own code failed (its UI could not print: a closed pipe): that is
        // neither the model's failure nor worth a retry, so it goes back as it was thrown.
        controller.abort();
        this.#log.debug("the caller's onDelta threw; the request is abandoned", {
          error: error.error,
        });
        throw error.error;
      }
      // A sandbox refusal is not a network failure: retrying cannot help, the flag can.
      const flag = denoPermissionFlag(error);
      if (flag) {
        throw new DenoPermissionError(flag, `connecting to ${this.label} at ${this.baseUrl}`);
      }
      const failure = classifyFailure(error, {
        timedOut: watchdog.fired,
        responded,
        cancelled: request.signal?.aborted === true,
      });
      this.#log.debug("model request attempt failed", {
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

  #body(request: GenerateRequest, maxTokens: number): ChatCompletionRequest {
    const temperature = request.temperature ?? this.#llm.temperature;
    return {
      model: this.#llm.provider === "azure" ? (this.#llm.deployment ?? this.model) : this.model,
      messages: request.messages.map(toMessageParam),
      ...(request.tools && request.tools.length > 0
        ? { tools: request.tools.map(toToolParam) }
        : {}),
      [this.#maxTokensField]: maxTokens,
      ...(temperature === undefined ? {} : { temperature }),
      ...(request.stop && request.stop.length > 0 ? { stop: request.stop } : {}),
    };
  }

  /** Drops or renames a field the server refused; `true` when the request is worth resending. */
  #adjustFor(failure: AttemptFailure): boolean {
    if (failure.kind !== "status" || (failure.status !== 400 && failure.status !== 422)) {
      return false;
    }
    if (this.#streamUsage && /stream_options|include_usage/i.test(failure.message)) {
      this.#streamUsage = false;
      this.#log.info("the provider rejects stream_options; usage will be estimated");
      return true;
    }
    const other = this.#maxTokensField === "max_tokens" ? "max_completion_tokens" : "max_tokens";
    if (
      new RegExp(`\\b${this.#maxTokensField}\\b`).test(failure.message) &&
      /unsupported|not supported|unrecognized|unknown|extra|not permitted|instead/i.test(
        failure.message,
      )
    ) {
      this.#log.info(`the provider rejects ${this.#maxTokensField}; sending ${other} instead`);
      this.#maxTokensField = other;
      return true;
    }
    return false;
  }
}

/** Carries an error thrown by the caller's callback past the failure classification. */
class CallerFailure {
  constructor(readonly error: unknown) {}
}

function deliver(onDelta: (text: string) => void, text: string): void {
  try {
    onDelta(text);
  } catch (error) {
    throw new CallerFailure(error);
  }
}
