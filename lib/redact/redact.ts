/**
 * Secret redaction for everything patchbay writes or passes on: what a server sends
 * (masked where it enters patchbay, `lib/connections/`), log lines, error details, stored
 * conversations, model requests. Known secret values (API keys, passwords, bearer tokens,
 * OAuth tokens, whatever a `${VAR}` put into a header, argument, environment or URL) are
 * registered as they are loaded, with the forms a server can cheaply echo them in
 * (base64 at any alignment, percent- and JSON-escaped); patterns catch the shapes of
 * secrets that were never registered (a token inside a server's error message,
 * `user:pass@` in a URL).
 *
 * One redactor holds the session's secrets: {@linkcode sessionRedactor}; any layer masks
 * text or a JSON value with {@linkcode maskSecrets}.
 *
 * @module
 */

import { secretForms } from "./secret_forms.ts";

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
  // ("LLM_API_KEY: 1 model listed", "password: required"), not a secret. Nor is a
  // variable reference (`${API_KEY}`, `${input:api-key}`): it names where a value comes from.
  [
    /((?:["']?)(?:access_token|refresh_token|id_token|api[_-]?key|apikey|client_secret|password|passwd|x-api-key)(["']?)\s*([:=])\s*(["']?))(?!(?:Bearer|Basic|Token)\s|\[REDACTED\]|\$\{)([^"'\s,&;}]+)/gi,
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
  /** Every registered secret in each form it is looked for, longest first. */
  #sorted: string[] = [];

  /**
   * Registers a value to be hidden wherever it appears, as written or encoded (see
   * `secret_forms.ts`). Empty or short values are ignored.
   */
  addSecret(value: string | undefined): void {
    if (!value || value.length < MIN_SECRET_LENGTH || this.#secrets.has(value)) return;
    this.#secrets.add(value);
    const forms = new Set(this.#sorted);
    for (const form of secretForms(value)) forms.add(form);
    // Longest first, so a secret containing another is replaced whole.
    this.#sorted = [...forms].sort((a, b) => b.length - a.length);
  }

  /** Every form of every registered secret, longest first (for maskers of streams). */
  get forms(): readonly string[] {
    return this.#sorted;
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
    // Binary content (an image's base64) holds no prose to find key shapes in, and
    // matching shapes in random letters could only corrupt it.
    if (text.length >= BINARY_MIN_CHARS && BASE64_TEXT.test(text)) return this.#redactBinary(text);
    return this.#redactShapes(this.#redactKnown(text));
  }

  /**
   * `text` with every form of every registered secret replaced, and nothing else: for
   * text whose credential-shaped words are not secrets of this session (a model writing
   * `password=...` in a code sample must keep it).
   */
  redactKnown(text: string): string {
    return this.#redactKnown(text);
  }

  /** `text` with every form of every registered secret replaced. */
  #redactKnown(text: string): string {
    let out = text;
    for (const secret of this.#sorted) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    }
    return out;
  }

  /**
   * Base64 of binary content with every secret form overwritten by `A`s of its length:
   * still valid base64 of the same size (an image stays decodable), the secret gone.
   */
  #redactBinary(text: string): string {
    let out = text;
    for (const secret of this.#sorted) {
      if (out.includes(secret)) out = out.split(secret).join("A".repeat(secret.length));
    }
    return out;
  }

  #redactShapes(text: string): string {
    let out = text;
    for (const [pattern, replacement] of PATTERNS) {
      out = out.replace(pattern, replacement as (match: string, ...groups: string[]) => string);
    }
    return out;
  }

  /**
   * Deep copy of a JSON-like value with every string redacted. A secret split across
   * strings of the same field (`{text: "sk-ab"}, {text: "cdef…"}` in a tool's content)
   * is masked in each piece.
   */
  redactValue<T>(value: T): T {
    const fields = new Map<string, StringSlot[]>();
    const copy = this.#copy(value, "", fields);
    for (const [field, slots] of fields) {
      if (slots.length < 2 || BINARY_FIELDS.has(field)) continue;
      const masked = maskAcross(slots.map((slot) => slot.get()), this.#sorted);
      slots.forEach((slot, i) => slot.set(masked[i]));
    }
    return copy as T;
  }

  #copy(value: unknown, field: string, fields: Map<string, StringSlot[]>): unknown {
    if (typeof value === "string") {
      return BINARY_FIELDS.has(field) && BASE64_TEXT.test(value)
        ? this.#redactBinary(value)
        : this.redact(value);
    }
    if (Array.isArray(value)) {
      const out = value.map((v) => this.#copy(v, field, fields));
      out.forEach((v, i) => {
        if (typeof v === "string") slotOf(fields, field, out, i);
      });
      return out;
    }
    if (value && typeof value === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        out[k] = this.#copy(v, k, fields);
        if (typeof out[k] === "string") slotOf(fields, k, out, k);
      }
      return out;
    }
    return value;
  }

  /**
   * Masks `error` in place, and what it wraps: its message, stack, and the reason,
   * remedy, details and data a typed or protocol error carries. Returns it.
   */
  redactError<E>(error: E): E {
    const seen = new Set<unknown>();
    let current: unknown = error;
    while (current instanceof Error && !seen.has(current) && seen.size < MAX_CAUSES) {
      seen.add(current);
      const target = current as unknown as Record<string, unknown>;
      for (const key of ["message", "stack", "reason", "remedy"]) {
        if (typeof target[key] === "string") rewrite(target, key, this.redact(target[key]));
      }
      if (Array.isArray(target.details)) {
        rewrite(target, "details", this.redactValue(target.details));
      }
      if (target.data !== undefined) rewrite(target, "data", this.redactValue(target.data));
      current = current.cause;
    }
    return error;
  }
}

/** A string this long made only of base64 is binary content, not text. */
const BINARY_MIN_CHARS = 1024;
const BASE64_TEXT = /^[A-Za-z0-9+/_-]+={0,2}$/;
/** MCP's fields of binary content (`blob` of a resource, `data` of an image or audio). */
const BINARY_FIELDS: ReadonlySet<string> = new Set(["blob", "data"]);

/** How deep {@linkcode Redactor.redactError} follows causes. */
const MAX_CAUSES = 16;

/** One string inside a copied value, readable and replaceable. */
interface StringSlot {
  get(): string;
  set(value: string): void;
}

function slotOf(
  fields: Map<string, StringSlot[]>,
  field: string,
  holder: Record<string | number, unknown> | unknown[],
  key: string | number,
): void {
  const box = holder as Record<string | number, unknown>;
  const slot = { get: () => box[key] as string, set: (v: string) => box[key] = v };
  const slots = fields.get(field);
  if (slots) slots.push(slot);
  else fields.set(field, [slot]);
}

/** Sets a property that may be read-only to the compiler, or a getter at run time. */
function rewrite(target: Record<string, unknown>, key: string, value: unknown): void {
  try {
    Object.defineProperty(target, key, { value, writable: true, configurable: true });
  } catch {
    // A frozen error: nothing to do but leave it (the boundary masks what it prints).
  }
}

/**
 * `pieces` with every occurrence of a secret that spans two or more of them masked:
 * each piece's share of it becomes {@linkcode REDACTED}. Occurrences inside one piece
 * are left to {@linkcode Redactor.redact}.
 */
export function maskAcross(pieces: readonly string[], secrets: readonly string[]): string[] {
  const joined = pieces.join("");
  const starts: number[] = [];
  let offset = 0;
  for (const piece of pieces) {
    starts.push(offset);
    offset += piece.length;
  }
  const hidden = new Uint8Array(joined.length);
  let any = false;
  for (const secret of secrets) {
    for (let at = joined.indexOf(secret); at >= 0; at = joined.indexOf(secret, at + 1)) {
      const end = at + secret.length;
      const first = pieceAt(starts, at);
      if (first === pieceAt(starts, end - 1)) continue;
      hidden.fill(1, at, end);
      any = true;
    }
  }
  if (!any) return [...pieces];
  return pieces.map((piece, i) => {
    let out = "";
    let inside = false;
    for (let j = 0; j < piece.length; j++) {
      if (hidden[starts[i] + j]) {
        if (!inside) out += REDACTED;
        inside = true;
      } else {
        out += piece[j];
        inside = false;
      }
    }
    return out;
  });
}

function pieceAt(starts: readonly number[], index: number): number {
  let i = starts.length - 1;
  while (i > 0 && starts[i] > index) i--;
  return i;
}

/**
 * The session's redactor: start-up registers every secret of the configuration and the
 * environment in it, and so do OAuth (tokens, client secrets) and `/refresh`. The log,
 * the connections and any other layer mask with this one, so they agree on what is secret.
 */
export const sessionRedactor: Redactor = new Redactor();

/**
 * `value` (text, or a JSON-like value, copied) with every secret of the session masked:
 * the one call any layer makes before text a server controls is shown, stored or sent.
 */
export function maskSecrets<T>(value: T): T {
  return typeof value === "string"
    ? sessionRedactor.redact(value) as T
    : sessionRedactor.redactValue(value);
}
