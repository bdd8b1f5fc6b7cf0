/**
 * Where the model key of each request comes from: LLM_API_KEY, checked once, or the program
 * `LLM.api_key_helper` (docs/secrets.md; Claude Code's `apiKeyHelper`), run before the first
 * request, again once `LLM.api_key_helper_ttl` seconds have passed, and again when the
 * provider answers 401 (the request loop then sends it once more with the new key).
 *
 * @module
 */

import type { LlmConfig } from "../config/types.ts";
import { DEFAULTS } from "../defaults.ts";
import type { RemedyText } from "../errors.ts";
import { type Log, silentLog } from "../log/log.ts";
import type { Redactor } from "../redact/redact.ts";
import { fixThen, refusedOutput, runHelper } from "../secrets/helper.ts";
import { checkApiKey } from "./api_key.ts";

/** The key of each model request. */
export interface ApiKeySource {
  /** The key as messages name it: `LLM_API_KEY`, or the helper's. */
  readonly name: string;
  /** What to do about a key the provider refuses. @default the row's (LLM_API_KEY) */
  readonly remedy?: RemedyText;
  /** The key to send now; `undefined` for a local server without one. */
  current(signal?: AbortSignal): Promise<string | undefined>;
  /**
   * The provider refused `used`: a new key, when there can be one. True when the next
   * request has another key to try.
   */
  renew(used: string | undefined, signal?: AbortSignal): Promise<boolean>;
}

/** A key fixed for the session (LLM_API_KEY, already checked). */
export function fixedKey(key: string | undefined): ApiKeySource {
  return {
    name: "LLM_API_KEY",
    current: () => Promise.resolve(key),
    renew: () => Promise.resolve(false),
  };
}

/** Options of {@linkcode HelperApiKey}. */
export interface HelperApiKeyOptions {
  parentEnv: (name: string) => string | undefined;
  redactor: Redactor;
  log?: Log;
  /** @default Date.now */
  now?: () => number;
}

/** What a key from `LLM.api_key_helper` is named in messages. */
const HELPER_KEY = "the key LLM.api_key_helper printed";

/** The key `LLM.api_key_helper` prints, kept for `LLM.api_key_helper_ttl` seconds. */
export class HelperApiKey implements ApiKeySource {
  readonly name = HELPER_KEY;
  readonly remedy: RemedyText = fixThen(
    { kind: "api_key" },
    "check the key it prints by hand: it is wrong, expired or revoked",
  );
  readonly #llm: LlmConfig & { apiKeyHelper: NonNullable<LlmConfig["apiKeyHelper"]> };
  readonly #options: HelperApiKeyOptions;
  #held?: { key: string | undefined; at: number };
  #running?: Promise<string | undefined>;

  constructor(
    llm: LlmConfig & { apiKeyHelper: NonNullable<LlmConfig["apiKeyHelper"]> },
    options: HelperApiKeyOptions,
  ) {
    this.#llm = llm;
    this.#options = options;
  }

  async current(signal?: AbortSignal): Promise<string | undefined> {
    const ttl = this.#llm.apiKeyHelperTtlSeconds ?? DEFAULTS.secrets.apiKeyHelperTtlSeconds;
    const held = this.#held;
    if (held && this.#now() - held.at < ttl * 1000) return held.key;
    if (held) this.#log.info(`the api_key_helper's key is ${ttl} s old; running it again`);
    return await this.#run(signal);
  }

  async renew(used: string | undefined, signal?: AbortSignal): Promise<boolean> {
    if (this.#held && this.#held.key !== used) return true; // Renewed meanwhile.
    this.#log.info("the provider refused the key; running LLM.api_key_helper again");
    return (await this.#run(signal)) !== used;
  }

  get #log(): Log {
    return this.#options.log ?? silentLog;
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }

  #run(signal?: AbortSignal): Promise<string | undefined> {
    // Requests waiting at once share one run.
    this.#running ??= this.#runOnce(signal).finally(() => this.#running = undefined);
    return this.#running;
  }

  async #runOnce(signal?: AbortSignal): Promise<string | undefined> {
    const { redactor } = this.#options;
    const role = { kind: "api_key" } as const;
    const helper = this.#llm.apiKeyHelper;
    const output = await runHelper(helper, {
      role,
      parentEnv: this.#options.parentEnv,
      facts: { PATCHBAY_LLM_PROVIDER: this.#llm.provider },
      redactor,
      signal,
    });
    // One line: a final line break is the program's, anything more is not a key.
    const key = output.replace(/\r?\n$/, "");
    if (/[\r\n]/.test(key)) {
      throw refusedOutput(role, helper, output, "it printed more than one line", redactor);
    }
    redactor.addSecret(key.trim());
    const checked = checkApiKey(this.#llm.provider, key, {
      baseUrlOverridden: this.#llm.baseUrl !== undefined,
      source: { name: HELPER_KEY, remedy: fixThen(role, "make it print a valid key") },
    });
    this.#held = { key: checked, at: this.#now() };
    return checked;
  }
}
