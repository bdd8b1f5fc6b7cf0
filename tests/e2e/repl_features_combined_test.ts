/**
 * The session's newer commands used together, as a person does in one sitting: `/mcp`,
 * `/trace`, mentions, server prompts, `/call`, `/status` and `/help`, through `deno task
 * start` in tmux with server-everything, server-filesystem and the scripted model. What
 * is checked is where features built apart meet: Tab completion of their arguments, a
 * disabled server's errors, the status rows, and a 60-column terminal.
 */

import assert from "node:assert/strict";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { everythingEntry, NODE } from "../support/deps.ts";
import { replConfig, startRepl } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { startEverythingHttp } from "../support/servers.ts";

const DOC = "demo://resource/static/document/architecture.md";

/** The line being edited at the prompt (the screen's last `›` line). */
async function promptLine(repl: { tmux: { screen(): Promise<string> } }): Promise<string> {
  const lines = (await repl.tmux.screen()).split("\n").filter((line) => line.startsWith("› "));
  return lines.at(-1) ?? "";
}

Deno.test("Tab after /mcp enable|disable and /trace show completes one server name", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, replConfig(box, llm));
  await using repl = await startRepl(box);

  await repl.tmux.type("/mcp disable ev");
  await repl.tmux.press("Tab");
  await repl.tmux.waitFor(/› \/mcp disable everything\s*$/m);
  assert.equal((await promptLine(repl)).trimEnd(), "› /mcp disable everything");
  await repl.send("", /Disabled everything now/);

  // Enable offers only what is disabled: the one candidate is completed at once.
  await repl.tmux.type("/mcp enable ");
  await repl.tmux.press("Tab");
  await repl.tmux.waitFor(/› \/mcp enable everything\s*$/m);
  await repl.tmux.press("C-u");

  await repl.tmux.type("/trace show fil");
  await repl.tmux.press("Tab");
  await repl.tmux.waitFor(/› \/trace show filesystem\s*$/m);
  assert.equal((await promptLine(repl)).trimEnd(), "› /trace show filesystem");
  await repl.tmux.press("C-u");

  // A misspelt server reads the same from each command that takes one.
  for (const line of ["/trace show filesytem", "/tools filesytem", "/mcp disable filesytem"]) {
    const said = await repl.send(line, /remedy:/);
    assert.match(said, /error: Unknown server: filesytem\n/, line);
    assert.match(
      said,
      /cause: {2}the configuration has no server named "filesytem" \(did you mean 'filesystem'\?\)/,
      line,
    );
    assert.match(said, /remedy: servers: everything, filesystem/, line);
  }
  await repl.tmux.submit("/exit");
  assert.equal(await repl.tmux.exitCode(), 0);
});

Deno.test("a server disabled for the session: its mention, prompt and /call say so and how to enable it", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, replConfig(box, llm));
  await using repl = await startRepl(box);
  await repl.send("/mcp disable everything", /Disabled everything now/);
  const before = llm.requests.length;

  const mention = await repl.send(`see @everything:${DOC}`, /remedy:/);
  assert.match(mention, new RegExp(`Could not read @everything:${DOC}`));
  assert.match(mention, /it was disabled for this session \(\/mcp disable\); the message was not/);
  assert.doesNotMatch(mention, /\(disabled\) \(/, "one reason, not nested brackets");
  assert.match(mention, /remedy: \/mcp enable everything connects it again/);

  const prompt = await repl.send("/everything:simple-prompt", /remedy:/);
  assert.match(prompt, /Server 'everything' is not connected \(disabled\)/);
  assert.match(prompt, /it was disabled for this session/);
  assert.match(prompt, /remedy: \/mcp enable everything connects it again/);

  const call = await repl.send('/call everything.echo {"message":"hi"}', /remedy:/);
  assert.match(call, /Server 'everything' is not connected \(disabled\)/);
  assert.match(call, /remedy: \/mcp enable everything connects it again/);
  // A server without resources at all: said so, rather than "check the URI".
  const none = await repl.send(`see @filesystem:file://${repl.box.cwd}`, /remedy:/);
  assert.match(
    none,
    /cause: {2}filesystem offers no resources \(it answered resources\/read with -32601/,
  );
  assert.doesNotMatch(none, /check the URI/);
  const tools = await repl.send("/tools everything", /offers no tools/);
  assert.match(
    tools,
    /everything offers no tools now: it was disabled for this session \(\/mcp disable\); \/mcp enable everything connects it again\./,
  );
  const refreshed = await repl.send("/refresh everything", /was not refreshed/);
  assert.match(refreshed, /everything was not refreshed: it was disabled for this session/);
  assert.equal(llm.requests.length, before, "nothing reached the model");

  await repl.send("/mcp enable everything", /Enabled everything now/, 60_000);
  llm.enqueue({ text: "Read it." });
  const back = await repl.send(`see @everything:${DOC}`, "Read it.");
  assert.match(back, new RegExp(`Attached everything:${DOC}`));
  await repl.tmux.submit("/exit");
  assert.equal(await repl.tmux.exitCode(), 0);
});

