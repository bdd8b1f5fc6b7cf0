/**
 * Looking up a value in a parsed JSON document by the path of keys a validator reports
 * (zod's `issue.path`), to show a person the value it found wrong.
 *
 * @module
 */

/** The value at `path` in `document`; `undefined` where the path leads nowhere. */
export function valueAt(document: unknown, path: readonly PropertyKey[]): unknown {
  let value = document;
  for (const key of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
