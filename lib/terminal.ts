// deno-lint-ignore-file no-control-regex -- matching control characters is this file's job
/**
 * Making untrusted text safe to print in a terminal.
 *
 * @module
 */

/**
 * Invisible format characters (Unicode category Cf) that can disguise text: the bidi
 * controls (U+202A–U+202E embeddings and overrides, U+2066–U+2069 isolates, U+200E/U+200F
 * marks, U+061C) make a terminal show characters in another order than they are
 * ("Trojan Source": `txt.exe` shown as `exe.txt`), zero-width spaces (U+200B, U+2060,
 * U+FEFF) split words invisibly, and tag characters (U+E0000–U+E007F) carry text nobody
 * sees. Zero-width joiner and non-joiner (U+200D, U+200C) are kept: emoji sequences and
 * several scripts need them, and they reorder nothing.
 */
const INVISIBLE_FORMAT = /(?![\u200c\u200d])\p{Cf}/gu;

/**
 * Removes terminal control sequences (CSI, OSC, other ESC sequences and C0/C1 controls
 * except tab and newline) and invisible format characters ({@linkcode INVISIBLE_FORMAT}).
 * Text from servers, tools and the model passes through this before it reaches a
 * terminal: a hostile server could otherwise rewrite the screen, set the window title,
 * hide text, or show it in another order than it is.
 */
export function stripTerminalEscapes(text: string): string {
  return text
    .replace(INVISIBLE_FORMAT, "")
    // OSC ... BEL or ST
    .replace(/\u001b\][\s\S]*?(?:\u0007|\u001b\\)/g, "")
    // CSI sequences
    .replace(/\u001b\[[0-?]*[ -/]*[@-~]/g, "")
    // Other two-character escapes
    .replace(/\u001b[@-Z\\-_]/g, "")
    // Remaining C0 (except \t \n) and C1 controls, and lone ESC
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, "");
}

/** Every character {@linkcode showControls} writes as an escape. */
const HIDDEN_OR_CONTROL = /[\u0000-\u001f\u007f-\u009f]|(?![\u200c\u200d])\p{Cf}/gu;

/**
 * `text` with every control and invisible format character written visibly as an escape
 * (`\x1b`, `\n`, `\u{200b}`), on one line: for text a server controls that must be shown
 * as it is, never silently altered (a name, a log line). Names that differ only by such
 * characters then print differently, and an escape sequence prints as harmless text.
 * `keep` lists characters left as they are (a log keeps tabs).
 */
export function showControls(text: string, keep = ""): string {
  return text.replace(HIDDEN_OR_CONTROL, (char) => {
    if (keep.includes(char)) return char;
    if (char === "\n") return "\\n";
    if (char === "\r") return "\\r";
    if (char === "\t") return "\\t";
    const code = char.codePointAt(0)!;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
  });
}

/** Whether `text` holds a character {@linkcode showControls} would escape. */
export function hasHiddenCharacters(text: string): boolean {
  HIDDEN_OR_CONTROL.lastIndex = 0;
  const found = HIDDEN_OR_CONTROL.test(text);
  HIDDEN_OR_CONTROL.lastIndex = 0;
  return found;
}

/** A complete escape sequence starting at the match position (OSC, CSI, two-character). */
const COMPLETE_SEQUENCE = /\u001b(?:\][\s\S]*?(?:\u0007|\u001b\\)|\[[0-?]*[ -/]*[@-~]|[@-Z\\^_])/y;
/** Longest unfinished sequence held back; longer is not an escape worth waiting for. */
const MAX_HELD = 4096;

/** Whether `tail` (starting with ESC) could still become a complete sequence. */
function unfinished(tail: string): boolean {
  return tail === "\u001b" ||
    /^\u001b\[[0-?]*[ -/]*$/.test(tail) ||
    /^\u001b\][^\u0007]*$/.test(tail);
}

/**
 * {@linkcode stripTerminalEscapes} for text that arrives in pieces (a streamed answer): a
 * sequence split between two pieces is held back until it is complete, then removed,
 * instead of leaving its printable half (`[31m`, `]0;title`) on the screen.
 */
export class TerminalEscapeFilter {
  #held = "";

  /** The piece, stripped, minus any unfinished sequence at its end. */
  push(piece: string): string {
    let text = this.#held + piece;
    this.#held = "";
    let at = text.indexOf("\u001b");
    while (at >= 0) {
      COMPLETE_SEQUENCE.lastIndex = at;
      const match = COMPLETE_SEQUENCE.exec(text);
      if (match) {
        at = text.indexOf("\u001b", at + match[0].length);
      } else if (unfinished(text.slice(at)) && text.length - at <= MAX_HELD) {
        this.#held = text.slice(at);
        text = text.slice(0, at);
        break;
      } else {
        at = text.indexOf("\u001b", at + 1);
      }
    }
    return stripTerminalEscapes(text);
  }

  /** Whatever was held back, stripped (the stream ended). */
  end(): string {
    const rest = stripTerminalEscapes(this.#held);
    this.#held = "";
    return rest;
  }
}

/** East Asian wide and fullwidth characters, and emoji: two columns each. */
const WIDE =
  /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}]/u;
/** Characters that take no column of their own: combining marks and joiners. */
const ZERO_WIDTH = /[\p{M}\u200b-\u200f]/u;

/**
 * Columns `text` takes in a terminal, escape sequences left out. An estimate (terminals
 * differ on some emoji), exact for the ASCII and the Latin text patchbay writes itself.
 */
export function displayWidth(text: string): number {
  let width = 0;
  for (const char of stripTerminalEscapes(text)) {
    width += char === "\t" ? 8 - (width % 8) : ZERO_WIDTH.test(char) ? 0 : WIDE.test(char) ? 2 : 1;
  }
  return width;
}
