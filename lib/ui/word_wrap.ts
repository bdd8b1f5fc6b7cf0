/**
 * A streamed answer wrapped between words to the terminal's width, as it arrives: the
 * terminal would otherwise break its lines wherever the edge falls, mid-word. Each word is
 * held until the space or line end after it, then placed on the line it fits on; a line
 * that goes on below starts under its own text (a list item's, past its marker).
 *
 * Lines that must keep their shape are left to the terminal: code (between fences, drawn
 * or as written), tables and rules. It works on what the Markdown renderer printed, its
 * colours included (they take no column), or on the Markdown as written.
 *
 * @module
 */

import { displayWidth, stripTerminalEscapes } from "../terminal/terminal.ts";

/** A line start that is not prose: a fence, a drawn code frame, a table, a rule. */
const KEEP_SHAPE = /^\s*(?:```|~~~|┌|└|\||─)/;
/** A drawn table's column separator (lib/ui/markdown_table.ts). */
const TABLE_SEPARATOR = " │ ";
/** Where a wrapped line goes on: past a line's indent and its list or quote marker. */
const HANG = /^\s*(?:[-*+•]\s+|\d{1,9}[.)]\s+|│\s|>\s?)?/;

/** Wraps a stream of text at word boundaries: `push` each piece, `end` once. */
export class WordWrapStream {
  readonly #columns: number;
  /** Columns taken on the current line. */
  #column = 0;
  /** The visible text of the current line so far (its kind, its indent). */
  #line = "";
  /** The word being received, escape sequences included. */
  #word = "";
  /** Spaces received before {@linkcode #word}. */
  #spaces = "";
  /** Inside a code block: its lines are left as they are. */
  #code = false;

  /** `columns`: the width to wrap to; `Infinity` passes the text through. */
  constructor(columns: number) {
    this.#columns = columns;
  }

  /** Takes a piece of the answer; returns what can be printed now. */
  push(text: string): string {
    if (!Number.isFinite(this.#columns)) return text;
    let out = "";
    for (const char of text) {
      if (char === "\n") {
        out += this.#place() + this.#spaces + "\n";
        this.#endLine();
      } else if (char === " ") {
        if (this.#word === "") this.#spaces += " ";
        else {
          out += this.#place();
          this.#spaces = " ";
        }
      } else {
        this.#word += char;
      }
    }
    return out;
  }

  /** Whatever is held (the last word), at the end of the answer. */
  end(): string {
    if (!Number.isFinite(this.#columns)) return "";
    const out = this.#place() + this.#spaces;
    this.#spaces = "";
    return out;
  }

  /** The word held, on this line or, when it does not fit, on the next. */
  #place(): string {
    if (this.#word === "") return "";
    const word = this.#word;
    const width = displayWidth(word);
    this.#word = "";
    let out: string;
    if (
      this.#column > 0 && this.#column + this.#spaces.length + width > this.#columns &&
      this.#wrappable()
    ) {
      const hang = " ".repeat(Math.min(displayWidth(HANG.exec(this.#line)![0]), this.#columns / 2));
      out = `\n${hang}${word}`;
      this.#column = hang.length + width;
    } else {
      out = this.#spaces + word;
      this.#column += this.#spaces.length + width;
    }
    this.#line += this.#spaces + stripTerminalEscapes(word);
    this.#spaces = "";
    return out;
  }

  /** Whether the current line is prose, which may be wrapped. */
  #wrappable(): boolean {
    return !this.#code && !KEEP_SHAPE.test(this.#line) && !this.#line.includes(TABLE_SEPARATOR);
  }

  /** A line ended: a fence opens or closes a code block. */
  #endLine(): void {
    const line = this.#line.trimStart();
    if (/^(?:```|~~~)/.test(line)) this.#code = !this.#code;
    else if (line.startsWith("┌")) this.#code = true;
    else if (line.startsWith("└")) this.#code = false;
    this.#line = "";
    this.#spaces = "";
    this.#column = 0;
  }
}
