/**
 * A Markdown table for a terminal: columns aligned by the width the text takes on screen
 * (emoji and East Asian characters count two), the header bold, rules dim. A table wider
 * than the terminal is shown as one block per row, `header: value` a line, instead of
 * lines the terminal would wrap into a jumble.
 *
 * @module
 */

import { displayWidth } from "../terminal/terminal.ts";

/** How a column is aligned, from its separator cell (`:--`, `:-:`, `--:`). */
type Alignment = "left" | "center" | "right";

const DIM = "\x1b[2m";
const BOLD = "\x1b[1m";
const RESET = "\x1b[0m";

/** The cells of one table line: split at `|` not escaped or inside `code`. */
export function tableCells(line: string): string[] {
  const cells: string[] = [];
  let cell = "";
  let code = false;
  const text = line.trim().replace(/^\|/, "").replace(/(?<!\\)\|$/, "");
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\\" && text[i + 1] === "|") {
      cell += "|";
      i++;
    } else if (ch === "`") {
      code = !code;
      cell += ch;
    } else if (ch === "|" && !code) {
      cells.push(cell.trim());
      cell = "";
    } else {
      cell += ch;
    }
  }
  cells.push(cell.trim());
  return cells;
}

/** The alignments a separator line gives, or undefined when the line is not one. */
export function separatorAlignments(line: string): Alignment[] | undefined {
  const cells = tableCells(line);
  if (!cells.every((cell) => /^:?-+:?$/.test(cell))) return undefined;
  return cells.map((cell) =>
    cell.startsWith(":") && cell.endsWith(":") ? "center" : cell.endsWith(":") ? "right" : "left"
  );
}

/** `text` padded with spaces to `width` columns, as `alignment` says. */
function pad(text: string, width: number, alignment: Alignment): string {
  const room = Math.max(0, width - displayWidth(text));
  if (alignment === "right") return " ".repeat(room) + text;
  if (alignment === "center") {
    const left = Math.floor(room / 2);
    return " ".repeat(left) + text + " ".repeat(room - left);
  }
  return text + " ".repeat(room);
}

/**
 * Renders a table. `header` and `rows` are cells already styled for the terminal
 * (`styleCell` applied by the caller); each line returned ends with a newline.
 */
export function renderTable(
  header: readonly string[],
  alignments: readonly Alignment[],
  rows: readonly (readonly string[])[],
  width: number,
): string {
  const columns = header.length;
  const body = rows.map((row) => Array.from({ length: columns }, (_, i) => row[i] ?? ""));
  const widths = header.map((cell, i) =>
    Math.max(displayWidth(cell), ...body.map((row) => displayWidth(row[i])))
  );
  const total = widths.reduce((sum, w) => sum + w, 0) + 3 * (columns - 1);
  if (total > width) {
    // One block per row: the header names each value, so nothing is lost to wrapping.
    return body.map((row) =>
      row.map((cell, i) => `${BOLD}${header[i]}${RESET}${DIM}:${RESET} ${cell}\n`).join("")
    ).join("\n");
  }
  const line = (cells: readonly string[], style = "") =>
    cells.map((cell, i) => style + pad(cell, widths[i], alignments[i] ?? "left") + RESET)
      .join(`${DIM} │ ${RESET}`) + "\n";
  const rule = `${DIM}${widths.map((w) => "─".repeat(w)).join("─┼─")}${RESET}\n`;
  return line(header, BOLD) + rule + body.map((row) => line(row)).join("");
}
