/**
 * The terminal's conventions, in tmux through `deno task start` as a person runs patchbay:
 * at 40 and 80 columns no line breaks mid-word (banner, notices, the server block, /status,
 * tool listings with their whole descriptions, answers); under `TERM=dumb` not one escape
 * sequence reaches the terminal (no spinner, no erasing, no cursor movement: Deno's own
 * included); a long tool call's spinner counts its time; and a configured command that is
 * not on PATH is diagnosed by patchbay, never announced by Deno.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { PATCHBAY, replConfig, startRepl, terminalEnv } from "../support/repl.ts";
import { type ScriptedLlm, startScriptedLlm } from "../support/scripted_llm.ts";
import { TmuxSession } from "../support/tmux.ts";
import { everythingEntry, NODE } from "../support/deps.ts";
import { displayWidth } from "../../lib/terminal/terminal.ts";

/** A long answer, prose then a list, as a model writes one. */
const ANSWER = "Your folder holds three files, and the longest of them describes how the " +
  "servers are configured for this project.\n\n- the first item of a list that is long " +
  "enough to wrap on a narrow terminal\n- a second, shorter item";
/** The end of the longest description server-everything gives (cut at 110 before). */
const DESCRIPTION_END = "allowing it to be downloaded in a subsequent request during the " +
  "current session.";

/** The configuration: both test servers, one whose command is not installed. */
async function configure(box: Sandbox, llm: ScriptedLlm): Promise<void> {
  const config = replConfig(box, llm);
  Object.assign(config.mcpServers, { missing: { command: "patchbay-not-installed-xyz" } });
  await writeConfig(box, config);
}

/**
 * The lines of `joined` (the screen, wrapped rows joined) that the terminal had to wrap,
 * because patchbay wrote them wider than `columns`, save those holding a word that no line
 * can hold (a long path): each of them broke mid-word.
 */
function brokenMidWord(joined: string, columns: number): string[] {
  return joined.split("\n").filter((line) =>
    displayWidth(line) > columns &&
    !line.trim().split(/\s+/).some((word) => displayWidth(word) > columns - 12)
  );
}

for (const width of [40, 80]) {
  Deno.test(`at ${width} columns nothing breaks mid-word: banner, notices, status, tools, answers`, async () => {
    await using box = await sandbox();
    await using llm = await startScriptedLlm({ fallback: () => ({ text: ANSWER }) });
    await configure(box, llm);
    await using repl = await startRepl(box, { width });
    await repl.send("/status", /^Uptime/m);
    await repl.send("what is in my folder?", /shorter item/);
    await repl.send("/tools everything", /simulate-research-query/);
    await repl.send("/connections", /missing: stdio/);
    const joined = await repl.tmux.screen();
    assert.deepEqual(brokenMidWord(joined, width), [], `at ${width} columns:\n${joined}`);
    // The rows as the terminal shows them: every one within the width.
    for (const row of (await repl.tmux.screen({ rows: true })).split("\n")) {
      assert.ok(displayWidth(row) <= width, `a row wider than ${width}: ${row}`);
    }
    // Descriptions whole, wrapped under their tool; the answer's words all there, in order.
    const flat = joined.replace(/\s+/g, " ");
    assert.ok(flat.includes(DESCRIPTION_END), `the description is cut:\n${joined}`);
    for (const paragraph of ANSWER.split("\n").filter(Boolean)) {
      assert.ok(flat.includes(paragraph), `the answer lost words of: ${paragraph}\n${joined}`);
    }
    // patchbay's diagnosis of the command, and never Deno's notice of it.
    assert.match(flat, /command 'patchbay-not-installed-xyz' not found on PATH/);
    assert.doesNotMatch(joined, /Failed to resolve|for allow-run/);
    await repl.tmux.press("C-d");
    assert.equal(await repl.tmux.exitCode(), 0);
  });
}

