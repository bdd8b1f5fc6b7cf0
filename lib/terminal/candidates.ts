/**
 * Tab completion candidates made safe to hand to readline, which writes them to the
 * terminal as they are and inserts the chosen one into the line. Many come from servers
 * (resource URIs, prompt names, their completions of argument values), so a hostile one
 * could otherwise write escape sequences to the terminal (a window title, the clipboard
 * through OSC 52), put a newline into the line being edited, or fill the screen with a
 * hundred thousand candidates or one of ten megabytes (docs/security-hostile-servers.md).
 *
 * Pure: no I/O.
 *
 * @module
 */

import { hasHiddenCharacters } from "./terminal.ts";

/**
 * Most candidates listed at once. Beyond it the list is cut, and only what every
 * candidate shares is completed: a screen of choices is as much as a person reads.
 */
export const MAX_COMPLETION_CANDIDATES = 200;

/**
 * Longest candidate offered, in characters: twice the longest URL browsers reliably
 * take. A longer one is no name a person types or reads.
 */
export const MAX_CANDIDATE_CHARS = 4096;

/**
 * The candidates a terminal may show, for completing `replace`: none holding a control or
 * invisible format character (it could not be typed, and printed it would act on the
 * terminal), none over {@linkcode MAX_CANDIDATE_CHARS}, and at most
 * {@linkcode MAX_COMPLETION_CANDIDATES}. When the list is cut, the common prefix of all of
 * them is what readline may insert: `replace` itself is listed first unless they share
 * more, so a cut list never completes further than the whole one would.
 */
export function safeCandidates(candidates: readonly string[], replace: string): string[] {
  const safe = candidates.filter((c) => c.length <= MAX_CANDIDATE_CHARS && !hasHiddenCharacters(c));
  if (safe.length <= MAX_COMPLETION_CANDIDATES) return safe;
  const prefix = commonPrefix(safe);
  if (prefix.length > replace.length) return [prefix];
  return [replace, ...safe.filter((c) => c !== replace).slice(0, MAX_COMPLETION_CANDIDATES - 1)];
}

function commonPrefix(values: readonly string[]): string {
  let prefix = values[0] ?? "";
  for (const value of values) {
    let i = 0;
    while (i < prefix.length && i < value.length && prefix[i] === value[i]) i++;
    prefix = prefix.slice(0, i);
    if (prefix === "") break;
  }
  return prefix;
}
