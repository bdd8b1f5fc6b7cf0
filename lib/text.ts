/**
 * Small text helpers shared by the config loader, the REPL and the diagnostics.
 *
 * @module
 */

/** Edit distance (insertions, deletions, substitutions), case-insensitive. */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, i) => i);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      const substitution = previous[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1);
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, substitution);
    }
    previous = current;
  }
  return previous[y.length];
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
