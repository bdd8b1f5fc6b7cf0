/** The approval's whole view: what is shown of untrusted text, and how lines wrap into rows. */

import assert from "node:assert/strict";
import { textLines, valueLines, visibleText, wrapRows } from "../../lib/ui/whole_view.ts";

Deno.test("visibleText writes controls and invisible format characters as escapes, keeps the rest", () => {
  assert.equal(visibleText("a\x1b[2Jb\rc\x9bd"), "a\\u001b[2Jb\\u000dc\\u009bd");
  assert.equal(visibleText("txt\u202eexe.sh\u200b"), "txt\\u202eexe.sh\\u200b");
  assert.equal(visibleText("tag\u{e0041}"), "tag\\u{e0041}");
  // Joiners, tabs, newlines and ordinary text are left alone.
  assert.equal(visibleText("👩\u200d💻\té\n漢"), "👩\u200d💻\té\n漢");
});

Deno.test("valueLines pretty-prints JSON and shows strings of several lines as their lines", () => {
  assert.deepEqual(valueLines({ path: "a.txt", content: "one\ntwo", n: [1, {}], e: [] }), [
    "{",
    '  "path": "a.txt",',
    '  "content": (text of 2 lines, below),',
    "    │ one",
    "    │ two",
    '  "n": [',
    "    1,",
    "    {}",
    "  ],",
    '  "e": []',
    "}",
  ]);
  assert.deepEqual(valueLines("\u202e"), ['"\\u202e"']);
  assert.deepEqual(textLines("a\n\x1b]0;t\x07", "  "), ["  │ a", "  │ \\u001b]0;t\\u0007"]);
});

Deno.test("wrapRows cuts a line as a terminal wraps it: by cells, wide characters and tabs counted", () => {
  assert.deepEqual(wrapRows("abcdef", 4), ["abcd", "ef"]);
  assert.deepEqual(wrapRows("abcd", 4), ["abcd"]);
  assert.deepEqual(wrapRows("漢字漢", 4), ["漢字", "漢"]);
  assert.deepEqual(wrapRows("a\tb", 8), ["a\t", "b"]);
  assert.deepEqual(wrapRows("anything", Infinity), ["anything"]);
});

Deno.test("valueLines shows a deeply nested value (the model's, 100,000 levels) without overflowing", () => {
  const depth = 100_000;
  const deep = JSON.parse(`${"[".repeat(depth)}${"]".repeat(depth)}`);
  const lines = valueLines({ deep });
  // Indented down to a bound, then the rest as compact JSON on one line.
  assert.ok(lines.length < 100, String(lines.length));
  assert.ok(lines.some((line) => line.trim().startsWith("[".repeat(1000))));
  assert.ok(lines.every((line) => line.length - line.trimStart().length < 100));
});
