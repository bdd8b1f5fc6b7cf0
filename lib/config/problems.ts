/**
 * Configuration problems as a person reads them: field paths, one line per problem, and
 * the source line with a caret under the position.
 *
 * @module
 */

import type { ConfigProblem, SourcePosition } from "../errors.ts";

/** Problems in file order (line, then column). */
export function sortProblems(problems: ConfigProblem[]): ConfigProblem[] {
  return [...problems].sort((a, b) =>
    (a.position?.line ?? 0) - (b.position?.line ?? 0) ||
    (a.position?.column ?? 0) - (b.position?.column ?? 0)
  );
}

/** `mcpServers.fs.args[0]`, with unusual keys quoted: `mcpServers["my server"]`. */
export function formatPath(path: readonly (string | number)[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(segment)) out += out ? `.${segment}` : segment;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** A configuration warning in one line: `path: message (hint)`. */
export function describeWarning(warning: ConfigProblem): string {
  const file = warning.file ? `${warning.file}: ` : "";
  return `${file}${warning.path}: ${warning.message}${warning.hint ? ` (${warning.hint})` : ""}`;
}

/** One line per problem, and the source line with a caret under the position. */
export function renderProblems(problems: readonly ConfigProblem[], text: string): string[] {
  const lines = text.split(/\r?\n/);
  const out: string[] = [];
  for (const problem of problems) {
    const where = problem.position
      ? `line ${problem.position.line}, column ${problem.position.column}: `
      : "";
    const field = problem.path && !problem.message.includes(problem.path)
      ? `${problem.path}: `
      : "";
    const hint = problem.hint ? ` — ${problem.hint}` : "";
    out.push(`${where}${field}${problem.message}${hint}`);
    if (problem.position) out.push(...excerpt(lines, problem.position));
  }
  return out;
}

/** Widest source excerpt shown; minified files get a window around the position. */
const EXCERPT_WIDTH = 100;

function excerpt(lines: string[], position: SourcePosition): string[] {
  let source = lines[position.line - 1] ?? "";
  let column = position.column;
  if (source.length > EXCERPT_WIDTH) {
    const start = Math.max(0, column - 1 - EXCERPT_WIDTH / 2);
    const end = Math.min(source.length, start + EXCERPT_WIDTH);
    const prefix = start > 0 ? "…" : "";
    source = prefix + source.slice(start, end) + (end < source.length ? "…" : "");
    column = column - start + prefix.length;
  }
  const gutter = String(position.line).padStart(5);
  const pad = source.slice(0, column - 1).replace(/[^\t]/g, " ");
  return [`${gutter} | ${source}`, `${" ".repeat(5)} | ${pad}^`];
}
