/**
 * Where model requests go, decided from the `LLM` entry alone: a leaf, so that the
 * permission plan and the doctor can name the model's host without loading the client.
 *
 * @module
 */

import type { LlmConfig } from "../config/types.ts";
import { ProviderRequestError } from "../errors.ts";
import { MODEL_STEPS } from "../errors/model_steps.ts";
import { PROVIDERS } from "../providers.ts";

/**
 * The API address for the entry: `base_url`, else the preset's (Azure: its endpoint).
 * Throws `ProviderRequestError` when there is none.
 */
export function resolveBaseUrl(llm: LlmConfig): string {
  if (llm.baseUrl) return llm.baseUrl;
  if (llm.provider === "azure" && llm.endpoint) return `${llm.endpoint.replace(/\/+$/, "")}/openai`;
  const preset = PROVIDERS[llm.provider];
  if (preset.baseUrl) return preset.baseUrl;
  throw new ProviderRequestError(`Provider ${llm.provider} has no address`, undefined, {
    reason: `LLM.provider is ${llm.provider}, which has no built-in address, and LLM.base_url ` +
      "is not set",
    remedy: MODEL_STEPS.baseUrl,
  });
}
