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

/**
 * East Asian Wide (W) and Fullwidth (F) characters that are not emoji: Hangul Jamo, CJK
 * punctuation and ideographs, kana, Hangul syllables, fullwidth forms, the CJK extension
 * planes. Emoji are told by their Unicode property instead ({@linkcode clusterWidth}).
 */
const EAST_ASIAN_WIDE =
  /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe10-\ufe19\ufe30-\ufe6f\uff00-\uff60\uffe0-\uffe6\u{16fe0}-\u{16fe4}\u{17000}-\u{18aff}\u{1b000}-\u{1b2ff}\u{1f200}-\u{1f251}\u{20000}-\u{2fffd}\u{30000}-\u{3fffd}]/u;
/** Emoji shown as emoji by default (a face), not as text (©, ☺ without U+FE0F). */
const EMOJI_PRESENTATION = /\p{Emoji_Presentation}/u;
/** A pictograph that U+FE0F (variation selector 16) turns into a two-column emoji. */
const PICTOGRAPH = /\p{Extended_Pictographic}/u;
/** Characters that take no column: combining marks, format characters, zero-width space. */
const ZERO_WIDTH = /^[\p{M}\p{Cf}\u200b\u1160-\u11ff]+$/u;
/** Only printable ASCII: one column per character, no segmentation needed. */
const ASCII = /^[\x20-\x7e]*$/;

/**
 * The grapheme segmenter, made at its first use: constructing one loads ICU's break rules,
 * tens of milliseconds that every start (the launcher's too) paid although most lines are
 * plain ASCII and never need it.
 */
let graphemes: Intl.Segmenter | undefined;

/**
 * Columns one grapheme cluster (what the reader sees as one character) takes: 2 for an emoji
 * (by default, or a pictograph with U+FE0F, a flag, a ZWJ sequence), for East Asian wide and
 * fullwidth characters; 0 for combining marks and format characters on their own; else 1.
 */
function clusterWidth(cluster: string): number {
  if (ZERO_WIDTH.test(cluster)) return 0;
  if (EMOJI_PRESENTATION.test(cluster)) return 2;
  if (cluster.includes("\ufe0f") && PICTOGRAPH.test(cluster)) return 2;
  if (/\p{Regional_Indicator}/u.test(cluster)) return 2;
  return EAST_ASIAN_WIDE.test(cluster) ? 2 : 1;
}

/**
 * Columns `text` takes in a terminal, escape sequences left out, counted by grapheme
 * cluster: emoji and East Asian wide characters take two, combining marks none, a tab moves
 * to the next multiple of 8. Terminals that predate Unicode 9's emoji widths may differ.
 */
export function displayWidth(text: string): number {
  const plain = stripTerminalEscapes(text);
  if (ASCII.test(plain)) return plain.length;
  let width = 0;
  graphemes ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  for (const { segment } of graphemes.segment(plain)) {
    width += segment === "\t" ? 8 - (width % 8) : segment === "\n" ? 0 : clusterWidth(segment);
  }
  return width;
}

/**
 * The columns text written to `stream` is fitted to: the terminal's width when `stream` is
 * a terminal, else `Infinity` (a pipe or a file: lines stay whole, for whatever reads them).
 * The one source of widths for wrapping (`wrapWords` and `fitLines` of lib/text.ts).
 */
export function terminalColumns(stream: { isTerminal(): boolean } = Deno.stdout): number {
  try {
    if (stream.isTerminal()) {
      const { columns } = Deno.consoleSize();
      if (columns > 0) return columns;
    }
  } catch {
    // No console to ask (a closed terminal): as for a pipe.
  }
  return Infinity;
}

/** Reads a variable; one Deno may not read (a narrow --allow-env) counts as unset. */
function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/** Where {@linkcode colorEnabled} and {@linkcode hyperlinksEnabled} read variables. */
export type EnvLookup = (name: string) => string | undefined;

/**
 * Whether to colour what is written to `stream`: the one rule every part of patchbay uses
 * (its own output, the Markdown of answers, and commander's help and errors).
 *
 * 1. `NO_COLOR` set and not empty: no colour, whatever else is set (https://no-color.org;
 *    commander's rule too).
 * 2. `FORCE_COLOR` set and not empty: `0` or `false` means no colour, anything else colour,
 *    even into a pipe or a file.
 * 3. `CLICOLOR_FORCE` set, not empty and not `0`: colour, even into a pipe or a file
 *    (https://bixense.com/clicolors; commander reads it after FORCE_COLOR too).
 * 4. `TERM=dumb`: no colour (a terminal that cannot show it).
 * 5. Otherwise colour when the stream is a terminal.
 */
export function colorEnabled(
  stream: { isTerminal(): boolean },
  env: EnvLookup = readEnv,
): boolean {
  if (env("NO_COLOR")) return false;
  const force = env("FORCE_COLOR");
  if (force) return force !== "0" && force.toLowerCase() !== "false";
  const cliForce = env("CLICOLOR_FORCE");
  if (cliForce && cliForce !== "0") return true;
  if (env("TERM") === "dumb") return false;
  try {
    return stream.isTerminal();
  } catch {
    return false;
  }
}

/**
 * Whether text written to `stream` may move the cursor and erase (a spinner, a line drawn
 * again): a terminal, but not one that says it cannot (`TERM=dumb`: Emacs' shell, some
 * editors' consoles), which gets plain lines, one after the other.
 */
export function canRedraw(
  stream: { isTerminal(): boolean },
  env: EnvLookup = readEnv,
): boolean {
  if (env("TERM") === "dumb") return false;
  try {
    return stream.isTerminal();
  } catch {
    return false;
  }
}

/** `TERM_PROGRAM` values of terminals known to show OSC 8 hyperlinks. */
const HYPERLINK_PROGRAMS = new Set(["iTerm.app", "WezTerm", "vscode", "ghostty", "Hyper"]);

/**
 * Whether `stream` shows OSC 8 hyperlinks (a link's text, clickable, its address hidden):
 * only with colour on, and only in terminals known to support them (iTerm2, WezTerm, VS Code,
 * Ghostty, Hyper, VTE-based terminals from 0.50 such as GNOME Terminal, Windows Terminal,
 * kitty, foot, Alacritty). Elsewhere, tmux included, a link is shown with its address in the
 * text. `FORCE_HYPERLINK=1` or `0` overrides the detection.
 */
export function hyperlinksEnabled(
  stream: { isTerminal(): boolean },
  env: EnvLookup = readEnv,
): boolean {
  if (!colorEnabled(stream, env)) return false;
  const force = env("FORCE_HYPERLINK");
  if (force) return force !== "0" && force.toLowerCase() !== "false";
  if (env("TMUX")) return false;
  if (HYPERLINK_PROGRAMS.has(env("TERM_PROGRAM") ?? "")) return true;
  if (Number(env("VTE_VERSION") ?? 0) >= 5000) return true;
  if (env("WT_SESSION") || env("KITTY_WINDOW_ID")) return true;
  return /^(xterm-kitty|foot|alacritty)/.test(env("TERM") ?? "");
}

/**
 * The variables {@linkcode colorEnabled} and {@linkcode hyperlinksEnabled} read: the
 * permission plan grants them, so a narrow session decides as an unrestricted one does.
 */
export const TERMINAL_VARIABLES: readonly string[] = [
  "NO_COLOR",
  "FORCE_COLOR",
  "CLICOLOR_FORCE",
  "TERM",
  "FORCE_HYPERLINK",
  "TMUX",
  "TERM_PROGRAM",
  "VTE_VERSION",
  "WT_SESSION",
  "KITTY_WINDOW_ID",
];
