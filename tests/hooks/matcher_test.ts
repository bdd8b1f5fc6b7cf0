/** Which hooks a call runs (lib/hooks/matcher.ts): patchbay's globs and Claude Code's names. */

import assert from "node:assert/strict";
import { globMatches } from "../../lib/connections/tool_filter.ts";
import {
  claudeToolName,
  matchesTool,
  matchesValue,
  unmatchablePattern,
} from "../../lib/hooks/matcher.ts";

const echo = { server: "everything", tool: "echo" };
const write = { server: "fs", tool: "write_file" };

Deno.test("<server>.<tool> globs, | alternatives, and an absent or empty matcher", () => {
  for (const matcher of [undefined, "", "*", "everything.*", "*.echo", "everything.ec?o"]) {
    assert.ok(matchesTool(matcher, echo), String(matcher));
  }
  assert.ok(!matchesTool("everything.*", write));
  assert.ok(matchesTool("everything.echo | fs.write_*", write));
  assert.ok(!matchesTool("everything", echo), "a server alone is no tool");
  assert.ok(!matchesTool("echo", echo), "a tool is named with its server");
});

Deno.test("Claude Code's mcp__<server>__<tool> names match, its .* written as *", () => {
  assert.equal(claudeToolName(echo), "mcp__everything__echo");
  assert.ok(matchesTool("mcp__everything__echo", echo));
  assert.ok(matchesTool("mcp__everything__.*", echo));
  assert.ok(matchesTool("mcp__.*__write_file", write));
  assert.ok(!matchesTool("mcp__fs__.*", echo));
  assert.ok(matchesTool("Bash|mcp__fs__write_file", write));
});

Deno.test("session matchers match the source or reason; Claude Code tool names are flagged", () => {
  assert.ok(matchesValue("startup|resume", "resume"));
  assert.ok(!matchesValue("clear", "startup"));
  assert.ok(matchesValue(undefined, "other"));
  assert.equal(unmatchablePattern("Edit|Write"), "Edit");
  assert.equal(unmatchablePattern("everything.*|mcp__fs__x"), undefined);
  assert.equal(unmatchablePattern(undefined), undefined);
});

Deno.test("a server's long tool name against a many-star matcher: answered, by the glob's rules", () => {
  // As a regular expression, `*a*a*a*b` against 1,000 a's took 53 s; 100,000 never ended.
  const tool = "a".repeat(100_000);
  assert.equal(matchesTool("*a*a*a*b", { server: "s", tool }), false);
  assert.equal(matchesTool("*a*a*a*a", { server: "s", tool }), true);
  assert.equal(matchesTool("mcp__s__.*a.*a.*b", { server: "s", tool }), false);
  assert.equal(matchesTool("mcp__s__.*a.*a.*b", { server: "s", tool: `${tool}b` }), true);
});

Deno.test("globs: stars, question marks and literal characters as before", () => {
  const cases: [string, string, boolean][] = [
    ["*", "", true],
    ["?", "", false],
    ["a*", "a", true],
    ["*a", "ba", true],
    ["*a", "ab", false],
    ["a*b*c", "axxbyyc", true],
    ["a*b*c", "axxbyy", false],
    ["a?c", "abc", true],
    ["a?c", "ac", false],
    ["**x", "yx", true],
    ["*.delete_*", "fs.delete_file", true],
    ["*.delete_*", "fs.deletefile", false],
    ["a.[b]*", "a.[b]c", true],
    ["a.[b]*", "a.bc", false],
    ["x*y", "x\ny", true],
  ];
  for (const [pattern, name, expected] of cases) {
    assert.equal(globMatches(pattern, name), expected, `${pattern} ~ ${JSON.stringify(name)}`);
  }
});
