/**
 * Secret redaction for everything patchbay writes: log lines, error details, stored
 * conversations. Known secret values (API keys, passwords, bearer tokens, OAuth tokens)
 * are registered as they are loaded; patterns catch the shapes of secrets that were
 * never registered (a token inside a server's error message, `user:pass@` in a URL).
 *
 * @module
 */

/** What a redacted secret is replaced with. */
export const REDACTED = "[REDACTED]";

/** Shorter values are not registered: replacing them would mangle ordinary words. */
const MIN_SECRET_LENGTH = 6;

/** At least this long, a value after `Bearer`/`Basic`/`Token` is a credential, whatever it holds. */
const LONG_CREDENTIAL_CHARS = 32;

/**
 * Whether a word after `Bearer`, `Basic` or `Token` is shaped like a credential rather
 * than prose ("the token endpoint", "Bearer realm"): it holds a digit, or mixes cases
 * (base64, JWTs), or is long. Lower-case words and capitalised ones are prose.
 */
function looksLikeCredential(value: string): boolean {
  return value.length >= LONG_CREDENTIAL_CHARS || /\d/.test(value) ||
    (/[a-z]/.test(value) && /[A-Z]/.test(value.slice(1)));
}

/** A value after `key:` that is prose: a small number or a lower-case word. */
const PROSE_VALUE = /^(?:\d{1,5}|[a-z]+(?:-[a-z]+)*)$/;

/** Query parameters whose values are secrets when they appear in a configured URL. */
const SECRET_PARAMETER =
  /(?:^|[_-])(?:key|apikey|token|secret|password|passwd|pass|pwd|auth|sig|signature|credentials?|code)$/i;

type Replacement = string | ((match: string, ...groups: string[]) => string);

const PATTERNS: ReadonlyArray<[RegExp, Replacement]> = [
  // Authorization header values: always after an Authorization header name; elsewhere
  // only when shaped like a credential (prose such as "the token endpoint" is left alone).
  [
    /(\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?)?\b(Bearer|Basic|Token)(\s+)([A-Za-z0-9._~+/=-]{6,})/gi,
    (match, header, scheme, _space, value) =>
      header || looksLikeCredential(value) ? `${header ?? ""}${scheme} ${REDACTED}` : match,
  ],
  // Credentials embedded in URLs: scheme://user:password@host
  [/\b([a-z][a-z0-9+.-]*:\/\/)([^\s/:@]*):([^\s/@]+)@/gi, `$1$2:${REDACTED}@`],
  // Well-known key shapes (OpenAI, Anthropic, Groq, xAI, Google, GitHub, Slack).
  [
    /\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|gsk_[A-Za-z0-9]{16,}|xai-[A-Za-z0-9]{16,}|AIza[A-Za-z0-9_-]{30,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abprs]-[A-Za-z0-9-]{10,})/g,
    REDACTED,
  ],
  // key=value and "key": "value" forms of secret-looking names. (Authorization values are
  // caught by the scheme pattern above; matching the bare word would eat prose.) In the
  // unquoted `key: value` form, a small number or a plain word is prose
  // ("LLM_API_KEY: 1 model listed", "password: required"), not a secret.
  [
    /((?:["']?)(?:access_token|refresh_token|id_token|api[_-]?key|apikey|client_secret|password|passwd|x-api-key)(["']?)\s*([:=])\s*(["']?))(?!(?:Bearer|Basic|Token)\s|\[REDACTED\])([^"'\s,&;}]+)/gi,
    (match, prefix, keyQuote, separator, valueQuote, value) =>
      separator === ":" && !keyQuote && !valueQuote && PROSE_VALUE.test(value)
        ? match
        : `${prefix}${REDACTED}`,
  ],
  // OAuth authorization codes and tokens in query strings.
  [
    /([?&](?:code|token|access_token|refresh_token|key|client_secret)=)[^&\s"']+/gi,
    `$1${REDACTED}`,
  ],
];

/** Replaces registered secrets and secret-shaped text. */
export class Redactor {
  #secrets = new Set<string>();
  #sorted: string[] = [];

  /** Registers a value to be hidden wherever it appears. Empty or short values are ignored. */
  addSecret(value: string | undefined): void {
    if (!value || value.length < MIN_SECRET_LENGTH || this.#secrets.has(value)) return;
    this.#secrets.add(value);
    // Longest first, so a secret containing another is replaced whole.
    this.#sorted = [...this.#secrets].sort((a, b) => b.length - a.length);
  }

  /**
   * Registers the credentials a configured URL carries: the password of `user:password@`
   * (or the user alone, when it is a key with no password) and the values of secret-named
   * query parameters (`?api_key=`, `?token=`, `?sig=` …), as written and decoded.
   */
  addUrlSecrets(url: string | undefined): void {
    if (!url) return;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return;
    }
    const decoded = (value: string) => {
      try {
        return decodeURIComponent(value);
      } catch {
        return value; // not percent-encoded text
      }
    };
    const register = (written: string) => {
      this.addSecret(written);
      this.addSecret(decoded(written));
      this.addSecret(decoded(written.replace(/\+/g, " ")));
    };
    if (parsed.password) register(parsed.password);
    else if (parsed.username) register(parsed.username);
    for (const [, key, written] of parsed.search.matchAll(/[?&]([^=&#]*)=([^&#]*)/g)) {
      if (SECRET_PARAMETER.test(decoded(key))) register(written);
    }
  }

  /** The text with every secret replaced by {@linkcode REDACTED}. */
  redact(text: string): string {
    let out = text;
    for (const secret of this.#sorted) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    }
    for (const [pattern, replacement] of PATTERNS) {
      out = out.replace(pattern, replacement as (match: string, ...groups: string[]) => string);
    }
    return out;
  }

  /** Deep copy of a JSON-like value with every string redacted. */
  redactValue<T>(value: T): T {
    if (typeof value === "string") return this.redact(value) as T;
    if (Array.isArray(value)) return value.map((v) => this.redactValue(v)) as T;
    if (value && typeof value === "object") {
      return Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, this.redactValue(v)]),
      ) as T;
    }
    return value;
  }
}
