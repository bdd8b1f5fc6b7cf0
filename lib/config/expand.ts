/**
 * `${VAR}` and `${VAR:-default}` expansion in configuration strings.
 *
 * A variable that is unset (or empty) with no default is an error, not an empty string:
 * an empty bearer token or path fails later in a place that no longer names the variable.
 * `$${` writes a literal `${`.
 *
 * @module
 */

/** One `${VAR}` that had no value. */
export interface MissingVariable {
  name: string;
}

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-((?:[^}\\]|\\.)*))?\}/g;
const MALFORMED = /\$\{(?![A-Za-z_][A-Za-z0-9_]*(?::-(?:[^}\\]|\\.)*)?\})/;

/** Result of expanding one string. */
export interface Expansion {
  value: string;
  missing: MissingVariable[];
  /** A `${` that is not a well-formed reference, e.g. `${1X}` or an unclosed brace. */
  malformed: boolean;
}

/** Expands every reference in `input` using `lookup`. */
export function expandVariables(
  input: string,
  lookup: (name: string) => string | undefined,
): Expansion {
  const missing: MissingVariable[] = [];
  const escaped = input.replaceAll("$${", "\u0000");
  const malformed = MALFORMED.test(escaped);
  const value = escaped.replace(REFERENCE, (_match, name: string, fallback?: string) => {
    const found = lookup(name);
    if (found !== undefined && found !== "") return found;
    if (fallback !== undefined) return fallback.replace(/\\(.)/g, "$1");
    missing.push({ name });
    return "";
  }).replaceAll("\u0000", "${");
  return { value, missing, malformed };
}

/** Names of the variables `input` refers to (`$${` escapes excluded), in order, once each. */
export function referencedVariables(input: string): string[] {
  const escaped = input.replaceAll("$${", "\u0000");
  return [...new Set([...escaped.matchAll(REFERENCE)].map((match) => match[1]))];
}