Deno.test("/status shows the wire trace beside context, and keeps it across /refresh", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, replConfig(box, llm));
  await using repl = await startRepl(box);

  const off = await repl.send("/status", "Uptime");
  assert.match(off, /^Context\s+images .* · tool search (on|off) \(/m);
  assert.match(off, /^Trace\s+off \(\/trace or --trace FILE records one\)$/m);

  const started = await repl.send("/trace", "Recording the wire trace in");
  const file = /Recording the wire trace in (\S+\.jsonl)/.exec(started)?.[1];
  assert.ok(file, started);
  llm.enqueue({ text: "Noted." });
  await repl.send(`read @everything:${DOC}`, "Noted.");
  const shown = await repl.send("/trace show everything", "trace file");
  assert.match(shown, new RegExp(`everything\\s+→\\s+resources/read #\\d+ ${DOC}\\s`));

  await repl.send("/refresh", /servers? connected/);
  const on = await repl.send("/status", "Uptime");
  assert.match(
    on,
    new RegExp(`^Trace\\s+on: [\\d,]+ lines in ${file!.replaceAll(".", "\\.")}$`, "m"),
  );

  // A file the launcher did not grant: said, with the way that works, and nothing lost.
  const said = await repl.send("/trace on /nonexistent-dir/t.jsonl", /the\s+launcher\s+grants/);
  // One notice, wrapped between words to the terminal: read as the one line it is.
  const denied = said.replace(/\s*\n\s+/g, " ");
  assert.match(denied, new RegExp(`the trace goes on in ${file!.replaceAll(".", "\\.")}`));
  assert.match(denied, /start patchbay with --trace \/nonexistent-dir\/t\.jsonl/);
  assert.doesNotMatch(denied, /Wire trace off|deno task start/);
  const still = await repl.send("/status", "Uptime");
  assert.match(
    still,
    new RegExp(`^Trace\\s+on: [\\d,]+ lines in ${file!.replaceAll(".", "\\.")}$`, "m"),
  );

  await repl.send("/trace off", "Wire trace off");
  const after = await repl.send("/status", "Uptime");
  assert.match(after, /^Trace\s+off \(the last one is \S+\.jsonl; \/trace records again\)$/m);
  await repl.tmux.submit("/exit");
  assert.equal(await repl.tmux.exitCode(), 0);
});

Deno.test("60 columns: /help and the approval question fit, every form of line listed", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, replConfig(box, llm));
  await using repl = await startRepl(box, { width: 60 });

  const help = await repl.send("/help", /Ctrl\+D\s+exits\./);
  const lines = help.split("\n").filter((line) => !line.startsWith("› "));
  const long = lines.filter((line) => line.length > 60);
  assert.deepEqual(long, [], `lines wider than the terminal:\n${long.join("\n")}`);
  assert.match(help, /enable or disable\s+one\s+for\s+this\s+session\s+\(also\s+\/servers\)/);
  for (const command of ["/mcp", "/trace", "/image", "/<server>:<prompt>", "@<server>:<uri>"]) {
    assert.ok(lines.some((line) => line.startsWith(`  ${command}`)), `${command} in:\n${help}`);
  }

  llm.enqueue(
    { toolCalls: [{ name: "everything__echo", arguments: { message: "hi" } }] },
    { text: "Echoed." },
  );
  const question = await repl.send("echo hi", "(default No)");
  const choices = question.split("\n").filter((line) => /\[[ynaspv]\]/.test(line));
  assert.ok(choices.length >= 2, question);
  for (const line of choices) assert.ok(line.length <= 60, `too wide: ${line}`);
  assert.ok(choices.some((line) => line.includes("[p]roject: always")), question);
  await repl.tmux.press("y");
  await repl.tmux.waitFor("Echoed.");
  await repl.tmux.submit("/exit");
  assert.equal(await repl.tmux.exitCode(), 0);
});

Deno.test("/trace off then /trace again keeps --trace-model: the model's requests still recorded", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, replConfig(box, llm));
  const file = `${box.cwd}/session.jsonl`;
  await using repl = await startRepl(box, { args: ["--trace", file, "--trace-model"] });
  await repl.send("/trace off", "Wire trace off");
  await repl.send("/trace", `Recording the wire trace in ${file}`);
  const status = await repl.send("/status", "Uptime");
  assert.match(
    status,
    /^Trace\s+on: [\d,]+ lines in \S+session\.jsonl, the model's requests too$/m,
  );
  llm.enqueue({ text: "Hello." });
  await repl.send("hi", "Hello.");
  await repl.tmux.submit("/exit");
  assert.equal(await repl.tmux.exitCode(), 0);
  const kinds = (await Deno.readTextFile(file)).trim().split("\n").map((l) => JSON.parse(l).kind);
  assert.ok(kinds.includes("model"), kinds.join(", "));
});

Deno.test("/mcp enable of a server the file disables, lacking its grants: said, left off, and the way that works", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await using web = await startEverythingHttp("streamableHttp");
  // Only a server at a URL is enabled: the launcher's plan may run no program.
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: {
      local: { command: NODE, args: [everythingEntry(), "stdio"], disabled: true },
      web: { url: `${web.origin}/mcp` },
    },
  });
  await using repl = await startRepl(box);
  llm.enqueue({ text: "Kept." });
  await repl.send("remember this", "Kept.");

  const refused = await repl.send("/mcp enable local", /remedy:/, 60_000);
  assert.match(refused, /error: Could not enable local: it needs --allow-run=node/);
  assert.match(refused, /its entry is disabled in the configuration/);
  assert.match(
    refused,
    /remedy: `patchbay mcp enable local` enables it in the file; then \/refresh/,
  );
  // Left as the file says, so that /refresh follows the file once it is edited.
  const listed = await repl.send("/mcp", "switches one for this session");
  assert.match(listed, /local\s+disabled\n/);

  const edited = await runPatchbay(box, ["mcp", "enable", "local"]);
  assert.equal(edited.code, 0, edited.stderr);
  const after = await repl.send("/refresh", /local\s+connected/, 90_000);
  assert.match(after, /Restarting under an extended plan/);
  assert.match(after, /Resuming session \w+ \(2 messages\)/);
  await repl.tmux.submit("/exit");
  assert.equal(await repl.tmux.exitCode(), 0);
});
