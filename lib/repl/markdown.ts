/**
 * Streaming Markdown for a terminal: text arrives token by token and is printed as it
 * arrives, styled as far as what has arrived allows. A line's block kind (heading, list
 * item, quote, code fence) is decided from its first few characters; inline spans
 * (`code`, **bold**, *italic*) are tracked character by character and never cross a line.
 *
 * With colour off (NO_COLOR, or output that is not a terminal) the text passes through
 * unchanged, so piped output is the model's Markdown as written.
 *
 * @module
 */

const SGR = {
  reset: "\x1b[0m",
  bold: "\x1b[1m",
  boldOff: "\x1b[22m",
  dim: "\x1b[2m",
  italic: "\x1b[3m",
  italicOff: "\x1b[23m",
  underline: "\x1b[4m",
  code: "\x1b[36m",
  codeOff: "\x1b[39m",
  heading: "\x1b[1;35m",
  quote: "\x1b[2;3m",
} as const;

/** Longest line start that can still turn out to be a block marker (`###### `, `10. `). */
const MAX_PREFIX = 12;

type LineKind = "text" | "heading" | "quote";

/** Options of {@linkcode MarkdownStream}. */
export interface MarkdownOptions {
  /** Style output; off passes text through unchanged. */
  color: boolean;
  /** Terminal width for rules. @default 80 */
  width?: number;
}

/** Incremental Markdown-to-ANSI renderer: `push` each delta, `end` once. */
export class MarkdownStream {
  readonly #color: boolean;
  readonly #width: number;
  #lineStart = "";
  #atLineStart = true;
  #inCodeBlock = false;
  #fenceLine: string | undefined;
  #lineKind: LineKind = "text";
  #bold = false;
  #italic = false;
  #code = false;
  #pendingStar = false;

  constructor(options: MarkdownOptions) {
    this.#color = options.color;
    this.#width = options.width ?? 80;
  }

