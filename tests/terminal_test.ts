import assert from "node:assert/strict";
import { stripTerminalEscapes, TerminalEscapeFilter } from "../lib/terminal.ts";

const HOSTILE =
  "red \x1b[31mRED\x1b[0m title \x1b]0;pwned\x07 clear\x1b[2J end\x1b]8;;http://x\x1b\\link";

Deno.test("escape sequences are removed, text is kept", () => {
  assert.equal(stripTerminalEscapes(HOSTILE), "red RED title  clear endlink");
  assert.equal(stripTerminalEscapes("tab\tand\nnewline"), "tab\tand\nnewline");
  assert.equal(stripTerminalEscapes("bell\x07 and NUL\x00 and C1\x9b"), "bell and NUL and C1");
});

Deno.test("a sequence split between streamed pieces is removed whole", () => {
  const expected = stripTerminalEscapes(HOSTILE);
  for (let size = 1; size <= 8; size++) {
    const filter = new TerminalEscapeFilter();
    let out = "";
    for (let i = 0; i < HOSTILE.length; i += size) out += filter.push(HOSTILE.slice(i, i + size));
    out += filter.end();
    assert.equal(out, expected, `pieces of ${size}`);
  }
});

Deno.test("text before an unfinished sequence is not held back", () => {
  const filter = new TerminalEscapeFilter();
  assert.equal(filter.push("hello \x1b[3"), "hello ");
  assert.equal(filter.push("1mworld"), "world");
  assert.equal(filter.push("tail \x1b"), "tail ");
  assert.equal(filter.end(), "");
});
