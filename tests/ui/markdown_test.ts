import assert from "node:assert/strict";
import { MarkdownStream } from "../../lib/ui/markdown.ts";

function render(text: string, chunk = text.length || 1): string {
  const md = new MarkdownStream({ color: true, width: 10 });
  let out = "";
  for (let i = 0; i < text.length; i += chunk) out += md.push(text.slice(i, i + chunk));
  return out + md.end();
}

// deno-lint-ignore no-control-regex -- removing the renderer's own escape codes
const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, "");

const SAMPLE = [
  "# Title with `code`",
  "",
  "Some **bold** and *italic* text, 2 * 3 = 6.",
  "- first item",
  "* second **item**",
  "12. numbered",
  "> quoted *words*",
  "---",
  "```ts",
  "const x = 1; // **not bold**",
  "```",
  "after",
].join("\n");

Deno.test("the result does not depend on how the text was split into deltas", () => {
  const whole = render(SAMPLE);
  for (const chunk of [1, 2, 3, 7]) assert.equal(render(SAMPLE, chunk), whole, `chunk ${chunk}`);
});

Deno.test("block structure is rendered: headings, bullets, numbers, quotes, rules, code", () => {
  assert.equal(
    plain(render(SAMPLE)),
    [
      "Title with code",
      "",
      "Some bold and italic text, 2 * 3 = 6.",
      "• first item",
      "• second item",
      "12. numbered",
      "│ quoted words",
      "──────────",
      "┌─ ts ────────────────",
      "const x = 1; // **not bold**",
      "└─────────────────────",
      "after",
    ].join("\n"),
  );
});

Deno.test("inline styles open and close with their markers", () => {
  const out = render("a **b** `c` *d*\n");
  assert.equal(out, "a \x1b[1mb\x1b[22m \x1b[36mc\x1b[39m \x1b[3md\x1b[23m\n");
});

Deno.test("a style left open at the end of a line is reset there", () => {
  const out = render("**never closed\nnext");
  assert.ok(out.includes("never closed\x1b[0m\n"), JSON.stringify(out));
  assert.ok(out.endsWith("next"));
});

Deno.test("text streams before its line is complete", () => {
  const md = new MarkdownStream({ color: true });
  assert.equal(md.push("Hello wor"), "Hello wor");
  assert.equal(md.push("ld"), "ld");
  // A line start that may still become a marker is held back, then released.
  assert.equal(md.push("\n#"), "\n");
  assert.equal(md.push("# Sub"), "\x1b[1;35mSub");
  assert.equal(md.end(), "\x1b[0m");
});

Deno.test("with colour off the Markdown passes through untouched", () => {
  const md = new MarkdownStream({ color: false });
  assert.equal(md.push(SAMPLE), SAMPLE);
  assert.equal(md.end(), "");
});
