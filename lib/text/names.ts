/**
 * Names a server gives (tools, prompts, resources, arguments) as patchbay shows them:
 * on one line, with every invisible or control character written visibly, so that two
 * names that look alike on screen but differ (a zero-width space, a bidi override) print
 * differently, and a newline in a name cannot draw a line of its own.
 *
 * @module
 */

import { hasHiddenCharacters, showControls } from "../terminal/terminal.ts";

/** A server's name for something, shown on one line with hidden characters escaped. */
export function showName(name: unknown): string {
  return showControls(String(name ?? ""));
}

/** `name` without the characters {@linkcode showName} escapes: what a terminal would show. */
function looks(name: string): string {
  return showControls(name).replace(/\\(?:x[0-9a-f]{2}|u\{[0-9a-f]+\}|[nrt])/g, "");
}

/**
 * Groups of `names` that differ only by invisible or control characters (each group in
 * the order given): the names a person cannot tell apart on screen.
 */
export function lookalikeNames(names: readonly string[]): string[][] {
  const groups = new Map<string, string[]>();
  for (const name of new Set(names)) {
    const key = looks(name);
    groups.set(key, [...(groups.get(key) ?? []), name]);
  }
  return [...groups.values()].filter((group) =>
    group.length > 1 && group.some((name) => hasHiddenCharacters(name))
  );
}

/** One warning line per group of look-alike names, e.g. of a server's tools. */
export function lookalikeWarnings(kind: string, names: readonly string[]): string[] {
  return lookalikeNames(names).map((group) =>
    `${kind} ${group.map((name) => `'${showName(name)}'`).join(" and ")} differ only by ` +
    "invisible characters: check which one you mean before using it"
  );
}