  /** Renders a delta; returns what can be printed now. */
  push(text: string): string {
    if (!this.#color) return text;
    let out = "";
    for (const ch of text) out += this.#char(ch);
    return out;
  }

  /** Flushes anything held back and closes open styles. */
  end(): string {
    if (!this.#color) return "";
    let out = "";
    if (this.#fenceLine !== undefined) out += this.#finishFence();
    else if (this.#atLineStart && this.#lineStart) out += this.#startLine(this.#lineStart);
    this.#lineStart = "";
    return out + this.#settleStar() + this.#closeLine();
  }

  #char(ch: string): string {
    if (this.#fenceLine !== undefined) {
      if (ch !== "\n") {
        this.#fenceLine += ch;
        return "";
      }
      return this.#finishFence() + "\n";
    }
    if (this.#atLineStart) {
      if (ch === "\n") {
        const held = this.#lineStart;
        this.#lineStart = "";
        return this.#startLine(held, true) + this.#closeLine() + "\n";
      }
      this.#lineStart += ch;
      if (
        couldBePrefix(this.#lineStart, this.#inCodeBlock) && this.#lineStart.length < MAX_PREFIX
      ) {
        return "";
      }
      const held = this.#lineStart;
      this.#lineStart = "";
      return this.#startLine(held);
    }
    if (ch === "\n") return this.#settleStar() + this.#closeLine() + "\n";
    return this.#inline(ch);
  }

  /** A star held back at the end of a line closes italics, or was just a star. */
  #settleStar(): string {
    if (!this.#pendingStar) return "";
    this.#pendingStar = false;
    if (!this.#italic) return "*";
    this.#italic = false;
    return SGR.italicOff + this.#restoreLine();
  }

  /** Decides the kind of a line from its held-back start and renders that start. */
  #startLine(held: string, complete = false): string {
    this.#atLineStart = false;
    if (/^\s*(```|~~~)/.test(held)) {
      if (complete) {
        this.#fenceLine = held;
        return this.#finishFence();
      }
      this.#fenceLine = held;
      return "";
    }
    if (this.#inCodeBlock) return SGR.code + held;
    if (complete && /^\s*([-*_])(\s*\1){2,}\s*$/.test(held)) {
      return SGR.dim + "─".repeat(this.#width) + SGR.reset;
    }
    const heading = /^(#{1,6})\s+(.*)$/s.exec(held);
    if (heading) {
      this.#lineKind = "heading";
      return SGR.heading + this.#inlineText(heading[2]);
    }
    const bullet = /^(\s*)[-*+]\s+(.*)$/s.exec(held);
    if (bullet) return `${bullet[1]}${SGR.bold}•${SGR.boldOff} ${this.#inlineText(bullet[2])}`;
    const numbered = /^(\s*)(\d+[.)])\s+(.*)$/s.exec(held);
    if (numbered) {
      return `${numbered[1]}${SGR.bold}${numbered[2]}${SGR.boldOff} ${
        this.#inlineText(numbered[3])
      }`;
    }
    const quote = /^\s*>\s?(.*)$/s.exec(held);
    if (quote) {
      this.#lineKind = "quote";
      return `${SGR.dim}│${SGR.reset} ${SGR.quote}${this.#inlineText(quote[1])}`;
    }
    return this.#inlineText(held);
  }

  #finishFence(): string {
    const line = this.#fenceLine ?? "";
    this.#fenceLine = undefined;
    this.#atLineStart = true;
    this.#inCodeBlock = !this.#inCodeBlock;
    const language = line.trim().replace(/^(```|~~~)/, "").trim();
    if (this.#inCodeBlock) {
      const label = language ? ` ${language} ` : "";
      return `${SGR.dim}┌─${label}${"─".repeat(Math.max(0, 20 - label.length))}${SGR.reset}`;
    }
    return `${SGR.dim}└${"─".repeat(21)}${SGR.reset}`;
  }

  #inlineText(text: string): string {
    let out = "";
    for (const ch of text) out += this.#inline(ch);
    return out;
  }

  #inline(ch: string): string {
    if (this.#inCodeBlock) return ch;
    if (this.#pendingStar) {
      this.#pendingStar = false;
      if (ch === "*") {
        this.#bold = !this.#bold;
        return this.#bold ? SGR.bold : SGR.boldOff + this.#restoreLine();
      }
      // `2 * 3`: a star followed by a space opens nothing; one before a word does.
      if (ch === " " && !this.#italic) return "* ";
      this.#italic = !this.#italic;
      return (this.#italic ? SGR.italic : SGR.italicOff) + this.#inline(ch);
    }
    if (ch === "*" && !this.#code) {
      this.#pendingStar = true;
      return "";
    }
    if (ch === "`") {
      this.#code = !this.#code;
      return this.#code ? SGR.code : SGR.codeOff + this.#restoreLine();
    }
    return ch;
  }

  /** Re-applies the line's own style after an inline span closed inside it. */
  #restoreLine(): string {
    if (this.#lineKind === "heading") return SGR.heading;
    if (this.#lineKind === "quote") return SGR.quote;
    return "";
  }

  #closeLine(): string {
    const open = this.#bold || this.#italic || this.#code || this.#lineKind !== "text" ||
      this.#inCodeBlock;
    this.#bold = this.#italic = this.#code = false;
    this.#lineKind = "text";
    this.#atLineStart = true;
    return open ? SGR.reset : "";
  }
}

/** Whether a line's start could still become a block marker, so it must be held back. */
function couldBePrefix(start: string, inCodeBlock: boolean): boolean {
  if (inCodeBlock) return /^\s*(`{1,3}|~{1,3})?$/.test(start);
  return /^\s*$/.test(start) ||
    /^\s*(`{1,3}|~{1,3})$/.test(start) ||
    /^#{1,6}$/.test(start) ||
    /^\s*[-*+_]$/.test(start) ||
    /^\s*([-*_])(\s*\1)+\s*$/.test(start) ||
    /^\s*\d{1,9}[.)]?$/.test(start) ||
    /^\s*>$/.test(start);
}
