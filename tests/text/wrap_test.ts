/**
 * The one wrapping rule (lib/text.ts `wrapWords`, `fitLines`): lines fitted to a width
 * between words, by the columns a terminal shows (colours take none, wide characters two).
 */
import assert from "node:assert/strict";
import { fitLines, wrapWords } from "../../lib/text/text.ts";
import { displayWidth } from "../../lib/terminal/terminal.ts";

Deno.test("wrapWords: between words, never mid-word; a word longer than the line kept whole", () => {
  const text = "Compresses a single file using gzip compression, returning a resource link";
  const lines = wrapWords(text, 30, "  ");
  assert.deepEqual(lines, [
    "Compresses a single file using",
    "  gzip compression, returning",
    "  a resource link",
  ]);
  for (const line of lines) assert.ok(displayWidth(line) <= 30, line);
  // Every word survives, in order: only spaces where a line broke became line breaks.
  assert.equal(lines.map((l) => l.trim()).join(" "), text);
  const path = "/tmp/patchbay-home-0123456789abcdef/.local/share/patchbay/sessions";
  assert.deepEqual(wrapWords(`saving to ${path}`, 30, "  "), ["saving to", `  ${path}`]);
  assert.deepEqual(wrapWords(text, Infinity), [text], "no terminal: left as it is");
  assert.deepEqual(wrapWords("short", 30), ["short"]);
});

Deno.test("wrapWords: colours take no column, wide characters two", () => {
  const bold = (t: string) => `\x1b[1m${t}\x1b[22m`;
  const lines = wrapWords(`${bold("Servers")}  connecting to everything, filesystem`, 30, "  ");
  assert.deepEqual(lines, [`${bold("Servers")}  connecting to`, "  everything, filesystem"]);
  const wide = wrapWords("数据 数据 数据 数据 数据 数据", 12);
  assert.deepEqual(wide, ["数据 数据", "数据 数据", "数据 数据"]);
  for (const line of wide) assert.ok(displayWidth(line) <= 12, line);
});

Deno.test("fitLines: each line under its own indent, coloured or not; what fits is untouched", () => {
  const dim = (t: string) => `\x1b[2m${t}\x1b[22m`;
  const text = [
    "✗ missing failed: command 'x' not found on PATH",
    "      cause:  command 'x' not found on PATH",
    dim("  everything: stdio node /srv/everything/index.js · connected"),
    "fits",
  ].join("\n");
  assert.equal(
    fitLines(text, 32),
    [
      "✗ missing failed: command 'x'",
      "  not found on PATH",
      "      cause:  command 'x' not",
      "        found on PATH",
      `${"\x1b[2m"}  everything: stdio node`,
      "    /srv/everything/index.js ·",
      `    connected${"\x1b[22m"}`,
      "fits",
    ].join("\n"),
  );
  assert.equal(fitLines(text, Infinity), text);
});
