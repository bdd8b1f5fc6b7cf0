/**
 * The lexical half of the configuration file's JSON parser ({@linkcode JsonScanner}):
 * where an offset is (line and column), the faults found so far, white space and the
 * comments people write in it, property names, strings with their escapes, and numbers.
 * Each fault is worded in the terms people make mistakes in; the structure (values,
 * objects, arrays) is `json.ts`'s.
 *
 * @module
 */

import type { SourcePosition } from "../errors.ts";

/** One syntax fault, with the position it was found at. */
export interface JsonFault {
  /** What is wrong, e.g. `trailing comma before '}'`. */
  message: string;
  /** Why it is a fault / the likely mistake, in plain words. */
  hint: string;
  position: SourcePosition;
}

/** More faults than this is noise; the first ones are what a person fixes. */
const MAX_FAULTS = 20;

/** A bare word: a literal (`true`), or a name or text someone forgot to quote. */
export const IDENTIFIER = /[A-Za-z_$][A-Za-z0-9_$-]*/y;

/** Thrown to stop at a fault the parser cannot read past. */
export class Fatal extends Error {}

/** Reads the tokens of `text`, recording every fault found in it. */
export class JsonScanner {
  protected pos = 0;
  protected faults: JsonFault[] = [];
  #lineStarts: number[] = [0];

  constructor(protected readonly text: string) {
    for (let i = 0; i < text.length; i++) if (text[i] === "\n") this.#lineStarts.push(i + 1);
    // A byte-order mark is allowed by RFC 8259 section 8.1 to be ignored; editors add it.
    if (text.charCodeAt(0) === 0xfeff) this.pos = 1;
  }

  /** The line and column (both from 1) of a UTF-16 offset. */
  position(offset: number): SourcePosition {
    let low = 0;
    let high = this.#lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.#lineStarts[mid] <= offset) low = mid;
      else high = mid - 1;
    }
    return { line: low + 1, column: offset - this.#lineStarts[low] + 1 };
  }

  /** Records a fault at `offset`; past {@linkcode MAX_FAULTS}, stops the parse. */
  protected fault(offset: number, message: string, hint: string): void {
    this.faults.push({ message, hint, position: this.position(offset) });
    if (this.faults.length >= MAX_FAULTS) throw new Fatal();
  }

  /** Records a fault the parse cannot read past, and stops it. */
  protected fatal(offset: number, message: string, hint: string): never {
    this.faults.push({ message, hint, position: this.position(offset) });
    throw new Fatal();
  }

  /** What is at `offset`, for a message ("character 'x'", "end of file"). */
  protected describe(offset: number): string {
    if (offset >= this.text.length) return "end of file";
    const ch = this.text[offset];
    if (ch === "\n" || ch === "\r") return "line break";
    return `character '${ch}'`;
  }

  /** Skips white space; a comment is reported and skipped, since people write them. */
  protected skipSpace(): void {
    const text = this.text;
    while (this.pos < text.length) {
      const ch = text[this.pos];
      if (ch === " " || ch === "\t" || ch === "\n" || ch === "\r") {
        this.pos++;
      } else if (ch === "/" && text[this.pos + 1] === "/") {
        this.fault(this.pos, "comment", "strict JSON has no comments; delete the '//' comment");
        const end = text.indexOf("\n", this.pos);
        this.pos = end === -1 ? text.length : end + 1;
      } else if (ch === "/" && text[this.pos + 1] === "*") {
        this.fault(
          this.pos,
          "comment",
          "strict JSON has no comments; delete the '/* */' comment",
        );
        const end = text.indexOf("*/", this.pos + 2);
        if (end === -1) {
          this.fatal(this.pos, "unterminated comment", "close it with '*/' or delete it");
        }
        this.pos = end + 2;
      } else if (ch === "#") {
        this.fault(this.pos, "comment", "strict JSON has no comments; delete the '#' line");
        const end = text.indexOf("\n", this.pos);
        this.pos = end === -1 ? text.length : end + 1;
      } else {
        return;
      }
    }
  }

  /** Whether an identifier (a bare word) starts at the current offset. */
  protected atIdentifier(): boolean {
    IDENTIFIER.lastIndex = this.pos;
    return IDENTIFIER.test(this.text);
  }

