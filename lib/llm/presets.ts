/**
 * The model providers patchbay knows by name. Every one is reached through its
 * OpenAI-compatible API, so one client implementation serves them all; a preset only
 * supplies the address, whether a key is needed, and what a key looks like.
 *
 * @module
 */

/** What patchbay knows about one provider. */
export interface ProviderPreset {
  /** Human name for messages. */
  label: string;
  /** OpenAI-compatible base URL; `undefined` when the entry must supply one. */
  baseUrl?: string;
  /** Local servers need no key. */
  keyRequired: boolean;
  /**
   * Prefixes a real key of this provider starts with, used to catch a key pasted for
   * the wrong provider before any request is made. Empty: the format is not checked.
   */
  keyPrefixes: readonly string[];
}

export const PROVIDERS = {
  openai: {
    label: "OpenAI",
    baseUrl: "https://api.openai.com/v1",
    keyRequired: true,
    keyPrefixes: ["sk-"],
  },
  anthropic: {
    label: "Anthropic",
    baseUrl: "https://api.anthropic.com/v1/",
    keyRequired: true,
    keyPrefixes: ["sk-ant-"],
  },
  gemini: {
    label: "Google Gemini",
    baseUrl: "https://generativelanguage.googleapis.com/v1beta/openai/",
    keyRequired: true,
    keyPrefixes: ["AIza"],
  },
  groq: {
    label: "Groq",
    baseUrl: "https://api.groq.com/openai/v1",
    keyRequired: true,
    keyPrefixes: ["gsk_"],
  },
  deepseek: {
    label: "DeepSeek",
    baseUrl: "https://api.deepseek.com/v1",
    keyRequired: true,
    keyPrefixes: ["sk-"],
  },
  mistral: {
    label: "Mistral",
    baseUrl: "https://api.mistral.ai/v1",
    keyRequired: true,
    keyPrefixes: [],
  },
  openrouter: {
    label: "OpenRouter",
    baseUrl: "https://openrouter.ai/api/v1",
    keyRequired: true,
    keyPrefixes: ["sk-or-"],
  },
  together: {
    label: "Together AI",
    baseUrl: "https://api.together.xyz/v1",
    keyRequired: true,
    keyPrefixes: [],
  },
  xai: {
    label: "xAI",
    baseUrl: "https://api.x.ai/v1",
    keyRequired: true,
    keyPrefixes: ["xai-"],
  },
  azure: {
    label: "Azure OpenAI",
    baseUrl: undefined,
    keyRequired: true,
    keyPrefixes: [],
  },
  ollama: {
    label: "Ollama",
    baseUrl: "http://localhost:11434/v1",
    keyRequired: false,
    keyPrefixes: [],
  },
  lmstudio: {
    label: "LM Studio",
    baseUrl: "http://localhost:1234/v1",
    keyRequired: false,
    keyPrefixes: [],
  },
  "openai-compatible": {
    label: "OpenAI-compatible server",
    baseUrl: undefined,
    keyRequired: false,
    keyPrefixes: [],
  },
} as const satisfies Record<string, ProviderPreset>;

export type ProviderName = keyof typeof PROVIDERS;

export const PROVIDER_NAMES = Object.keys(PROVIDERS) as ProviderName[];

/** Names people write for a provider, mapped to the preset's name. */
export const PROVIDER_ALIASES: Readonly<Record<string, ProviderName>> = {
  google: "gemini",
  "azure-openai": "azure",
  azure_openai: "azure",
  claude: "anthropic",
  grok: "xai",
  "lm-studio": "lmstudio",
  lm_studio: "lmstudio",
  openai_compatible: "openai-compatible",
  custom: "openai-compatible",
  local: "openai-compatible",
};
