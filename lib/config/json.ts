/**
 * A strict JSON (RFC 8259) parser for configuration files that, unlike `JSON.parse`,
 * says where and why a file is wrong in the terms people make mistakes in: trailing
 * commas, missing commas, comments, unquoted keys, single quotes.
 *
 * It recovers from those common faults and keeps going, so one run reports every one of
 * them, and it records the position of every value and key so that schema errors can
 * point into the file too.
 *
 * This module reads the structure (values, objects, arrays); the tokens, the positions
 * and the faults' bookkeeping are `json_scanner.ts`'s.
 *
 * @module
 */

import type { SourcePosition } from "../errors.ts";
import { Fatal, IDENTIFIER, type JsonFault, JsonScanner } from "./json_scanner.ts";

export type { JsonFault } from "./json_scanner.ts";

/** A JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | {
  [key: string]: JsonValue;
};

/** A key that appears twice in one object (JSON.parse silently keeps the last). */
export interface DuplicateKey {
  path: (string | number)[];
  key: string;
  first: SourcePosition;
  second: SourcePosition;
}

/** The outcome of {@linkcode parseJson}. */
export interface JsonParseResult {
  /** The value, when the text had no faults. */
  value?: JsonValue;
  faults: JsonFault[];
  duplicates: DuplicateKey[];
  /** Position of each value, keyed by {@linkcode pathKey}. */
  valuePositions: Map<string, SourcePosition>;
  /** Position of each object member's key, keyed by {@linkcode pathKey}. */
  keyPositions: Map<string, SourcePosition>;
  /**
   * Where each value starts and ends (UTF-16 offsets, end exclusive), and where each
   * member's key starts, keyed by {@linkcode pathKey}: edits splice the text with them
   * (lib/config/json_edit.ts) rather than write the whole file anew.
   */
  spans: Map<string, JsonSpan>;
}

/** Offsets of one value in the text; `key` is where its member's key starts. */
export interface JsonSpan {
  start: number;
  end: number;
  key?: number;
}

/** Map key for a value's path. */
export function pathKey(path: readonly (string | number)[]): string {
  return JSON.stringify(path);
}

/**
 * Deepest nesting of objects and arrays. A configuration nests a few levels
 * (`mcpServers.<name>.auth.scopes` is four); this bound keeps the recursive descent, and
 * everything that walks the value after it, far from the stack's limit (a file of 100,000
 * `[` used to end in "Maximum call stack size exceeded").
 */
export const MAX_NESTING = 32;

/** How an object and an array read in messages about their ends. */
const CONTAINERS = {
  "}": {
    opener: "{",
    part: "member of an object",
    unclosed: "add the missing '}' (or look for a missing quote earlier)",
  },
  "]": { opener: "[", part: "element of an array", unclosed: "add the missing ']'" },
} as const;

/** Parses `text` as strict JSON, collecting every recoverable fault. */
export function parseJson(text: string): JsonParseResult {
  return new Parser(text).run();
}

/** The structure of the text (values, objects, arrays) over {@linkcode JsonScanner}. */
class Parser extends JsonScanner {
  #duplicates: DuplicateKey[] = [];
  #valuePositions = new Map<string, SourcePosition>();
  #keyPositions = new Map<string, SourcePosition>();
  #spans = new Map<string, JsonSpan>();
  #keyOffsets = new Map<string, number>();

  run(): JsonParseResult {
    let value: JsonValue | undefined;
    try {
      this.skipSpace();
      if (this.pos >= this.text.length) {
        this.fatal(0, "the file is empty", "a configuration file holds one JSON object");
      }
      value = this.#value([]);
      this.skipSpace();
      if (this.pos < this.text.length) {
        this.fault(
          this.pos,
          `unexpected ${this.describe(this.pos)} after the end of the JSON value`,
          "everything must be inside the one top-level object; look for an extra '}' or text " +
            "after the last '}'",
        );
      }
    } catch (error) {
      if (!(error instanceof Fatal)) throw error;
      value = undefined;
    }
    return {
      value: this.faults.length === 0 ? value : undefined,
      faults: this.faults,
      duplicates: this.#duplicates,
      valuePositions: this.#valuePositions,
      keyPositions: this.#keyPositions,
      spans: this.#spans,
    };
  }

