/**
 * Small text helpers shared by the config loader, the REPL and the diagnostics.
 *
 * @module
 */

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
 * `text` in lines of at most `columns` characters, broken between words where it can;
 * lines after the first start with `indent`.
 */
export function wrapWords(text: string, columns: number, indent = ""): string[] {
  if (text.length <= columns) return [text];
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > columns) {
      lines.push(line);
      line = indent + word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  return [...lines, line];
}
