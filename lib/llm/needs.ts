/**
 * What the model client needs of the permission plan: the key's variable, the provider's
 * address, and the proxy requests to it go through.
 *
 * @module
 */

import type { Config } from "../config/types.ts";
import type { NeedsSink } from "../deno_permission/needs.ts";
import { PROVIDERS } from "../providers.ts";
import { type EnvLookup, hostPort, proxyNeeds } from "../proxy.ts";
import { API_KEY_VARIABLE } from "./api_key.ts";
import { resolveBaseUrl } from "./base_url.ts";

/** What {@linkcode providerNeeds} reads of the plan's inputs. */
export interface ProviderNeedsInputs {
  config: Pick<Config, "llm">;
  env: EnvLookup;
}

/** Adds the key's variable, and the provider's address with its proxy when one is set. */
export function providerNeeds(plan: NeedsSink, inputs: ProviderNeedsInputs): void {
  const { llm } = inputs.config;
  const preset = PROVIDERS[llm.provider];
  plan.add("env", API_KEY_VARIABLE, "the model provider's key");
  let base: string;
  try {
    base = resolveBaseUrl(llm);
  } catch {
    return; // No address configured: the configuration check reports it.
  }
  const label = `the model provider (${preset.label})`;
  plan.add("net", hostPort(base), label);
  proxyNeeds(plan, inputs, base, "model requests");
}
