/**
 * Which hooks a tool call runs: a group's `matcher` against the tool.
 *
 * A matcher is one or more patterns separated by `|`; each is a glob (`*` any run of
 * characters, `?` one) matched against `<server>.<tool>` (`everything.*`, `*.delete_*`),
 * or, written as Claude Code names MCP tools, against `mcp__<server>__<tool>`
 * (`mcp__github__create_issue`). Claude Code's matchers are regular expressions, and its
 * MCP matchers are usually written `mcp__github__.*`: in that form `.*` means `*`. An
 * absent, empty or `*` matcher matches every call. For `SessionStart` and `SessionEnd`
 * the patterns match the source (`startup`, `resume`, `clear`) or the reason, as in
 * Claude Code; `UserPromptSubmit` and `Stop` ignore the matcher.
 *
 * @module
 */

import { globMatches } from "../connections/tool_filter.ts";

/** The prefix of Claude Code's names of MCP tools. */
export const CLAUDE_MCP_PREFIX = "mcp__";

/** What a tool call is matched as. */
export interface ToolSubject {
  server: string;
  tool: string;
}

/** `mcp__<server>__<tool>`: the name Claude Code gives a server's tool. */
export function claudeToolName(subject: ToolSubject): string {
  return `${CLAUDE_MCP_PREFIX}${subject.server}__${subject.tool}`;
}

/** Whether `matcher` selects the tool call `subject`. */
export function matchesTool(matcher: string | undefined, subject: ToolSubject): boolean {
  return patternsOf(matcher).some((pattern) =>
    pattern === "*" ||
    (pattern.startsWith(CLAUDE_MCP_PREFIX)
      ? globMatches(pattern.replaceAll(".*", "*"), claudeToolName(subject))
      : globMatches(pattern, `${subject.server}.${subject.tool}`))
  );
}

/** Whether `matcher` selects `value` (a session's source or end reason). */
export function matchesValue(matcher: string | undefined, value: string): boolean {
  return patternsOf(matcher).some((pattern) => pattern === "*" || globMatches(pattern, value));
}

/**
 * A pattern that can match no tool of patchbay's: a Claude Code tool name (`Bash`,
 * `Edit|Write`) has neither a server part nor a glob. `undefined` when every pattern can.
 */
export function unmatchablePattern(matcher: string | undefined): string | undefined {
  return patternsOf(matcher).find((pattern) =>
    pattern !== "*" && !pattern.startsWith(CLAUDE_MCP_PREFIX) && !/[.*?]/.test(pattern)
  );
}

/** The patterns of a matcher; an absent or empty one is `*`. */
function patternsOf(matcher: string | undefined): string[] {
  const patterns = (matcher ?? "").split("|").map((p) => p.trim()).filter((p) => p !== "");
  return patterns.length === 0 ? ["*"] : patterns;
}
