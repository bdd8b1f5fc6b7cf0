import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { stripTerminalEscapes, TerminalEscapeFilter } from "../../lib/terminal/terminal.ts";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { DENO } from "../support/deps.ts";

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

Deno.test("bidi controls and invisible format characters are removed; joiners are kept", () => {
  // "Trojan Source": U+202E shows "invoice\u202Efdp.exe" as "invoiceexe.pdf".
  assert.equal(stripTerminalEscapes("invoice\u202Efdp.exe"), "invoicefdp.exe");
  for (
    const control of [
      "\u202A",
      "\u202B",
      "\u202C",
      "\u202D",
      "\u202E",
      "\u2066",
      "\u2067",
      "\u2068",
      "\u2069",
      "\u200E",
      "\u200F",
      "\u061C",
      "\u200B",
      "\u2060",
      "\uFEFF",
      "\u00AD",
      "\u{E0041}",
      "\u{E007F}",
    ]
  ) {
    const code = control.codePointAt(0)!.toString(16).toUpperCase();
    assert.equal(stripTerminalEscapes(`a${control}b`), "ab", `U+${code}`);
  }
  // Emoji sequences and scripts need the joiners; they reorder nothing.
  assert.equal(
    stripTerminalEscapes("👩\u200D💻 \u0645\u06CC\u200C\u062E"),
    "👩\u200D💻 \u0645\u06CC\u200C\u062E",
  );
  const filter = new TerminalEscapeFilter();
  assert.equal(filter.push("left\u2067") + filter.push("right\u2069") + filter.end(), "leftright");
});

Deno.test("a tool result with U+202E reaches the terminal without it (patchbay call, real server)", async () => {
  await using box = await sandbox();
  const hostile = fileURLToPath(new URL("../fixtures/hostile_server.ts", import.meta.url));
  await writeConfig(
    box,
    configWith({
      h: {
        command: DENO,
        args: ["run", "--quiet", "--no-config", hostile, "--text=invoice\\u202Efdp.exe"],
      },
    }),
  );
  const result = await runPatchbay(box, ["call", "h.say"]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, "invoicefdp.exe\n");
});
