/**
 * JSON text that is safe to print: every control and invisible character written as a
 * `\u` escape. `JSON.stringify` escapes only C0 controls; it leaves DEL and the C1
 * controls raw (some terminals read U+009B as CSI, the start of an escape sequence), and
 * invisible format characters too (bidi overrides such as U+202E, zero-width and tag
 * characters), which can make what a person reads differ from what is there. Escaped, the
 * text parses back to exactly the same value.
 *
 * Pure: no I/O. A leaf: imports nothing.
 *
 * @module
 */

/**
 * Characters written as escapes beyond what JSON escapes itself: DEL and C1 controls,
 * format characters (`Cf`: bidi controls, zero-width characters, tag characters, the byte
 * order mark, soft hyphen), and the line and paragraph separators.
 */
const INVISIBLE = /[\u007f-\u009f\u2028\u2029]|\p{Cf}/gu;

/**
 * `text` (JSON text, or a string about to be placed in it) with every character of
 * {@linkcode INVISIBLE} as a `\uXXXX` escape (a character beyond U+FFFF as its two
 * surrogates). Only valid inside JSON strings, where such characters can only be.
 */
export function escapeInvisible(text: string): string {
  return text.replace(INVISIBLE, (char) => {
    let out = "";
    for (let i = 0; i < char.length; i++) {
      out += `\\u${char.charCodeAt(i).toString(16).padStart(4, "0")}`;
    }
    return out;
  });
}

/** `JSON.stringify(value, null, space)` with every control and invisible character escaped. */
export function safeJson(value: unknown, space?: number): string {
  return escapeInvisible(JSON.stringify(value, null, space) ?? "null");
}
