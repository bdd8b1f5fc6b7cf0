/**
 * Small text helpers shared by the config loader, the REPL and the diagnostics.
 *
 * @module
 */

import { displayWidth } from "../terminal/terminal.ts";

/**
 * Edit distance counting insertions, deletions, substitutions and swaps of neighbours
 * (optimal string alignment), case-insensitive: `modle` is one edit from `model`.
 */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  const d: number[][] = Array.from(
    { length: x.length + 1 },
    (_, i) => Array.from({ length: y.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[x.length][y.length];
}

/**
 * The closest candidate to `input`, if it is close enough to be a plausible typo.
 * Known aliases (e.g. `type` for `transport_type`) win over edit distance.
 */
export function didYouMean(
  input: string,
  candidates: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): string | undefined {
  const alias = aliases[input.toLowerCase()];
  if (alias && candidates.includes(alias)) return alias;
  const lowered = input.toLowerCase();
  const containing = candidates.find((c) =>
    lowered.length >= 3 && (c.toLowerCase().includes(lowered) || lowered.includes(c.toLowerCase()))
  );
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = editDistance(input, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  const tolerance = Math.max(1, Math.floor(Math.max(input.length, 3) / 3));
  if (best !== undefined && bestDistance <= tolerance) return best;
  return containing;
}

/** `1 server`, `2 servers`. */
export function plural(count: number, noun: string, pluralForm = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : pluralForm}`;
}

/** Shortens text to `max` characters, marking the cut with an ellipsis. */
export function abridge(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, Math.max(0, max - 1))}…`;
}

/**
 * `text` (one line) in lines of at most `columns` columns as a terminal shows them (escape
 * sequences take none, wide characters two: {@linkcode displayWidth}), broken between words;
 * lines after the first start with `indent`. A word longer than a line keeps a line of its
 * own, whole (a path or an address is copied as it is). Spaces where a line breaks are
 * dropped. `Infinity` columns (no terminal) leaves `text` as it is.
 */
export function wrapWords(text: string, columns: number, indent = ""): string[] {
  if (!Number.isFinite(columns) || displayWidth(text) <= columns) return [text];
  const indentWidth = displayWidth(indent);
  const lines: string[] = [];
  let line = "";
  let width = 0;
  /** Nothing is on `line` yet (leading spaces are kept: they are the line's indent). */
  let fresh = true;
  for (const word of text.split(" ")) {
    const wordWidth = displayWidth(word);
    if (!fresh && word !== "" && width + 1 + wordWidth > columns && line.trim() !== "") {
      lines.push(line.trimEnd());
      line = indent + word;
      width = indentWidth + wordWidth;
      continue;
    }
    line = fresh ? word : `${line} ${word}`;
    width += (fresh ? 0 : 1) + wordWidth;
    fresh = false;
  }
  return [...lines, line];
}

/** A line's leading spaces, after any colour (SGR) sequences it opens with. */
// deno-lint-ignore no-control-regex -- an escape sequence is what is skipped
const LEADING_SPACES = /^(?:\x1b\[[0-9;]*m)*( *)/;

/** Columns a wrapped line's continuation goes in, beyond the line's own indent. */
export const CONTINUATION_INDENT = 2;

/**
 * Each line of `text` fitted to `columns` ({@linkcode wrapWords}): a line too long goes on
 * below its own indent plus {@linkcode CONTINUATION_INDENT}, so it still reads as one item.
 * What already fits, and everything when `columns` is `Infinity`, is left as it is.
 */
export function fitLines(text: string, columns: number): string {
  if (!Number.isFinite(columns)) return text;
  return text.split("\n").map((line) => {
    // The indent is the spaces the line starts with, colours it opens first left aside.
    const indent = LEADING_SPACES.exec(line)![1];
    return wrapWords(line, columns, indent + " ".repeat(CONTINUATION_INDENT)).join("\n");
  }).join("\n");
}
