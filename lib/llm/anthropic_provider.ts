/**
 * {@linkcode ModelProvider} for Anthropic's own Messages API (`provider: "anthropic"`), over
 * {@linkcode MessagesApi}, with prompt caching.
 *
 * Anthropic's OpenAI-compatibility layer is a testing aid without prompt caching: every
 * request of a session paid full price for the same tools and system prompt. Here each
 * request carries `cache_control` breakpoints on its stable prefix (`cache_breakpoints.ts`
 * decides where), so consecutive requests of a turn and of a session read it back at a
 * tenth of the price; `LLM.prompt_caching: false` sends none.
 *
 * Retries, the watchdog, proxies, redirects and the failures' wording are the OpenAI path's
 * (`request_loop.ts`, `provider_setup.ts`, `request_failures.ts`): one voice for both.
 *
 * @module
 */

import type { LlmConfig } from "../config/types.ts";
import { DEFAULTS } from "../defaults.ts";
import { type Log, silentLog } from "../log/log.ts";
import { PROVIDERS } from "../providers.ts";
import type { AssembledCompletion } from "./assemble.ts";
import { planBreakpoints, toolFingerprint, withBreakpoints } from "./cache_breakpoints.ts";
import { MessagesApi } from "./messages_api.ts";
import { assembleMessage, MessageAssembler } from "./messages_assemble.ts";
import { toMessagesParams } from "./messages_params.ts";
import type { MessagesRequest } from "./messages_wire.ts";
import { traceGeneration } from "./model_trace.ts";
import type {
  GenerateRequest,
  GenerateResult,
  ListModelsOptions,
  ModelProvider,
} from "./provider.ts";
import { type ProviderOptions, setUpProvider } from "./provider_setup.ts";
import { sameOriginFetch } from "./redirects.ts";
import {
  type ExchangeIo,
  generateWithRetries,
  listModelsOnce,
  type RequestLoopOptions,
} from "./request_loop.ts";

/** How the API is named where a remedy points at the address. */
const API_NAME = "Messages API";

/**
 * Builds the provider for an `LLM` entry of provider `anthropic`. Throws like
 * `createOpenAiProvider`: `InvalidApiKeyError` before any request when the key is missing or
 * cannot be an Anthropic key, `ProviderRequestError` when the address or proxy is unusable.
 */
export function createAnthropicProvider(options: ProviderOptions): ModelProvider {
  return new AnthropicProvider(options);
}

class AnthropicProvider implements ModelProvider {
  readonly provider: LlmConfig["provider"];
  readonly label: string;
  readonly model: string;
  readonly baseUrl: string;
  #llm: LlmConfig;
  #api: MessagesApi;
  #httpClient: Deno.HttpClient | undefined;
  #log: Log;
  /** The request loop's options, but the exchange (one per request: its body). */
  #loop: Omit<RequestLoopOptions, "exchange">;
  /** The tools of the last request that had any, for where the tools' marker goes. */
  #lastTools: string[] | undefined;

  constructor(options: ProviderOptions) {
    const { llm } = options;
    this.#llm = llm;
    this.#log = options.log ?? silentLog;
    this.provider = llm.provider;
    this.label = PROVIDERS[llm.provider].label;
    this.model = llm.model;
    const setup = setUpProvider(options, this.#log);
    this.baseUrl = setup.baseUrl;
    this.#httpClient = setup.httpClient;
    this.#api = new MessagesApi({
      baseUrl: this.baseUrl,
      client: this.#httpClient,
      // The conversation and the key never follow a redirect to another origin.
      fetch: sameOriginFetch(),
    });
    this.#loop = {
      llm,
      context: {
        label: this.label,
        provider: this.provider,
        api: API_NAME,
        model: this.model,
        baseUrl: this.baseUrl,
        timeoutSeconds: llm.timeoutSeconds,
        proxy: setup.proxy,
      },
      log: this.#log,
      random: options.random ?? Math.random,
      model: this.model,
      apiKey: setup.key,
    };
  }

  close(): void {
    this.#httpClient?.close();
    this.#httpClient = undefined;
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    return await traceGeneration(
      { provider: this.provider, model: this.model, method: "messages" },
      request,
      (request) => {
        // Built once: every attempt of the request sends the same prefix and markers.
        const body = this.#body(request);
        return generateWithRetries(request, {
          ...this.#loop,
          exchange: (request, maxTokens, io) =>
            this.#exchange(request, { ...body, max_tokens: maxTokens }, io),
        });
      },
    );
  }

  async listModels(options: ListModelsOptions = {}): Promise<string[]> {
    return await listModelsOnce(
      (signal, apiKey) => this.#api.listModels({ signal, apiKey }),
      this.#loop,
      options,
    );
  }

  /** One message, whole or streamed. */
  async #exchange(
    request: GenerateRequest,
    body: MessagesRequest,
    io: ExchangeIo,
  ): Promise<AssembledCompletion> {
    const options = { signal: io.signal, onResponse: io.onResponse, apiKey: io.apiKey };
    if (!request.onDelta) return assembleMessage(await this.#api.create(body, options));
    const stream = await this.#api.stream(body, options);
    io.alive();
    const assembler = new MessageAssembler();
    for await (const event of stream) {
      io.alive();
      io.emit(assembler.push(event));
    }
    return assembler.result();
  }

  /** The request's body, with its cache breakpoints unless caching is off. */
  #body(request: GenerateRequest): MessagesRequest {
    const params = toMessagesParams(request.messages, request.tools ?? []);
    const temperature = request.temperature ?? this.#llm.temperature;
    const body: MessagesRequest = {
      model: this.model,
      // The API requires it: LLM.max_tokens (or its default), as the caller's budget caps it
      // for each attempt.
      max_tokens: request.maxTokens ?? this.#llm.maxTokens,
      ...(params.system ? { system: params.system } : {}),
      messages: params.messages,
      ...(params.tools ? { tools: params.tools } : {}),
      // The Messages API takes 0 to 1 (OpenAI's range, which LLM.temperature and a server's
      // sampling request follow, goes to 2): a higher value is sent as 1, not refused.
      ...(temperature === undefined ? {} : { temperature: Math.min(temperature, 1) }),
      ...(request.stop && request.stop.length > 0 ? { stop_sequences: request.stop } : {}),
    };
    if (!(this.#llm.promptCaching ?? DEFAULTS.llm.promptCaching)) return body;
    const tools = (params.tools ?? []).map(toolFingerprint);
    const plan = planBreakpoints({
      tools,
      previousTools: this.#lastTools,
      systemBlocks: params.system?.length ?? 0,
      roles: params.messages.map((message) => message.role),
    });
    if (tools.length > 0) this.#lastTools = tools;
    return withBreakpoints(body, plan);
  }
}
