/**
 * The provider for an `LLM` entry: Anthropic's own Messages API for `provider: "anthropic"`,
 * the OpenAI-compatible chat API for every other provider. Chat, sampling and the doctor all
 * get theirs here.
 *
 * @module
 */

import { createAnthropicProvider } from "./anthropic_provider.ts";
import { createOpenAiProvider } from "./openai_provider.ts";
import type { ModelProvider } from "./provider.ts";
import type { ProviderOptions } from "./provider_setup.ts";

/**
 * Builds the provider for `options.llm`. Throws `InvalidApiKeyError` before any request
 * when the key is missing or cannot be a key of the provider, and `ProviderRequestError`
 * when the entry names no usable address or proxy.
 */
export function createProvider(options: ProviderOptions): ModelProvider {
  return options.llm.provider === "anthropic"
    ? createAnthropicProvider(options)
    : createOpenAiProvider(options);
}
