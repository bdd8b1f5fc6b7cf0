/**
 * The model provider: is LLM_API_KEY there and plausible for the provider (checked as the
 * client checks it, before any request), and does the provider accept it (one model-list
 * request through the client's own provider code).
 *
 * @module
 */

import type { Config } from "../config/types.ts";
import type { Environment } from "../env.ts";
import { DenoPermissionError, ProviderRequestError } from "../errors.ts";
import { API_KEY_VARIABLE, checkApiKey } from "../llm/api_key.ts";
import { isLoopback } from "../llm/network_failures.ts";
import { createProvider } from "../llm/create_provider.ts";
import { resolveBaseUrl } from "../llm/base_url.ts";
import { PROVIDERS } from "../providers.ts";
import type { Log } from "../log/log.ts";
import type { Redactor } from "../redact/redact.ts";
import { didYouMean, plural } from "../text/text.ts";
import { type CheckResult, failure, pass, skip, warn } from "./check.ts";
import { DOCTOR_STEPS } from "../errors/doctor_steps.ts";

/** Seconds the model-list request may take: the doctor must stay quick. */
export const PROVIDER_CHECK_TIMEOUT_S = 20;

/** Model ids shown when the configured model is not among them. */
const MODELS_SHOWN = 8;

/** Whether LLM_API_KEY is set, loaded and shaped like a key of the provider. */
export function checkApiKeyPresent(config: Config, env: Environment): CheckResult {
  const { llm } = config;
  const preset = PROVIDERS[llm.provider];
  if (llm.apiKeyHelper) {
    // The provider check runs it: its failure is reported there, with its own words.
    const helper = [llm.apiKeyHelper.command, ...llm.apiKeyHelper.args].join(" ");
    return pass(
      "api_key",
      `the key comes from LLM.api_key_helper (${helper}), not ${API_KEY_VARIABLE}; the ` +
        "provider check runs it",
    );
  }
  const raw = env.get(API_KEY_VARIABLE);
  if (raw === undefined && preset.keyRequired && env.denied(API_KEY_VARIABLE)) {
    return failure(
      "api_key",
      new DenoPermissionError(`--allow-env=${API_KEY_VARIABLE}`, `reading ${API_KEY_VARIABLE}`),
    );
  }
  let key: string | undefined;
  try {
    key = checkApiKey(llm.provider, raw, { baseUrlOverridden: llm.baseUrl !== undefined });
  } catch (error) {
    return failure("api_key", error);
  }
  if (key === undefined) {
    return pass("api_key", `${preset.label} needs no key, and ${API_KEY_VARIABLE} is not set`);
  }
  const source = env.source(API_KEY_VARIABLE) === "file" ? ".env" : "the process environment";
  const shape = llm.baseUrl !== undefined || preset.keyPrefixes.length === 0
    ? "its format is not checked" +
      (llm.baseUrl !== undefined ? " (LLM.base_url is set: the server there issues keys)" : "")
    : `it has the shape of ${preset.label === "OpenAI" ? "an" : "a"} ${preset.label} key`;
  const finding = `${API_KEY_VARIABLE} is set (from ${source}, ${key.length} characters); ${shape}`;
  const fromFile = env.fileValue(API_KEY_VARIABLE);
  if (env.source(API_KEY_VARIABLE) === "process" && fromFile !== undefined && fromFile !== raw) {
    return warn(
      "api_key",
      `${finding}, but .env holds a different ${API_KEY_VARIABLE}, which the process ` +
        "environment overrides",
      DOCTOR_STEPS.keyOverridden(API_KEY_VARIABLE),
    );
  }
  return pass("api_key", finding);
}

/** Options of {@linkcode checkProvider}. */
export interface ProviderCheckOptions {
  /** The key check passed; the provider is asked only then. */
  keyUsable: boolean;
  offline?: boolean;
  log?: Log;
  redactor?: Redactor;
  signal?: AbortSignal;
}

/** Asks the provider for its models with the configured key. */
export async function checkProvider(
  config: Config,
  env: Environment,
  options: ProviderCheckOptions,
): Promise<CheckResult> {
  const name = "provider";
  if (options.offline && !onThisMachine(config)) {
    return skip(name, "not asked (--offline)");
  }
  if (!options.keyUsable) return skip(name, `not asked: ${API_KEY_VARIABLE} is not usable yet`);
  const { llm } = config;
  let provider;
  try {
    provider = createProvider({ llm, env, log: options.log, redactor: options.redactor });
  } catch (error) {
    return failure(name, error);
  }
  try {
    const ids = await provider.listModels({
      signal: options.signal,
      timeoutSeconds: Math.min(llm.timeoutSeconds, PROVIDER_CHECK_TIMEOUT_S),
    });
    const where = `${provider.label} at ${provider.baseUrl}`;
    const accepted = llm.apiKeyHelper
      ? "accepted the key LLM.api_key_helper printed"
      : PROVIDERS[llm.provider].keyRequired || env.get(API_KEY_VARIABLE)
      ? "accepted LLM_API_KEY"
      : "answered";
    const listed = isListed(ids, llm.model);
    if (ids.length === 0 || listed || llm.provider === "azure") {
      return pass(
        name,
        `${where} ${accepted}: ${plural(ids.length, "model")} listed` +
          (listed ? `, including "${llm.model}"` : ""),
      );
    }
    const suggestion = didYouMean(llm.model, ids);
    return warn(
      name,
      `${where} ${accepted}, but its ${plural(ids.length, "model")} ` +
        `${ids.length === 1 ? "does" : "do"} not include "${llm.model}"`,
      DOCTOR_STEPS.unknownModel(suggestion),
      [`models: ${ids.slice(0, MODELS_SHOWN).join(", ")}${ids.length > MODELS_SHOWN ? ", …" : ""}`],
    );
  } catch (error) {
    if (error instanceof ProviderRequestError && error.status === 404) {
      return warn(
        name,
        `the key could not be verified: ${provider.baseUrl} has no model list (HTTP 404), ` +
          "so the provider was not asked about it",
        DOCTOR_STEPS.noModelList,
      );
    }
    return failure(name, error);
  } finally {
    provider.close();
  }
}

/**
 * Whether `model` is among `ids`, itself or as a dated snapshot (Anthropic lists
 * `claude-sonnet-4-5-20250929` and answers to the alias `claude-sonnet-4-5` too).
 */
function isListed(ids: readonly string[], model: string): boolean {
  return ids.some((id) =>
    id === model || (id.startsWith(`${model}-`) && /^\d{8}$/.test(id.slice(model.length + 1)))
  );
}

/** A provider on loopback (Ollama, LM Studio, a local gateway) needs no internet. */
function onThisMachine(config: Config): boolean {
  try {
    return isLoopback(resolveBaseUrl(config.llm));
  } catch {
    return false;
  }
}
