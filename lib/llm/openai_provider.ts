/**
 * {@linkcode ModelProvider} for every OpenAI-compatible API, over {@linkcode ChatApi}.
 *
 * Retries are made by the request loop (`request_loop.ts`, shared with the Messages API),
 * so that patchbay can tell the UI why it waits, count the retries for `/api_stats` and the
 * error text, and time out a stalled stream (a watchdog covers the whole exchange, headers
 * and every chunk). Nothing is read from `OPENAI_*` variables: the configuration alone says
 * where requests go.
 *
 * @module
 */

import type { LlmConfig } from "../config/types.ts";
import { type Log, silentLog } from "../log/log.ts";
import { assembleCompletion, CompletionAssembler } from "./assemble.ts";
import type { AttemptFailure } from "./attempt_failure.ts";
import { PROVIDERS } from "../providers.ts";
import type {
  GenerateRequest,
  GenerateResult,
  ListModelsOptions,
  ModelProvider,
} from "./provider.ts";
import type { ProxySettings } from "../proxy.ts";
import { ChatApi } from "./chat_api.ts";
import type { ChatCompletionRequest } from "./chat_wire.ts";
import { toMessageParam, toToolParam } from "./chat_params.ts";
import { sameOriginFetch } from "./redirects.ts";
import { traceGeneration } from "./model_trace.ts";
import { type ProviderOptions, setUpProvider } from "./provider_setup.ts";
import {
  type ExchangeIo,
  generateWithRetries,
  listModelsOnce,
  type RequestLoopOptions,
} from "./request_loop.ts";

/** Options of {@linkcode createOpenAiProvider}. */
export type OpenAiProviderOptions = ProviderOptions;

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
  #loop: RequestLoopOptions;
  /** Cleared when the server rejects `stream_options` (some OpenAI-compatible servers do). */
  #streamUsage = true;
  #maxTokensField: "max_tokens" | "max_completion_tokens";

  constructor(options: OpenAiProviderOptions) {
    const { llm } = options;
    const preset = PROVIDERS[llm.provider];
    this.#llm = llm;
    this.#log = options.log ?? silentLog;
    this.provider = llm.provider;
    this.label = preset.label;
    this.model = llm.model;
    this.#maxTokensField = "maxTokensField" in preset && preset.maxTokensField
      ? preset.maxTokensField
      : "max_tokens";

    const setup = setUpProvider(options, this.#log);
    this.baseUrl = setup.baseUrl;
    this.#proxy = setup.proxy;
    this.#httpClient = setup.httpClient;
    this.#api = new ChatApi({
      baseUrl: this.baseUrl,
      azure: llm.provider === "azure"
        ? { apiVersion: llm.apiVersion ?? "", deployment: llm.deployment ?? llm.model }
        : undefined,
      client: this.#httpClient,
      // The conversation and the key never follow a redirect to another origin.
      fetch: sameOriginFetch(),
    });
    this.#loop = {
      llm,
      context: {
        label: this.label,
        provider: this.provider,
        model: this.model,
        baseUrl: this.baseUrl,
        timeoutSeconds: llm.timeoutSeconds,
        proxy: this.#proxy,
      },
      log: this.#log,
      random: options.random ?? Math.random,
      model: this.model,
      apiKey: setup.key,
      exchange: (request, maxTokens, io) => this.#exchange(request, maxTokens, io),
      adjustFor: (failure) => this.#adjustFor(failure),
    };
  }

  close(): void {
    this.#httpClient?.close();
    this.#httpClient = undefined;
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    return await traceGeneration(
      this,
      request,
      (request) => generateWithRetries(request, this.#loop),
    );
  }

  async listModels(options: ListModelsOptions = {}): Promise<string[]> {
    return await listModelsOnce(
      (signal, apiKey) => this.#api.listModels({ signal, apiKey }),
      this.#loop,
      options,
    );
  }

  /** One chat completion, whole or streamed. */
  async #exchange(request: GenerateRequest, maxTokens: number, io: ExchangeIo) {
    const body = this.#body(request, maxTokens);
    const options = { signal: io.signal, onResponse: io.onResponse, apiKey: io.apiKey };
    if (!request.onDelta) return assembleCompletion(await this.#api.complete(body, options));
    const stream = await this.#api.stream({
      ...body,
      ...(this.#streamUsage ? { stream_options: { include_usage: true } } : {}),
    }, options);
    io.alive();
    const assembler = new CompletionAssembler();
    for await (const chunk of stream) {
      io.alive();
      io.emit(assembler.push(chunk));
    }
    return assembler.result();
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