Deno.test("TERM=dumb: not one escape sequence reaches the terminal, Deno's own included", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm({ fallback: () => ({ text: "Done." }) });
  await configure(box, llm);
  llm.enqueue(
    { toolCalls: [{ name: "everything__get-sum", arguments: { a: 19, b: 23 } }] },
    { text: "The sum is 42." },
  );
  const raw = join(box.home, "terminal.raw");
  // Recorded from the first byte: the shell waits for the recorder before starting patchbay.
  await using tmux = await TmuxSession.start({
    command: ["sh", "-c", 'while [ ! -e "$0" ]; do sleep 0.05; done; exec "$@"', raw, ...PATCHBAY],
    env: terminalEnv(box, { TERM: "dumb", NO_COLOR: undefined }),
    cwd: box.cwd,
    width: 80,
    height: 50,
  });
  await tmux.record(raw);
  await tmux.waitFor(/^Servers {2}\d+ of \d+ servers connected/m, { timeoutMs: 60_000 });
  await tmux.submit("add 19 and 23");
  await tmux.waitFor(/Run everything › get-sum/);
  await tmux.type("y");
  await tmux.waitFor(/The sum is 42\./);
  await tmux.submit("/tools everything");
  await tmux.waitFor(/simulate-research-query/);
  await tmux.press("C-d");
  assert.equal(await tmux.exitCode(), 0);
  const bytes = await Deno.readTextFile(raw);
  const escape = bytes.indexOf("\x1b");
  assert.equal(
    escape,
    -1,
    `an escape sequence under TERM=dumb: ${JSON.stringify(bytes.slice(escape - 40, escape + 40))}`,
  );
  // Line by line: the tool call, its result and the answer each on lines of their own.
  const screen = await tmux.screen();
  assert.match(screen, /^⚙ everything › get-sum\(\{"a":19,"b":23\}\)$/m);
  assert.match(screen, /^✓ everything › get-sum \d+ ms {2}The sum of 19 and 23 is 42\.$/m);
  assert.match(screen, /command 'patchbay-not-installed-xyz' not found on PATH/);
  assert.doesNotMatch(screen, /Failed to resolve/);
});

Deno.test("a long tool call's spinner counts its time", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm({ fallback: () => ({ text: "Long done." }) });
  const config = replConfig(box, llm);
  delete (config.mcpServers as Record<string, unknown>).filesystem;
  Object.assign(config.mcpServers.everything, { trusted: true });
  await writeConfig(box, config);
  await using repl = await startRepl(box, { width: 100 });
  llm.enqueue({
    toolCalls: [{
      name: "everything__trigger-long-running-operation",
      arguments: { duration: 6, steps: 2 },
    }],
  });
  await repl.tmux.submit("run long");
  // The spinner's line, once the call has run for a few seconds: its progress and its time.
  const running = await repl.tmux.waitFor(
    /^. (?:running )?everything › trigger-long-running-operation(?:…| \d+\/2.*) [2-9] s$/m,
    { timeoutMs: 30_000 },
  );
  assert.match(running, /⚙ everything › trigger-long-running-operation/);
  await repl.tmux.waitFor(/Long done\./, { timeoutMs: 30_000 });
  await repl.tmux.press("C-d");
  assert.equal(await repl.tmux.exitCode(), 0);
});

Deno.test("a command installed after start: /refresh before says it is not on PATH, after restarts and connects", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  const bin = join(box.home, "bin");
  await Deno.mkdir(bin);
  const config = replConfig(box, llm);
  delete (config.mcpServers as Record<string, unknown>).filesystem;
  Object.assign(config.mcpServers, { late: { command: "patchbay-installed-later" } });
  await writeConfig(box, config);
  await using repl = await startRepl(box, { env: { PATH: `${bin}:${box.env.PATH}` } });
  await repl.tmux.waitFor(/command 'patchbay-installed-later' not found on PATH/);
  // Not installed yet: nothing a restart could grant, so none (the diagnosis stands).
  const before = await repl.send("/refresh", /Configuration read again|Restarting/);
  assert.doesNotMatch(before, /Restarting/);
  assert.match(
    await repl.send("/connections", /late: stdio/),
    /command 'patchbay-installed-later' not found on PATH/,
  );
  const command = join(bin, "patchbay-installed-later");
  await Deno.writeTextFile(
    command,
    `#!/bin/sh\nexec '${NODE}' '${everythingEntry()}' stdio\n`,
  );
  await Deno.chmod(command, 0o755);
  // Installed: the plan now grants it where it was found, and the restart brings it up.
  const after = await repl.send("/refresh", /Restarting under an extended plan/, 60_000);
  // Named as the client sees it (it may not look in PATH's folders); granted where found.
  assert.match(after, /adds run patchbay-installed-later \(starts server 'late'\)/);
  await repl.tmux.waitFor(/2 of 2 servers connected/, { timeoutMs: 60_000 });
  assert.doesNotMatch(await repl.tmux.screen(), /Failed to resolve/);
});
