/**
 * The `LLM` section: its shape (zod, lib/config/schema.ts), the provider by name, and the
 * fields each provider needs or refuses, judged on the expanded values.
 *
 * @module
 */

import { DEFAULTS } from "../defaults.ts";
import { PROVIDER_ALIASES, PROVIDER_NAMES, type ProviderName, PROVIDERS } from "../providers.ts";
import { didYouMean } from "../text/text.ts";
import type { ProblemList } from "./problem_list.ts";
import { LlmSchema } from "./schema.ts";
import type { LlmConfig } from "./types.ts";
import type { ConfigValues } from "./values.ts";
import { parseSoundFields } from "./zod_issues.ts";
import { readHelper } from "./helpers.ts";

/** The model settings of `value` (the `LLM` section); `undefined` when they have problems. */
export function readLlm(
  problems: ProblemList,
  values: ConfigValues,
  value: unknown,
): LlmConfig | undefined {
  // The provider is checked even when other LLM fields are wrong, so a typo in it is
  // reported in the same run.
  const rawProvider = isObject(value) ? value.provider : undefined;
  const provider = typeof rawProvider === "string" && rawProvider !== ""
    ? knownProvider(problems, rawProvider)
    : undefined;
  // Fields with problems are reported and left out; the rules below judge the rest.
  const shaped = parseSoundFields(problems, LlmSchema, value, ["LLM"]);
  if (!shaped) return undefined;
  const llm = shaped.data;
  const baseUrl = values.url(llm.base_url, ["LLM", "base_url"]);
  const endpoint = values.url(llm.endpoint, ["LLM", "endpoint"]);
  // These rules read the expanded URLs (an empty ${VAR} counts as absent), so they run
  // here rather than in the schema.
  if (provider === "azure" && !endpoint && !baseUrl) {
    problems.missing(
      ["LLM", "endpoint"],
      "Azure OpenAI needs its resource endpoint, https://<resource>.openai.azure.com",
    );
  }
  if (provider === "azure" && !llm.api_version) {
    problems.missing(["LLM", "api_version"], "Azure OpenAI needs an API version, e.g. 2024-10-21");
  }
  if (provider === "openai-compatible" && !baseUrl) {
    problems.missing(
      ["LLM", "base_url"],
      "provider openai-compatible needs the server's base_url, e.g. http://localhost:8000/v1",
    );
  }
  for (const field of ["endpoint", "deployment", "api_version"] as const) {
    if (llm[field] !== undefined && provider !== undefined && provider !== "azure") {
      problems.add(
        ["LLM", field],
        `"${field}" applies only to provider azure`,
        `remove it, or set provider to azure`,
        problems.keyPos(["LLM", field]),
      );
    }
  }
  if (!provider || shaped.refused.size > 0) return undefined;
  return {
    provider,
    model: llm.model,
    maxTokens: llm.max_tokens,
    temperature: llm.temperature ?? DEFAULTS.llm.temperature,
    maxContextLength: llm.max_context_length,
    baseUrl,
    endpoint,
    deployment: llm.deployment,
    apiVersion: llm.api_version,
    systemPrompt: llm.system_prompt,
    timeoutSeconds: llm.timeout,
    maxRetries: llm.max_retries,
    vision: llm.vision,
    promptCaching: llm.prompt_caching,
    ...(llm.api_key_helper === undefined ? {} : {
      apiKeyHelper: readHelper(problems, values, llm.api_key_helper, ["LLM", "api_key_helper"]),
      apiKeyHelperTtlSeconds: llm.api_key_helper_ttl,
    }),
    ...(llm.price
      ? {
        price: {
          input: llm.price.input,
          output: llm.price.output,
          cacheRead: llm.price.cache_read ?? llm.price.input,
          cacheWrite: llm.price.cache_write ?? llm.price.input,
        },
      }
      : {}),
  };
}

function knownProvider(problems: ProblemList, name: string): ProviderName | undefined {
  if (name in PROVIDERS) return name as ProviderName;
  const suggestion = PROVIDER_ALIASES[name.toLowerCase()] ?? didYouMean(name, PROVIDER_NAMES);
  problems.add(
    ["LLM", "provider"],
    `unknown provider "${name}"`,
    (suggestion ? `did you mean "${suggestion}"? ` : "") +
      `known providers: ${PROVIDER_NAMES.join(", ")}`,
  );
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
