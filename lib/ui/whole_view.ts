/**
 * The approval questions' "v": everything a tool call or a sampling request would send,
 * shown whole, faithfully and a page at a time, before the person answers.
 *
 * Faithfully: the text is untrusted (the model writes a call's arguments, a server its
 * sampling request), so nothing in it may act on the terminal, and nothing in it may be
 * hidden either. Control characters and invisible format characters (bidi overrides,
 * zero-width spaces, tag characters) are therefore shown as `\u…` escapes rather than
 * removed: a file name written right to left reads as what it is, and a carriage return
 * cannot draw over the line before it. A string of several lines (a file's content) is
 * shown as its lines, not as one `\n`-joined line that wraps over the whole screen.
 *
 * A page at a time: an argument of 100 KB, or 500 lines, would scroll the question and
 * the start of the call out of a small terminal; past a screenful the view stops after
 * each page and asks for the next (space or Enter) or to go back to the question (q).
 *
 * @module
 */

import type { Style } from "../terminal/style.ts";
import { displayWidth } from "../terminal/terminal.ts";
import type { LineEditor } from "../terminal/line_editor.ts";

/**
 * Characters that must not reach the terminal as they are: C0 controls but tab and
 * newline, DEL and the C1 controls (U+009B is a CSI of its own), and invisible format
 * characters (Unicode Cf) except the zero-width joiner and non-joiner, which emoji and
 * several scripts need and which reorder nothing.
 */
// deno-lint-ignore no-control-regex -- matching control characters is the point
const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]|(?![\u200c\u200d])\p{Cf}/gu;

/**
 * Nesting shown indented; deeper values are shown as compact JSON on one line. The model
 * writes the arguments: 100,000 nested arrays (200 KB) would otherwise overflow the stack,
 * and their indentation alone would be billions of characters.
 */
const MAX_INDENTED_DEPTH = 32;
/** Rows kept free below a page: the "more" line and the row it is answered on. */
const PAGE_MARGIN_ROWS = 2;
/** A page is never shorter than this, however small the terminal says it is. */
const MIN_PAGE_ROWS = 3;

/** `text` with every character of {@linkcode HIDDEN} written as a visible `\u…` escape. */
export function visibleText(text: string): string {
  return text.replace(HIDDEN, (char) => {
    const code = char.codePointAt(0)!;
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/**
 * A JSON value as lines to read: pretty-printed, strings of several lines as their lines
 * (each behind `│ `), every line passed through {@linkcode visibleText}.
 */
export function valueLines(value: unknown, indent = ""): string[] {
  const out: string[] = [];
  renderValue(value, indent, "", "", out, 0);
  return out;
}

/** Text of several lines (a system prompt, a message) as lines to read, behind `│ `. */
export function textLines(text: string, indent = ""): string[] {
  return text.split("\n").map((line) => `${indent}│ ${visibleText(line)}`);
}

function renderValue(
  value: unknown,
  indent: string,
  head: string,
  tail: string,
  out: string[],
  depth: number,
) {
  if (typeof value === "string" && value.includes("\n")) {
    const lines = value.split("\n");
    out.push(`${indent}${head}(text of ${lines.length} lines, below)${tail}`);
    out.push(...textLines(value, `${indent}  `));
    return;
  }
  const entries = Array.isArray(value)
    ? value.map((item) => ["", item] as const)
    : value !== null && typeof value === "object"
    ? Object.entries(value).map(([key, item]) => [`${visibleText(JSON.stringify(key))}: `, item])
    : undefined;
  if (entries === undefined || depth >= MAX_INDENTED_DEPTH) {
    out.push(`${indent}${head}${visibleText(JSON.stringify(value) ?? "null")}${tail}`);
    return;
  }
  const [open, close] = Array.isArray(value) ? ["[", "]"] : ["{", "}"];
  if (entries.length === 0) {
    out.push(`${indent}${head}${open}${close}${tail}`);
    return;
  }
  out.push(`${indent}${head}${open}`);
  entries.forEach(([key, item], i) =>
    renderValue(
      item,
      `${indent}  `,
      key as string,
      i < entries.length - 1 ? "," : "",
      out,
      depth + 1,
    )
  );
  out.push(`${indent}${close}${tail}`);
}

/** `line` cut into rows of at most `columns` cells, as a terminal would wrap it. */
export function wrapRows(line: string, columns: number): string[] {
  if (!Number.isFinite(columns) || columns < 1 || displayWidth(line) <= columns) return [line];
  const rows: string[] = [];
  let row = "";
  let width = 0;
  for (const char of line) {
    let cells = cellsOf(char, width);
    if (width + cells > columns && row !== "") {
      rows.push(row);
      row = "";
      width = 0;
      cells = cellsOf(char, 0);
    }
    row += char;
    width += cells;
  }
  rows.push(row);
  return rows;
}

/** Cells `char` takes at column `width` (a tab reaches the next multiple of 8). */
function cellsOf(char: string, width: number): number {
  return char === "\t" ? 8 - (width % 8) : displayWidth(char);
}

/** The terminal's size; `Infinity` each way when there is none (nothing is paged). */
export interface ScreenSize {
  columns: number;
  rows: number;
}

/** The console's size, or `Infinity` each way without one. */
export function consoleScreen(): ScreenSize {
  try {
    const { columns, rows } = Deno.consoleSize();
    return { columns: columns || Infinity, rows: rows || Infinity };
  } catch {
    return { columns: Infinity, rows: Infinity };
  }
}

/** Options of {@linkcode showPaged}. */
export interface PagedOptions {
  editor: LineEditor;
  /** Colours of the questions (the stream the editor writes to). */
  style: Style;
  /** @default the console's size */
  screen?: () => ScreenSize;
  /** Withdraws the view (the question was withdrawn). */
  signal?: AbortSignal;
}

/**
 * Writes `lines` where the questions go, a page at a time when they take more rows than
 * the terminal has: after each page, space or Enter shows the next and q (or Ctrl+C)
 * goes back to the question. Piped input, which has no pages, gets everything at once.
 */
export async function showPaged(lines: readonly string[], options: PagedOptions): Promise<void> {
  const { editor, style } = options;
  const screen = (options.screen ?? consoleScreen)();
  // Each row, and whether the line goes on in the next one: such rows are written without
  // a newline, so that the terminal wraps them itself (where they were cut) and text copied
  // from the screen has the lines as they are.
  const rows = lines.flatMap((line) =>
    wrapRows(line, screen.columns).map((text, i, all) => ({ text, goesOn: i < all.length - 1 }))
  );
  const pageRows = Math.max(MIN_PAGE_ROWS, screen.rows - PAGE_MARGIN_ROWS);
  if (!editor.interactive || rows.length <= pageRows) {
    editor.write(`${lines.join("\n")}\n`);
    return;
  }
  for (let start = 0; start < rows.length; start += pageRows) {
    const end = Math.min(rows.length, start + pageRows);
    editor.write(
      rows.slice(start, end).map((row, i) =>
        row.text + (row.goesOn && start + i < end - 1 ? "" : "\n")
      ).join(""),
    );
    if (end >= rows.length) return;
    const key = await editor.choose(
      style.dim(`  rows ${start + 1}–${end} of ${rows.length}: `) +
        `${style.bold("[space]")} next page  ${style.bold("[q]")} back to the question `,
      [" ", "q"],
      " ",
      "q",
      options.signal,
    );
    if (key === "q" || options.signal?.aborted) {
      editor.write(style.dim(`  (${rows.length - end} rows not shown)\n`));
      return;
    }
  }
}
