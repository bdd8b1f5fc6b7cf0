/**
 * Checks LLM_API_KEY before any request: a missing key, a placeholder left from an
 * example file, or a key of another provider fails here with `Invalid API key` instead of
 * as a confusing 401 (or, for a key pasted with a quote, a header error) later.
 *
 * @module
 */

import { InvalidApiKeyError, type RemedyText } from "../errors.ts";
import { type ProviderName, type ProviderPreset, PROVIDERS } from "../providers.ts";

/** The one variable the key is read from (docs/configuration.md, Providers). */
export const API_KEY_VARIABLE = "LLM_API_KEY";

/** Values example files use where a real key belongs. */
const PLACEHOLDER =
  /^(?:<[^>]*>|\$\{?[A-Z_]+\}?|x{3,}|\.{3,}|changeme|your[-_ ]?(?:api[-_ ]?)?key(?:[-_ ]?here)?|sk-\.{3}|sk-x+|none|null|undefined|todo)$/i;

/** Options of {@linkcode checkApiKey}. */
export interface CheckApiKeyOptions {
  /**
   * The entry sets `base_url`: the key then belongs to whatever server that is (a gateway,
   * a proxy), so the preset's key format is not enforced. @default false
   */
  baseUrlOverridden?: boolean;
  /**
   * Where the key came from, as messages name it, and what to do about a bad one.
   * @default LLM_API_KEY and the row's remedy
   */
  source?: { name: string; remedy: RemedyText };
}

/**
 * Returns the key to send (`undefined` for a local provider without one), or throws
 * `InvalidApiKeyError` saying what is wrong with it. The key itself never appears in the
 * message: at most the provider it seems to belong to.
 */
export function checkApiKey(
  provider: ProviderName,
  rawKey: string | undefined,
  options: CheckApiKeyOptions = {},
): string | undefined {
  // Blanks around the value are a copy-and-paste artefact, never part of a key.
  const key = rawKey?.trim();
  const name = options.source?.name ?? API_KEY_VARIABLE;
  const invalid = (reason: string) =>
    new InvalidApiKeyError(reason, undefined, options.source?.remedy);
  const preset: ProviderPreset = PROVIDERS[provider];
  const where = preset.keyUrl ? ` (get one at ${preset.keyUrl})` : "";
  if (key === undefined || key === "") {
    if (!preset.keyRequired) return undefined;
    throw invalid(
      `${name} is ${key === undefined ? "not set" : "empty"}; ` +
        `provider ${provider} (${preset.label}) needs a key${where}`,
    );
  }
  if (/^["']|["']$/.test(key)) {
    throw invalid(
      `${name} is wrapped in quote characters that became part of the value ` +
        "(quote the whole value in .env, or not at all)",
    );
  }
  if (/\s/.test(key)) {
    throw invalid(
      `${name} contains ${describeWhitespace(key)}; a key is one unbroken string`,
    );
  }
  // Local servers accept any key (or none): whatever was set is sent as it is.
  if (!preset.keyRequired) return key;
  if (PLACEHOLDER.test(key)) {
    throw invalid(
      `${name} still holds a placeholder from an example file, not a real key${where}`,
    );
  }
  if (options.baseUrlOverridden || preset.keyPrefixes.length === 0) return key;
  if (preset.keyPrefixes.some((prefix) => key.startsWith(prefix))) return key;
  const owners = likelyOwners(key, provider);
  throw invalid(
    `${name} does not look like ${article(preset.label)} key: ${preset.label} keys ` +
      `start with ${preset.keyPrefixes.map((p) => `"${p}"`).join(" or ")}` +
      (owners.length > 0 ? `, and this one looks like ${article(owners.join(" or "))} key` : "") +
      `${where}`,
  );
}

/** Labels of the providers whose key format fits the key best, other than `except`. */
function likelyOwners(key: string, except: ProviderName): string[] {
  let bestLength = 0;
  let owners: string[] = [];
  for (const [name, preset] of Object.entries(PROVIDERS) as [ProviderName, ProviderPreset][]) {
    if (name === except) continue;
    const length = Math.max(
      0,
      ...preset.keyPrefixes.filter((p) => key.startsWith(p)).map((p) => p.length),
    );
    if (length === 0 || length < bestLength) continue;
    if (length > bestLength) owners = [];
    bestLength = length;
    owners.push(preset.label);
  }
  return owners;
}

/** "a Groq", "an OpenAI". */
function article(label: string): string {
  return `${/^[AEIOU]/i.test(label) ? "an" : "a"} ${label}`;
}

function describeWhitespace(key: string): string {
  return /[\r\n]/.test(key) ? "a line break" : "a blank";
}
