/**
 * Typing while a turn runs (a long tool call): nothing is echoed over the answer, nothing
 * is lost, and nothing runs unseen: the next prompt starts with what was typed. So
 * `/mcp disable <server>` typed during a running tool call waits for the call to end, and
 * is sent with Enter. Driven in tmux through `deno task start`.
 */

import assert from "node:assert/strict";
import { sandbox, writeConfig } from "../support/cli.ts";
import { replConfig, startRepl } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { typedAhead } from "../../lib/terminal/line_editor.ts";

Deno.test("keys typed during a running tool call start the next prompt; Enter sends them", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  const config = replConfig(box, llm);
  delete (config.mcpServers as Record<string, unknown>).filesystem;
  Object.assign(config.mcpServers.everything, { trusted: true });
  await writeConfig(box, config);
  await using repl = await startRepl(box);
  llm.enqueue(
    {
      toolCalls: [{
        name: "everything__trigger-long-running-operation",
        arguments: { duration: 3, steps: 3 },
      }],
    },
    { text: "Long done." },
  );
  await repl.tmux.submit("run long");
  await repl.tmux.waitFor(/⚙ everything › trigger-long-running-operation/);
  await repl.tmux.type("/mcp disablx");
  await repl.tmux.press("BSpace");
  await repl.tmux.type("e everything");
  await repl.tmux.press("Enter");
  const ended = await repl.tmux.waitFor(
    /Long done\.\n.*steps? · .*\n› \/mcp disable everything\s*$/,
    {
      timeoutMs: 60_000,
    },
  );
  // Not echoed into the answer while the call ran.
  assert.equal(ended.split("/mcp disable").length - 1, 1, ended);
  const disabled = await repl.expectNext(() => repl.tmux.press("Enter"), /Disabled everything/);
  assert.match(disabled, /Disabled everything/);
  await repl.tmux.press("C-d");
  assert.equal(await repl.tmux.exitCode(), 0);
});

Deno.test("typedAhead keeps printable keys, honours Backspace, shows Enter as a space, drops escapes", () => {
  assert.equal(typedAhead("", "abc\x7fd"), "abd");
  assert.equal(typedAhead("", "one\rtwo\r"), "one two ");
  assert.equal(typedAhead("x", "\x1b[A\x1b[Dy\x1bOB\x9bz"), "xyz");
  assert.equal(typedAhead("", "\x7f"), "");
  assert.equal(typedAhead("", "a".repeat(5000)).length, 4096);
});
