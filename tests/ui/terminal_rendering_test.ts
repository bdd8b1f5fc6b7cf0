// deno-lint-ignore-file no-control-regex -- matching escape sequences is what these tests do
/**
 * Terminal rendering people expect: Markdown tables aligned by the columns text takes on
 * screen, links as OSC 8 hyperlinks where the terminal shows them and with their address
 * elsewhere, one colour rule (NO_COLOR, FORCE_COLOR, TERM=dumb), and the display width of
 * emoji, East Asian and combining characters. Units here; the colour rule through
 * `deno task start` too.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { MarkdownStream } from "../../lib/ui/markdown.ts";
import {
  canRedraw,
  colorEnabled,
  displayWidth,
  hyperlinksEnabled,
} from "../../lib/terminal/terminal.ts";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { replConfig, startRepl } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";

function render(text: string, options: { width?: number; hyperlinks?: boolean } = {}) {
  const md = new MarkdownStream({ color: true, width: options.width ?? 80, ...options });
  let out = "";
  for (const ch of text) out += md.push(ch);
  return out + md.end();
}

const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, "");
const terminal = { isTerminal: () => true };
const pipe = { isTerminal: () => false };
const env = (vars: Record<string, string | undefined>) => (name: string) => vars[name];

Deno.test("display width: emoji and East Asian characters take two columns, combining marks none", () => {
  const cases: [string, number][] = [
    ["plain ASCII", 11],
    ["日本語", 6],
    ["한국어", 6],
    ["ｆｕｌｌ", 8],
    ["👍", 2],
    ["👍🏽", 2], // with a skin tone: one emoji
    ["👨‍👩‍👧", 2], // a ZWJ family: one emoji
    ["🇯🇵", 2], // a flag: two regional indicators
    ["❤️", 2], // a text pictograph made emoji by U+FE0F
    ["❤", 1], // the same without it: text
    ["©", 1],
    ["e\u0301", 1], // e and a combining acute accent
    ["\x1b[1mbold\x1b[0m", 4], // escapes take no column
    ["a\tb", 9],
  ];
  for (const [text, width] of cases) assert.equal(displayWidth(text), width, JSON.stringify(text));
});

Deno.test("colour: NO_COLOR wins, then FORCE_COLOR, CLICOLOR_FORCE, TERM=dumb, whether it is a terminal", () => {
  assert.equal(colorEnabled(terminal, env({})), true);
  assert.equal(colorEnabled(pipe, env({})), false);
  assert.equal(colorEnabled(terminal, env({ NO_COLOR: "1" })), false);
  assert.equal(colorEnabled(terminal, env({ NO_COLOR: "" })), true, "an empty NO_COLOR is unset");
  assert.equal(colorEnabled(pipe, env({ FORCE_COLOR: "1" })), true);
  assert.equal(colorEnabled(pipe, env({ FORCE_COLOR: "3" })), true);
  assert.equal(colorEnabled(terminal, env({ FORCE_COLOR: "0" })), false);
  assert.equal(colorEnabled(terminal, env({ FORCE_COLOR: "false" })), false);
  assert.equal(colorEnabled(pipe, env({ FORCE_COLOR: "1", NO_COLOR: "1" })), false);
  assert.equal(colorEnabled(terminal, env({ TERM: "dumb" })), false);
  assert.equal(colorEnabled(pipe, env({ TERM: "dumb", FORCE_COLOR: "1" })), true);
  // CLICOLOR_FORCE (bixense.com/clicolors): any value but 0 forces colour, like FORCE_COLOR.
  assert.equal(colorEnabled(pipe, env({ CLICOLOR_FORCE: "1" })), true);
  assert.equal(colorEnabled(pipe, env({ CLICOLOR_FORCE: "0" })), false);
  assert.equal(colorEnabled(pipe, env({ CLICOLOR_FORCE: "" })), false, "empty is unset");
  assert.equal(colorEnabled(pipe, env({ CLICOLOR_FORCE: "1", TERM: "dumb" })), true);
  assert.equal(colorEnabled(pipe, env({ CLICOLOR_FORCE: "1", NO_COLOR: "1" })), false);
  assert.equal(colorEnabled(pipe, env({ CLICOLOR_FORCE: "1", FORCE_COLOR: "0" })), false);
});

Deno.test("redrawing: only on a terminal that can move its cursor, never on TERM=dumb", () => {
  assert.equal(canRedraw(terminal, env({ TERM: "xterm-256color" })), true);
  assert.equal(canRedraw(terminal, env({})), true);
  assert.equal(canRedraw(terminal, env({ TERM: "dumb" })), false);
  assert.equal(canRedraw(pipe, env({ TERM: "xterm-256color" })), false);
});

Deno.test("hyperlinks: only in terminals known to show them, never without colour or in tmux", () => {
  for (
    const vars of [
      { TERM_PROGRAM: "iTerm.app" },
      { TERM_PROGRAM: "WezTerm" },
      { TERM_PROGRAM: "vscode" },
      { VTE_VERSION: "7600" },
      { WT_SESSION: "0f1e" },
      { KITTY_WINDOW_ID: "1" },
      { TERM: "xterm-kitty" },
      { FORCE_HYPERLINK: "1" },
    ]
  ) {
    assert.equal(hyperlinksEnabled(terminal, env(vars)), true, JSON.stringify(vars));
  }
  for (
    const vars of [
      {},
      { TERM: "xterm-256color" },
      { VTE_VERSION: "4600" },
      { TERM_PROGRAM: "vscode", TMUX: "/tmp/tmux-0/default,1,0" },
      { TERM_PROGRAM: "vscode", NO_COLOR: "1" },
      { TERM_PROGRAM: "vscode", FORCE_HYPERLINK: "0" },
    ]
  ) {
    assert.equal(hyperlinksEnabled(terminal, env(vars)), false, JSON.stringify(vars));
  }
  assert.equal(hyperlinksEnabled(pipe, env({ TERM_PROGRAM: "vscode" })), false);
});

const TABLE =
  "| Name | 数 | Note |\n|:--|--:|:-:|\n| `a\\|b` | 12 | 👍 ok |\n| **bold** | 3 | fine |\n";

Deno.test("a table is aligned by the columns its text takes, whatever the deltas", () => {
  const out = render(`Before.\n\n${TABLE}\nAfter.\n`);
  assert.equal(
    plain(out),
    [
      "Before.",
      "",
      "Name │ 数 │ Note ",
      "─────┼────┼──────",
      "a|b  │ 12 │ 👍 ok",
      "bold │  3 │ fine ",
      "",
      "After.",
      "",
    ].join("\n"),
  );
  // Every row takes the same columns on screen, the wide characters included.
  const rows = plain(out).split("\n").slice(2, 6);
  assert.deepEqual(rows.map(displayWidth), [17, 17, 17, 17]);
  // Streamed in pieces of any size, the same.
  const md = new MarkdownStream({ color: true, width: 80 });
  const text = `Before.\n\n${TABLE}\nAfter.\n`;
  let pieces = "";
  for (let i = 0; i < text.length; i += 3) pieces += md.push(text.slice(i, i + 3));
  assert.equal(pieces + md.end(), out);
});

Deno.test("a table wider than the terminal is shown one row at a time, nothing cut", () => {
  const out = plain(render(TABLE, { width: 12 }));
  assert.equal(out, "Name: a|b\n数: 12\nNote: 👍 ok\n\nName: bold\n数: 3\nNote: fine\n");
});

Deno.test("a table that ends the answer is printed; rows without a separator stay text", () => {
  assert.match(plain(render("| a | b |\n|---|---|\n| 1 | 2 |")), /^a │ b\n──┼──\n1 │ 2\n$/);
  assert.equal(plain(render("| not | a table |\nnext\n")), "| not | a table |\nnext\n");
});

Deno.test("links: the address beside the text, or an OSC 8 hyperlink with the host beside it", () => {
  const text = "See [the docs](https://docs.deno.com/runtime/) or https://x.io.\n";
  assert.equal(
    plain(render(text)),
    "See the docs (https://docs.deno.com/runtime/) or https://x.io.\n",
  );
  const linked = render(text, { hyperlinks: true });
  assert.ok(
    linked.includes("\x1b]8;;https://docs.deno.com/runtime/\x1b\\"),
    JSON.stringify(linked),
  );
  assert.ok(linked.includes("\x1b]8;;\x1b\\"), "the hyperlink is closed");
  // The host is shown, so a link cannot pass for another address.
  const disguised = render("[https://bank.example](https://evil.example/login)\n", {
    hyperlinks: true,
  });
  assert.match(plain(disguised.replace(/\x1b\]8;;[^\x1b]*\x1b\\/g, "")), /\(evil\.example\)/);
  // A link whose text is its address is shown once.
  assert.equal(plain(render("[https://x.io](https://x.io)\n")), "https://x.io\n");
  // Other schemes are never hyperlinks.
  assert.doesNotMatch(render("[run](javascript:alert(1))\n", { hyperlinks: true }), /\x1b\]8/);
  assert.doesNotMatch(render("[f](file:///etc/passwd)\n", { hyperlinks: true }), /\x1b\]8/);
  // Brackets that are not a link stay as written.
  assert.equal(plain(render("an [array] and [a](b c)\n")), "an [array] and [a](b c)\n");
});

Deno.test("through deno task start: FORCE_COLOR colours a piped answer, NO_COLOR wins over it", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  const answer = "**Done.**\n\n| k | v |\n|---|---|\n| a | 1 |\n";
  await using llm = await startScriptedLlm({
    replies: [{ text: answer }, { text: answer }],
  });
  await writeConfig(box, replConfig(box, llm));
  const forced = await runPatchbay(box, ["run", "go"], {
    env: { NO_COLOR: undefined, FORCE_COLOR: "1" },
  });
  assert.equal(forced.code, 0, forced.stderr);
  assert.match(forced.stdout, /\x1b\[1mDone\./, "bold, though stdout is a pipe");
  assert.match(plain(forced.stdout), /k │ v\n──┼──\na │ 1/, "the table is rendered");
  const both = await runPatchbay(box, ["run", "go"], {
    env: { NO_COLOR: "1", FORCE_COLOR: "1" },
  });
  assert.equal(both.code, 0, both.stderr);
  assert.equal(both.stdout, answer, "the Markdown as written");
});

Deno.test("in the interactive client, a link reaches the terminal as an OSC 8 hyperlink, or with its address", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, replConfig(box, llm));
  const answer = "Read [the guide](https://docs.example/guide) first.\n";
  for (const hyperlinks of ["1", "0"]) {
    await using repl = await startRepl(box, {
      env: { NO_COLOR: undefined, FORCE_HYPERLINK: hyperlinks },
    });
    const raw = join(box.home, `terminal-${hyperlinks}.raw`);
    await repl.tmux.record(raw);
    llm.enqueue({ text: answer });
    await repl.send("where do I start?", "first.");
    const bytes = await Deno.readTextFile(raw);
    if (hyperlinks === "1") {
      assert.ok(bytes.includes("\x1b]8;;https://docs.example/guide\x1b\\"), JSON.stringify(bytes));
      assert.match(await repl.tmux.screen(), /^Read the guide \(docs\.example\) first\.$/m);
    } else {
      assert.doesNotMatch(bytes, /\x1b\]8;/);
      assert.match(
        await repl.tmux.screen(),
        /^Read the guide \(https:\/\/docs\.example\/guide\) first\.$/m,
      );
    }
  }
});

Deno.test("in the interactive client, TERM=dumb means no colour, and FORCE_COLOR=0 too", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, replConfig(box, llm));
  for (const env of [{ TERM: "dumb" }, { FORCE_COLOR: "0" }, {}]) {
    await using repl = await startRepl(box, { env: { NO_COLOR: undefined, ...env } });
    llm.enqueue({ text: "This is **important**.\n" });
    await repl.send("say it", "important");
    const screen = await repl.tmux.screen({ escapes: true });
    if (Object.keys(env).length > 0) {
      assert.doesNotMatch(screen, /\x1b\[/, JSON.stringify(env));
      assert.match(await repl.tmux.screen(), /^This is \*\*important\*\*\.$/m, "as written");
    } else {
      assert.match(screen, /\x1b\[/, "colour in a terminal, to show the two above mean something");
    }
  }
});