  #value(path: (string | number)[]): JsonValue {
    this.skipSpace();
    const start = this.pos;
    const value = this.#valueAt(path, start);
    const key = pathKey(path);
    this.#spans.set(key, { start, end: this.pos, key: this.#keyOffsets.get(key) });
    return value;
  }

  #valueAt(path: (string | number)[], start: number): JsonValue {
    const ch = this.text[start];
    if ((ch === "{" || ch === "[") && path.length >= MAX_NESTING) {
      this.fatal(
        start,
        `'${ch}' nests deeper than ${MAX_NESTING} levels`,
        "a configuration nests a few levels (a server's env sits four objects deep); look " +
          "for stray '[' or '{', or a file that is not a patchbay configuration",
      );
    }
    this.#valuePositions.set(pathKey(path), this.position(start));
    if (ch === "{") return this.#object(path);
    if (ch === "[") return this.#array(path);
    if (ch === '"') return this.string('"');
    if (ch === "'") {
      this.fault(start, "single-quoted string", 'strict JSON strings use double quotes: "..."');
      return this.string("'");
    }
    if (ch === "-" || (ch >= "0" && ch <= "9") || ch === "+" || ch === ".") return this.number();
    IDENTIFIER.lastIndex = start;
    const word = IDENTIFIER.exec(this.text)?.[0];
    if (word !== undefined) {
      this.pos = start + word.length;
      if (word === "true") return true;
      if (word === "false") return false;
      if (word === "null") return null;
      const fix = { True: "true", False: "false", None: "null", undefined: "null", NULL: "null" }[
        word
      ];
      this.fault(
        start,
        `invalid value '${word}'`,
        fix
          ? `JSON spells it '${fix}'`
          : "a text value needs double quotes; the literals are true, false and null",
      );
      return word;
    }
    if (start >= this.text.length) {
      this.fatal(
        start,
        "unexpected end of file where a value was expected",
        "the file is cut short",
      );
    }
    this.fatal(
      start,
      `unexpected ${this.describe(start)} where a value was expected`,
      "expected a string, number, object, array, true, false or null",
    );
  }

  /**
   * Where the object or array opened at `open` may end: true when it closes here (a
   * trailing comma before the closer reported, the closer consumed); a fatal fault when the
   * text ends first; false when a member or element follows.
   */
  #closes(open: number, closer: "}" | "]", lastComma: number): boolean {
    const { opener, part, unclosed } = CONTAINERS[closer];
    if (this.text[this.pos] === closer) {
      if (lastComma >= 0) {
        this.fault(
          lastComma,
          `trailing comma before '${closer}'`,
          `strict JSON allows no comma after the last ${part}; remove it`,
        );
      }
      this.pos++;
      return true;
    }
    if (this.pos >= this.text.length) {
      const opened = this.position(open);
      this.fatal(
        this.pos,
        `unexpected end of file: '${opener}' opened at line ${opened.line}, column ${opened.column} is never closed`,
        unclosed,
      );
    }
    return false;
  }

  /** After a member or element: the position of the comma that follows (consumed), or -1. */
  #takeComma(): number {
    this.skipSpace();
    if (this.text[this.pos] !== ",") return -1;
    return this.pos++;
  }

  #object(path: (string | number)[]): JsonValue {
    const open = this.pos;
    this.pos++;
    const result: Record<string, JsonValue> = {};
    const seen = new Map<string, SourcePosition>();
    let lastComma = -1;
    let first = true;
    for (;;) {
      this.skipSpace();
      if (this.#closes(open, "}", lastComma)) return result;
      if (!first && lastComma < 0) {
        // Two members in a row with nothing between them: the classic missing comma.
        this.fault(
          this.pos,
          "missing comma between object members",
          "separate members with ',' (the line before probably needs one at its end)",
        );
      }
      first = false;
      const keyStart = this.pos;
      const key = this.key();
      const keyPath = [...path, key];
      const keyPosition = this.position(keyStart);
      const earlier = seen.get(key);
      if (earlier) this.#duplicates.push({ path, key, first: earlier, second: keyPosition });
      seen.set(key, keyPosition);
      this.#keyPositions.set(pathKey(keyPath), keyPosition);
      this.#keyOffsets.set(pathKey(keyPath), keyStart);
      this.skipSpace();
      if (this.text[this.pos] === ":") {
        this.pos++;
      } else if (this.text[this.pos] === "=") {
        this.fault(
          this.pos,
          "'=' after a property name",
          "JSON separates a name from its value with ':'",
        );
        this.pos++;
      } else {
        this.fatal(
          this.pos,
          `expected ':' after property name "${key}" but found ${this.describe(this.pos)}`,
          'write "name": value',
        );
      }
      result[key] = this.#value(keyPath);
      lastComma = this.#takeComma();
      if (lastComma < 0) {
        const next = this.text[this.pos];
        if (
          next !== "}" && next !== '"' && next !== "'" && !this.atIdentifier() &&
          this.pos < this.text.length
        ) {
          this.fatal(
            this.pos,
            `unexpected ${this.describe(this.pos)} in an object`,
            "expected ',' or '}' after a member",
          );
        }
      }
    }
  }

  #array(path: (string | number)[]): JsonValue {
    const open = this.pos;
    this.pos++;
    const result: JsonValue[] = [];
    let lastComma = -1;
    for (;;) {
      this.skipSpace();
      if (this.#closes(open, "]", lastComma)) return result;
      const ch = this.text[this.pos];
      if (result.length > 0 && lastComma < 0) {
        if (!this.#startsValue()) {
          this.fatal(
            this.pos,
            `unexpected ${this.describe(this.pos)} in an array`,
            "expected ',' or ']' after an element",
          );
        }
        this.fault(
          this.pos,
          "missing comma between array elements",
          "separate elements with ','",
        );
      }
      if (ch === ",") {
        this.fatal(this.pos, "empty array element (two commas in a row)", "remove the extra ','");
      }
      result.push(this.#value([...path, result.length]));
      lastComma = this.#takeComma();
      if (lastComma < 0) {
        const next = this.text[this.pos];
        if (next === "}") {
          this.fatal(
            this.pos,
            "'}' where ']' was expected",
            "the array is closed with the wrong bracket",
          );
        }
      }
    }
  }

  #startsValue(): boolean {
    return /["'{[\-+.0-9]/.test(this.text[this.pos] ?? "") || this.atIdentifier();
  }
}
