/**
 * The tool-call approval question in a real terminal (tmux): asked exactly once, and kept
 * whole, when a notice arrives while it waits for its key (a server that finishes
 * connecting behind it) in a terminal narrower than the question's line, and when one
 * model step makes two calls.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { sandbox, writeConfig } from "../support/cli.ts";
import { PATCHBAY, replConfig, terminalEnv } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { TmuxSession } from "../support/tmux.ts";
import { everythingEntry, NODE } from "../support/deps.ts";
import { screenRows } from "../../lib/terminal/line_editor.ts";
import { displayWidth } from "../../lib/terminal/terminal.ts";

/** Narrower than the question's `[y]es … (default No)` line, which therefore wraps. */
const NARROW_COLUMNS = 50;

/** How many times `needle` occurs in `text`. */
function count(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

Deno.test("a notice while an approval waits: the question is erased and drawn once, whole, below it", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  const gate = join(box.cwd, "connect-now");
  const config = replConfig(box, llm, { AgentConfig: { connect_wait: 0 } });
  // A server that connects when the test says so: its start-up notice then arrives while
  // the question is on the screen.
  Object.assign(config.mcpServers, {
    late: {
      command: "sh",
      args: [
        "-c",
        `while [ ! -e '${gate}' ]; do sleep 0.05; done; exec '${NODE}' '${everythingEntry()}' stdio`,
      ],
    },
  });
  await writeConfig(box, config);
  await using tmux = await TmuxSession.start({
    command: [...PATCHBAY],
    env: terminalEnv(box),
    cwd: box.cwd,
    width: NARROW_COLUMNS,
    height: 50,
  });
  await tmux.waitFor(/✓ everything connected/, { timeoutMs: 60_000 });
  await tmux.waitFor(/✓ filesystem connected/, { timeoutMs: 60_000 });

  llm.enqueue(
    { toolCalls: [{ name: "everything__echo", arguments: { message: "hi" } }] },
    { text: "Echoed." },
  );
  await tmux.submit("echo hi");
  await tmux.waitFor("(default No)");
  await Deno.writeTextFile(gate, "");
  const asked = await tmux.waitFor(/3 of 3 servers connected[\s\S]*\(default No\)$/, {
    timeoutMs: 60_000,
  });
  const turn = asked.slice(asked.lastIndexOf("› echo hi"));
  // Once: no wrapped start of the key line, no heading, left above the server block.
  assert.equal(count(turn, "[y]es"), 1, turn);
  assert.equal(count(turn, "? Run everything › echo"), 1, turn);
  // Whole, below the notice; what was above the question is still there, once.
  assert.match(
    turn,
    // The choices wrap between choices on a narrow terminal: over lines of their own.
    /3 of 3 servers connected\n(?:.*\n)*\? Run everything › echo\n.*"message":"hi".*\n\s+\[y\]es(?:.*\n\s+\[)*.*\(default No\)$/,
  );
  assert.equal(count(turn, "late is still connecting"), 1, turn);

  await tmux.press("y");
  const answered = await tmux.waitFor("Echoed.");
  assert.match(answered, /\(default No\) y\n(?:.*\n)*✓ everything › echo \d+ ms\s+Echo: hi/);

  // Two calls in one step: each asked once, in the order the model made them.
  llm.enqueue(
    {
      toolCalls: [
        { name: "everything__echo", arguments: { message: "one" } },
        { name: "everything__get-sum", arguments: { a: 1, b: 2 } },
      ],
    },
    { text: "Both ran." },
  );
  await tmux.submit("two calls");
  await tmux.waitFor(/Run everything › echo(?:.*\n)*.*\(default No\)$/);
  await tmux.press("y");
  await tmux.waitFor(/Run everything › get-sum(?:.*\n)*.*\(default No\)$/);
  await tmux.press("y");
  const both = await tmux.waitFor("Both ran.");
  const second = both.slice(both.lastIndexOf("› two calls"));
  assert.equal(count(second, "? Run everything › echo"), 1, second);
  assert.equal(count(second, "? Run everything › get-sum"), 1, second);
  assert.equal(count(second, "[y]es"), 2, second);
  // The result's line is wrapped between words on this narrow terminal.
  assert.match(second, /The sum of 1 and 2\s+is\s+3\./);
  await tmux.press("C-d");
  assert.equal(await tmux.exitCode(), 0);
});

Deno.test("screenRows counts the rows a question takes, wrapped lines and colours included", () => {
  assert.equal(screenRows("abc", 10), 1);
  assert.equal(screenRows("", 10), 1);
  // A line exactly as wide as the terminal leaves the cursor on its own row.
  assert.equal(screenRows("0123456789", 10), 1);
  assert.equal(screenRows("0123456789a", 10), 2);
  assert.equal(screenRows("heading\n    \x1b[1m[y]\x1b[22mes (default No) ", 10), 4);
  assert.equal(screenRows("a\nb\nc", Infinity), 3);
  assert.equal(displayWidth("\x1b[33m?\x1b[39m 漢字"), 6);
});
