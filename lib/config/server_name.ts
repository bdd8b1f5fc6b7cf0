/**
 * The one rule for a server's name, wherever a name comes from: `mcp add`, `mcp add-json`,
 * `mcp import` and the configuration file itself (`config check`, every start). A name
 * prefixes its tools (`<server>.<tool>`, `/server:prompt`, `@server:uri`), names files and
 * keys (stored logins, approvals) and is typed and read by a person, so it holds ASCII
 * letters, digits, `-` and `_` only, and is short: no dot to split on, no path, no shell
 * or terminal character, and no letter from another script that passes for a Latin one.
 *
 * @module
 */

/** What a server's name may hold. */
export const SERVER_NAME_PATTERN: RegExp = /^[A-Za-z0-9_-]+$/;

/** Longest server name: it prefixes every tool name, which providers cap at 64. */
export const MAX_SERVER_NAME_LENGTH = 64;

/** The rule in words, for remedies. */
export const SERVER_NAME_RULE =
  `letters, digits, - and _ only, at most ${MAX_SERVER_NAME_LENGTH} characters ` +
  "(tools are called <server>.<tool>, so no dots or spaces)";

/** Why `name` cannot name a server; `undefined` when it can. */
export function serverNameProblem(name: string): string | undefined {
  if (name.length === 0) return "a server name cannot be empty";
  const length = [...name].length;
  if (length > MAX_SERVER_NAME_LENGTH) {
    return `a server name is at most ${MAX_SERVER_NAME_LENGTH} characters; this one has ${length}`;
  }
  if (SERVER_NAME_PATTERN.test(name)) return undefined;
  const bad = [...name].find((c) => !SERVER_NAME_PATTERN.test(c))!;
  const code = `U+${bad.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
  const shown = /^[\x21-\x7e]$/.test(bad) ? `'${bad}'` : code;
  const why = /\p{L}/u.test(bad)
    ? " (a letter of another script, which can pass for a Latin one)"
    : "";
  return `a server name holds letters, digits, - and _ only; ${shown}${why} is not one of them`;
}

/**
 * A name that keeps the rule for `name` as other clients write them ("github.com", "my
 * server"): its dots and spaces become `-`. `undefined` when `name` holds anything else
 * (a path, a shell or control character, a letter of another script): such a name is not
 * guessed at but refused.
 */
export function ruleAbidingName(name: string): string | undefined {
  if (!/^[A-Za-z0-9_ .-]+$/.test(name)) return undefined;
  const renamed = name.replace(/[ .]+/g, "-").replace(/^-+|-+$/g, "");
  return serverNameProblem(renamed) === undefined ? renamed : undefined;
}