  /** A property name: a string, or a bare or single-quoted one (reported), unquoted. */
  protected key(): string {
    const start = this.pos;
    const ch = this.text[start];
    if (ch === '"') return this.string('"');
    if (ch === "'") {
      this.fault(
        start,
        "single-quoted property name",
        'strict JSON property names use double quotes: "name"',
      );
      return this.string("'");
    }
    IDENTIFIER.lastIndex = start;
    const word = IDENTIFIER.exec(this.text)?.[0];
    if (word !== undefined) {
      this.fault(
        start,
        `unquoted property name '${word}'`,
        `property names need double quotes: "${word}"`,
      );
      this.pos = start + word.length;
      return word;
    }
    if (ch === ",") {
      this.fatal(start, "extra ',' in an object", "remove the repeated comma");
    }
    this.fatal(
      start,
      `expected a property name but found ${this.describe(start)}`,
      'object members are written "name": value',
    );
  }

  /** The string that opens at the current offset with `quote`, unescaped. */
  protected string(quote: '"' | "'"): string {
    const start = this.pos;
    this.pos++;
    let out = "";
    const text = this.text;
    while (this.pos < text.length) {
      const ch = text[this.pos];
      if (ch === quote) {
        this.pos++;
        return out;
      }
      if (ch === "\n" || ch === "\r") {
        this.fatal(
          start,
          "unterminated string",
          `close the string with ${quote} before the end of the line (a line break inside a string must be written \\n)`,
        );
      }
      if (ch < " ") {
        this.fault(
          this.pos,
          "control character in a string",
          "write tabs and other control characters as escapes such as \\t",
        );
        out += ch;
        this.pos++;
        continue;
      }
      if (ch === "\\") {
        out += this.#escape();
        continue;
      }
      out += ch;
      this.pos++;
    }
    this.fatal(
      start,
      "unterminated string",
      `the string opened here is never closed with ${quote}`,
    );
  }

  #escape(): string {
    const at = this.pos;
    const next = this.text[at + 1];
    this.pos += 2;
    const simple: Record<string, string> = {
      '"': '"',
      "\\": "\\",
      "/": "/",
      b: "\b",
      f: "\f",
      n: "\n",
      r: "\r",
      t: "\t",
    };
    if (next in simple) return simple[next];
    if (next === "u") {
      const hex = this.text.slice(at + 2, at + 6);
      if (/^[0-9a-fA-F]{4}$/.test(hex)) {
        this.pos = at + 6;
        const code = parseInt(hex, 16);
        if (code < 0xd800 || code > 0xdfff) return String.fromCharCode(code);
        // A surrogate escape is half a character: valid only as a high-low pair.
        const low = /^\\u([dD][c-fC-F][0-9a-fA-F]{2})/.exec(this.text.slice(at + 6, at + 12));
        if (code <= 0xdbff && low) {
          this.pos = at + 12;
          return String.fromCharCode(code, parseInt(low[1], 16));
        }
        this.fault(
          at,
          `lone surrogate \\u${hex.toUpperCase()}`,
          "\\uD800–\\uDBFF must be followed by \\uDC00–\\uDFFF (one character beyond " +
            "U+FFFF is written as such a pair); write the character itself instead",
        );
        return "\uFFFD";
      }
      this.fault(at, "invalid \\u escape", "\\u must be followed by four hex digits");
      return "";
    }
    if (next === "'") {
      this.fault(
        at,
        "invalid escape \\'",
        "a single quote needs no escape inside a double-quoted string",
      );
      return "'";
    }
    this.fault(
      at,
      `invalid escape \\${next ?? ""}`,
      "a backslash in a JSON string must be doubled (\\\\), e.g. Windows paths",
    );
    return next ?? "";
  }

  /** The number at the current offset. */
  protected number(): number {
    const start = this.pos;
    const match = /[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y;
    match.lastIndex = start;
    const raw = match.exec(this.text)?.[0];
    if (raw === undefined) {
      this.fatal(
        start,
        `unexpected ${this.describe(start)} where a number was expected`,
        "numbers are written like 30, 0.5 or -1",
      );
    }
    this.pos = start + raw.length;
    if (!/^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(raw)) {
      this.fault(
        start,
        `invalid number '${raw}'`,
        "JSON numbers have no leading '+', no leading zeros and digits on both sides of '.'",
      );
    }
    return Number(raw);
  }
}
