/**
 * The model providers patchbay knows by name. Anthropic is reached through its own
 * Messages API, every other one through its OpenAI-compatible API; a preset only supplies
 * the address, whether a key is needed, and what a key looks like.
 *
 * A leaf (it imports nothing), outside `config/` and `llm/`, since both read it: the
 * configuration to validate a provider name, the model client to reach it.
 *
 * @module
 */

/** What patchbay knows about one provider. */
export interface ProviderPreset {
  /** Human name for messages. */
  label: string;
  /** The API's base URL; `undefined` when the entry must supply one. */
  baseUrl?: string;
  /** Local servers need no key. */
  keyRequired: boolean;
  /**
   * Prefixes a real key of this provider starts with, used to catch a key pasted for
   * the wrong provider before any request is made. Empty: the format is not checked.
   */
  keyPrefixes: readonly string[];
  /** Where a person gets a key, named in the remedy of a key error. */
  keyUrl?: string;
  /**
   * The request field that caps the answer's length. OpenAI's own API (and Azure's) reject
   * `max_tokens` for reasoning models and accept `max_completion_tokens` for every model;
   * most other servers only know `max_tokens`. @default "max_tokens"
   */
  maxTokensField?: "max_tokens" | "max_completion_tokens";
}

export const PROVIDERS = {
  openai: {
    label: "OpenAI",
    baseUrl: "https://api.openai.com/v1",
    keyRequired: true,
    keyPrefixes: ["sk-"],
    keyUrl: "https://platform.openai.com/api-keys",
    maxTokensField: "max_completion_tokens",
  },
  anthropic: {
    label: "Anthropic",
    // Anthropic's own Messages API (`lib/llm/anthropic_provider.ts`), not its
    // OpenAI-compatibility layer.
    baseUrl: "https://api.anthropic.com/v1",
    keyRequired: true,
    keyPrefixes: ["sk-ant-"],
    keyUrl: "https://console.anthropic.com/settings/keys",
  },
  gemini: {
    label: "Google Gemini",
    baseUrl: "https://generativelanguage.googleapis.com/v1beta/openai/",
    keyRequired: true,
    keyPrefixes: ["AIza"],
    keyUrl: "https://aistudio.google.com/apikey",
  },
  groq: {
    label: "Groq",
    baseUrl: "https://api.groq.com/openai/v1",
    keyRequired: true,
    keyPrefixes: ["gsk_"],
    keyUrl: "https://console.groq.com/keys",
  },
  deepseek: {
    label: "DeepSeek",
    baseUrl: "https://api.deepseek.com/v1",
    keyRequired: true,
    keyPrefixes: ["sk-"],
    keyUrl: "https://platform.deepseek.com/api_keys",
  },
  mistral: {
    label: "Mistral",
    baseUrl: "https://api.mistral.ai/v1",
    keyRequired: true,
    keyPrefixes: [],
    keyUrl: "https://console.mistral.ai/api-keys",
  },
  openrouter: {
    label: "OpenRouter",
    baseUrl: "https://openrouter.ai/api/v1",
    keyRequired: true,
    keyPrefixes: ["sk-or-"],
    keyUrl: "https://openrouter.ai/settings/keys",
  },
  together: {
    label: "Together AI",
    baseUrl: "https://api.together.xyz/v1",
    keyRequired: true,
    keyPrefixes: [],
    keyUrl: "https://api.together.ai/settings/api-keys",
  },
  xai: {
    label: "xAI",
    baseUrl: "https://api.x.ai/v1",
    keyRequired: true,
    keyPrefixes: ["xai-"],
    keyUrl: "https://console.x.ai",
  },
  azure: {
    label: "Azure OpenAI",
    baseUrl: undefined,
    keyRequired: true,
    keyPrefixes: [],
    keyUrl: "https://portal.azure.com (the resource's Keys and Endpoint page)",
    maxTokensField: "max_completion_tokens",
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

/** Whether images go to the model: always, never, or decided by {@linkcode visionByModel}. */
export type VisionSetting = boolean | "auto";

/**
 * Model names that take images, matched anywhere in the name (case-insensitive): OpenAI's
 * gpt-4o, gpt-4.1, gpt-4-turbo, gpt-5 and the o1/o3/o4 reasoning models (not their `-mini`
 * of o1 and o3, which take text only); Claude 3 and later; Gemini; Grok's vision and 4
 * models; Mistral's Pixtral and Small/Medium 3; Llama 3.2 Vision and Llama 4; Qwen-VL, LLaVA,
 * Gemma 3, MiniCPM-V; and any name that says `vision` or `-vl`.
 */
const VISION_MODELS =
  /gpt-4o|gpt-4\.1|gpt-4-turbo|gpt-4-vision|gpt-5|\bo1(?!-mini)\b|\bo3(?!-mini)\b|\bo4|claude-(?:3|sonnet-4|opus-4|haiku-4|[a-z]+-4)|gemini|grok-(?:\d+-)?vision|grok-4|pixtral|mistral-(?:small|medium)-3|llama-?3\.2.*vision|llama-?4|qwen.*vl|llava|gemma-?3|minicpm-v|vision|[-_]vl\b/i;

/**
 * Whether the model takes images when `LLM.vision` is `auto`: the model's name decides for
 * every provider (a gateway such as OpenRouter or an OpenAI-compatible server serves many
 * families), except DeepSeek, whose chat API takes text only. A model the rule does not
 * know is taken to be text-only: an image then reaches it as a line naming its type and
 * size, which any model accepts, rather than as a part a text model's API may refuse.
 */
export function visionByModel(provider: ProviderName, model: string): boolean {
  if (provider === "deepseek") return false;
  return VISION_MODELS.test(model);
}

/** The vision setting in effect: `LLM.vision`, with `auto` decided by the model's name. */
export function visionInEffect(setting: VisionSetting, provider: ProviderName, model: string) {
  return setting === "auto" ? visionByModel(provider, model) : setting;
}
