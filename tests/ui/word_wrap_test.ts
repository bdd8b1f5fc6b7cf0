/**
 * A streamed answer wrapped between words as it arrives (lib/ui/word_wrap.ts): the same
 * lines whatever the pieces, prose only (code, tables and rules keep their shape).
 */
import assert from "node:assert/strict";
import { WordWrapStream } from "../../lib/ui/word_wrap.ts";
import { MarkdownStream } from "../../lib/ui/markdown.ts";
import { displayWidth, stripTerminalEscapes } from "../../lib/terminal/terminal.ts";

/** `text` through a wrapper of `columns`, in pieces of `size` characters. */
function wrapped(text: string, columns: number, size = 3): string {
  const wrap = new WordWrapStream(columns);
  let out = "";
  for (let i = 0; i < text.length; i += size) out += wrap.push(text.slice(i, i + size));
  return out + wrap.end();
}

Deno.test("prose is wrapped between words, whatever the pieces it arrives in", () => {
  const answer = "hello there, a fairly long answer to wrap around the narrow terminal width\n";
  const expected = "hello there, a fairly long\nanswer to wrap around the\nnarrow terminal width\n";
  for (const size of [1, 2, 5, 7, 1000]) assert.equal(wrapped(answer, 28, size), expected);
  assert.equal(wrapped(answer, Infinity), answer, "no terminal: as it came");
});

Deno.test("a list item goes on under its text; colours take no column", () => {
  const item = "- the first item of a list that is long enough to wrap\n";
  assert.equal(
    wrapped(item, 24),
    "- the first item of a\n  list that is long\n  enough to wrap\n",
  );
  const markdown = new MarkdownStream({ color: true, width: 24 });
  const wrap = new WordWrapStream(24);
  const rendered = wrap.push(markdown.push(`**Bold** words in ${item}`)) +
    wrap.push(markdown.end()) + wrap.end();
  for (const line of rendered.split("\n")) assert.ok(displayWidth(line) <= 24, line);
  assert.equal(
    stripTerminalEscapes(rendered).replace(/\s+/g, " ").trim(),
    "Bold words in - the first item of a list that is long enough to wrap",
  );
});

Deno.test("code (fenced or drawn), tables and rules keep their shape", () => {
  const long = "const answer = computeTheAnswerToEverything(with, many, arguments);";
  const fenced = `\`\`\`ts\n${long}\n\`\`\`\nafter the code block comes some prose to wrap\n`;
  assert.equal(
    wrapped(fenced, 30),
    `\`\`\`ts\n${long}\n\`\`\`\nafter the code block comes\nsome prose to wrap\n`,
  );
  const table = "| name | description of the column that is long |\n|---|---|\n";
  assert.equal(wrapped(table, 20), table);
  // As the renderer draws them: a frame around code, a separator between cells.
  const drawn = `┌─ ts ──\n${long}\n└──────\ncell one │ a cell that is long enough to wrap\n`;
  assert.equal(wrapped(drawn, 30), drawn);
});
