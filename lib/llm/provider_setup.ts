/**
 * What every model provider sets up before its first request, the same way for each API
 * it speaks: the key (checked, and registered with the redactor; or the helper that prints
 * it, `api_key_source.ts`), the address, and the
 * HTTP client of a proxy from `.env` or the environment.
 *
 * @module
 */

import { DenoPermissionError, ProviderRequestError } from "../errors.ts";
import { MODEL_STEPS } from "../errors/model_steps.ts";
import type { LlmConfig } from "../config/types.ts";
import type { Environment } from "../env.ts";
import type { Log } from "../log/log.ts";
import { type Redactor, sessionRedactor } from "../redact/redact.ts";
import { PROVIDERS } from "../providers.ts";
import { proxyFor, type ProxySettings } from "../proxy.ts";
import { API_KEY_VARIABLE, checkApiKey } from "./api_key.ts";
import { type ApiKeySource, fixedKey, HelperApiKey } from "./api_key_source.ts";
import { resolveBaseUrl } from "./base_url.ts";

/** Options of every provider's constructor. */
export interface ProviderOptions {
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

/** What a provider's requests go out with. */
export interface ProviderSetup {
  /** The key of each request: LLM_API_KEY's, or `LLM.api_key_helper`'s. */
  key: ApiKeySource;
  /** The API address (`base_url`, else the preset's). */
  baseUrl: string;
  proxy: ProxySettings | undefined;
  /** Deno's HTTP client for the proxy; close it with the provider. */
  httpClient: Deno.HttpClient | undefined;
}

/**
 * The key, address and proxy for `LLM`. Throws `InvalidApiKeyError` when the key is missing
 * or cannot be a key of this provider, `DenoPermissionError` when the sandbox hides it, and
 * `ProviderRequestError` when the entry names no usable address or proxy.
 */
export function setUpProvider(options: ProviderOptions, log: Log): ProviderSetup {
  const { llm, env } = options;
  const key = keySource(options, log);

  const baseUrl = resolveBaseUrl(llm);
  let proxy: ProxySettings | undefined;
  try {
    proxy = proxyFor(baseUrl, env);
  } catch (error) {
    throw new ProviderRequestError("Invalid proxy setting", undefined, {
      reason: (error as Error).message,
      remedy: MODEL_STEPS.proxySetting,
    });
  }
  let httpClient: Deno.HttpClient | undefined;
  if (proxy) {
    httpClient = Deno.createHttpClient({ proxy: { url: proxy.url, basicAuth: proxy.basicAuth } });
    log.info(`model requests go through the proxy ${proxy.url}`, { variable: proxy.variable });
  }
  return { key, baseUrl, proxy, httpClient };
}

/** The helper's key when `LLM.api_key_helper` is set (it wins), else LLM_API_KEY, checked. */
function keySource(options: ProviderOptions, log: Log): ApiKeySource {
  const { llm, env } = options;
  if (llm.apiKeyHelper) {
    return new HelperApiKey({ ...llm, apiKeyHelper: llm.apiKeyHelper }, {
      parentEnv: (name) => env.get(name),
      redactor: options.redactor ?? sessionRedactor,
      log,
    });
  }
  const preset = PROVIDERS[llm.provider];
  if (
    preset.keyRequired && env.get(API_KEY_VARIABLE) === undefined && env.denied(API_KEY_VARIABLE)
  ) {
    throw new DenoPermissionError(`--allow-env=${API_KEY_VARIABLE}`, `reading ${API_KEY_VARIABLE}`);
  }
  const key = checkApiKey(llm.provider, env.get(API_KEY_VARIABLE), {
    baseUrlOverridden: llm.baseUrl !== undefined,
  });
  options.redactor?.addSecret(key);
  return fixedKey(key);
}
