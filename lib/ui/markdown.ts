/**
 * Streaming Markdown for a terminal: text arrives token by token and is printed as it
 * arrives, styled as far as what has arrived allows. A line's block kind (heading, list
 * item, quote, code fence) is decided from its first few characters; inline spans
 * (`code`, **bold**, *italic*) are tracked character by character and never cross a line.
 * A table is held until its last row has arrived, then printed aligned
 * (lib/ui/markdown_table.ts); a link `[text](url)` is held until it closes, then shown as an
 * OSC 8 hyperlink where the terminal supports them (its host beside it when the text is not
 * the address, so a link cannot pass for another) and as `text (url)` elsewhere.
 *
 * With colour off (NO_COLOR, or output that is not a terminal) the text passes through
 * unchanged, so piped output is the model's Markdown as written.
 *
 * @module
 */

import { renderTable, separatorAlignments, tableCells } from "./markdown_table.ts";

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
/** Longest link held back waiting for its `)`; longer is shown as it came. */
const MAX_LINK = 2048;
/** Most table rows held back; a longer table is printed in parts. */
const MAX_TABLE_ROWS = 200;
/** Addresses shown as hyperlinks; any other scheme is shown as text. */
const LINK_SCHEMES = /^(https?|mailto):/i;

type LineKind = "text" | "heading" | "quote";

/** Options of {@linkcode MarkdownStream}. */
export interface MarkdownOptions {
  /** Style output; off passes text through unchanged. */
  color: boolean;
  /** Terminal width for rules and tables. @default 80 */
  width?: number;
  /** Show links as OSC 8 hyperlinks (lib/terminal.ts hyperlinksEnabled). @default false */
  hyperlinks?: boolean;
}

/** Incremental Markdown-to-ANSI renderer: `push` each delta, `end` once. */
export class MarkdownStream {
  readonly #color: boolean;
  readonly #width: number;
  readonly #hyperlinks: boolean;
  #lineStart = "";
  /** The table line being received, and the rows received before it. */
  #tableLine: string | undefined;
  #tableRows: string[] = [];
  /** A link being received, from its `[`. */
  #link: string | undefined;
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
    this.#hyperlinks = options.hyperlinks ?? false;
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
    if (this.#tableLine !== undefined) {
      this.#tableRows.push(this.#tableLine);
      this.#tableLine = undefined;
    }
    if (this.#fenceLine !== undefined) out += this.#finishFence();
    else if (this.#atLineStart && this.#lineStart) out += this.#startLine(this.#lineStart);
    else out += this.#flushTable();
    this.#lineStart = "";
    return out + this.#flushLink() + this.#settleStar() + this.#closeLine();
  }

  #char(ch: string): string {
    if (this.#tableLine !== undefined) {
      if (ch !== "\n") {
        this.#tableLine += ch;
        return "";
      }
      this.#tableRows.push(this.#tableLine);
      this.#tableLine = undefined;
      this.#atLineStart = true;
      return this.#tableRows.length >= MAX_TABLE_ROWS ? this.#flushTable() : "";
    }
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
    if (ch === "\n") return this.#flushLink() + this.#settleStar() + this.#closeLine() + "\n";
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
    if (!this.#inCodeBlock && /^\s*\|/.test(held) && !complete) {
      this.#tableLine = held;
      return "";
    }
    if (!this.#inCodeBlock && /^\s*\|/.test(held)) {
      this.#tableRows.push(held);
      this.#atLineStart = true;
      return "";
    }
    return this.#flushTable() + this.#blockStart(held, complete);
  }

  /** Renders the start of a line that is not a table row. */
  #blockStart(held: string, complete: boolean): string {
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
    if (this.#link !== undefined) return this.#linkChar(ch);
    if (ch === "[" && !this.#code && !this.#pendingStar) {
      this.#link = "[";
      return "";
    }
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

  /** Takes one character of a link being received; renders the link once it closes. */
  #linkChar(ch: string): string {
    const link = (this.#link ?? "") + ch;
    const whole = /^\[([^\]\n]*)\]\(([^()\s]*)\)$/.exec(link);
    if (whole) {
      this.#link = undefined;
      return this.#renderLink(whole[1], whole[2]);
    }
    // Still possible: `[text`, `[text]`, `[text](url`.
    if (/^\[[^\]\n]*(\](\([^()\s]*)?)?$/.test(link) && link.length <= MAX_LINK) {
      this.#link = link;
      return "";
    }
    this.#link = link;
    return this.#flushLink();
  }

  /** Whatever link text is held, as it came (it did not become a link). */
  #flushLink(): string {
    const held = this.#link;
    if (held === undefined) return "";
    this.#link = undefined;
    // The `[` itself is text; what follows may hold a link of its own.
    return "[" + this.#inlineText(held.slice(1));
  }

  /** A link: a hyperlink where supported and safe, else its text and its address. */
  #renderLink(text: string, url: string): string {
    const label = this.#inlineText(text) + this.#closeSpans();
    const address = url.replace(/^mailto:/i, "");
    const plainLabel = text.replace(/[`*_]/g, "");
    if (url === "" || plainLabel === url || plainLabel === address) {
      return url === "" ? label : `${SGR.underline}${label}\x1b[24m`;
    }
    // deno-lint-ignore no-control-regex -- a control character would end the OSC 8 sequence
    if (this.#hyperlinks && LINK_SCHEMES.test(url) && !/[\u0000-\u001f\u007f-\u009f]/.test(url)) {
      let host = address;
      try {
        host = new URL(url).host || address;
      } catch {
        // Not a URL after all: shown whole.
      }
      return `\x1b]8;;${url}\x1b\\${SGR.underline}${label}\x1b[24m\x1b]8;;\x1b\\` +
        `${SGR.dim} (${host})${SGR.boldOff}${this.#restoreLine()}`;
    }
    return `${label} ${SGR.dim}(${url})${SGR.boldOff}${this.#restoreLine()}`;
  }

  /** Closes the inline spans a link's text left open, so they do not run on. */
  #closeSpans(): string {
    let out = "";
    if (this.#code) out += SGR.codeOff;
    if (this.#bold) out += SGR.boldOff;
    if (this.#italic) out += SGR.italicOff;
    this.#code = this.#bold = this.#italic = false;
    if (this.#pendingStar) {
      this.#pendingStar = false;
      out += "*";
    }
    return out;
  }

  /** The held table rows, rendered; rows that are not a table are shown as lines. */
  #flushTable(): string {
    const rows = this.#tableRows;
    if (rows.length === 0) return "";
    this.#tableRows = [];
    const alignments = rows.length >= 2 ? separatorAlignments(rows[1]) : undefined;
    if (!alignments) {
      return rows.map((row) => this.#inlineText(row) + this.#closeSpans() + "\n").join("");
    }
    const style = (cell: string) => this.#inlineText(cell) + this.#closeSpans() + SGR.reset;
    const header = tableCells(rows[0]).map(style);
    const body = rows.slice(2).map((row) => tableCells(row).map(style));
    return renderTable(header, alignments, body, this.#width);
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
