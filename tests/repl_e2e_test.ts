/**
 * The interactive client as a person uses it: the real `patchbay` (through `deno task
 * start`) in a tmux pseudo-terminal, real server-everything and server-filesystem, and
 * the scripted model on loopback.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { sandbox, writeConfig } from "./support/cli.ts";
import { historyFile, replConfig, startRepl } from "./support/repl.ts";
import { startScriptedLlm } from "./support/scripted_llm.ts";

Deno.test("every slash command, through a real terminal", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await Deno.writeTextFile(join(box.cwd, "notes.txt"), "remember the milk\n");
  await writeConfig(box, replConfig(box, llm));
  await using repl = await startRepl(box);
  const banner = await repl.tmux.screen();
  assert.match(banner, /patchbay \d+\.\d+\.\d+ · openai-compatible\/scripted-model/);
  assert.match(banner, /2 of 2 servers connected/);
  assert.match(banner, /✓ everything\s+connected\s+stdio\s+\d+ tools/);

  const help = await repl.send("/help", "/quit, Ctrl+D");
  for (
    const name of [
      "debug",
      "tools",
      "memory",
      "api_stats",
      "status",
      "connections",
      "refresh",
      "prompts",
      "prompt",
      "resources",
      "resource",
      "call",
      "clear",
      "history",
      "exit",
    ]
  ) {
    assert.match(help, new RegExp(`/${name}\\b`), name);
  }
  assert.match(
    await repl.send("/tols", "did you mean"),
    /Unknown command \/tols — did you mean \/tools\?/,
  );
  assert.match(await repl.send("/TOOLS", "Unknown command"), /Unknown command \/TOOLS/);

  const tools = await repl.send("/tools filesystem", "read_text_file");
  assert.match(tools, /filesystem \(\d+ tools\)/);
  assert.doesNotMatch(tools, /everything \(/);
  assert.match(await repl.send("/tools", "get-sum"), /get-sum\(a, b\)/);

  const call = await repl.send('/call everything.echo {"message": "Hi THERE"}', "Echo: Hi THERE");
  assert.match(call, /✓ everything › echo \d+ ms/);
  assert.match(
    await repl.send("/call everything.echo {not json", "not valid JSON"),
    /error: Tool arguments are not valid JSON/,
  );
  assert.match(
    await repl.send(
      `/call filesystem.read_text_file {"path": "${join(box.cwd, "notes.txt")}"}`,
      "milk",
    ),
    /remember the milk/,
  );

  const prompts = await repl.send("/prompts", "args-prompt");
  assert.match(prompts, /everything \(\d+ prompts\)/);
  const resources = await repl.send("/resources", "templates");
  assert.match(resources, /demo:\/\/resource\/static\/document\/architecture\.md/);
  const resource = await repl.send(
    "/resource demo://resource/static/document/architecture.md",
    "Architecture",
  );
  assert.match(resource, /# Everything Server – Architecture/);

  llm.enqueue({ text: "Prompt answered." });
  const prompt = await repl.send("/prompt simple-prompt", "Prompt answered.");
  assert.match(prompt, /This is a simple prompt without arguments\./);
  assert.equal(
    llm.requests.at(-1)!.body.messages.at(-1).content,
    "This is a simple prompt without arguments.",
  );
  assert.match(
    await repl.send("/prompt args-prompt", "Usage"),
    /error: Usage: \/prompt args-prompt city=…/,
  );

  llm.enqueue({ text: "Hello from the **model**." });
  assert.match(await repl.send("hi there", "Hello from the"), /1 step · 110 tokens/);
  const history = await repl.send("/history", "conversation ");
  assert.match(history, /you\s+hi there/);
  assert.match(history, /model\s+Hello from the \*\*model\*\*\./);
  const stats = await repl.send("/api_stats", "tool_call_timeout");
  assert.match(stats, /Requests: +2/);
  assert.match(stats, /Total tokens: +220/);
  assert.match(stats, /scripted-model: 2 requests, 200 prompt \+ 20 completion = 220 tokens/);
  assert.match(stats, /request_limit: unlimited \(2 used\)/);

  const status = await repl.send("/status", "Uptime");
  assert.match(status, /Version\s+patchbay/);
  assert.match(status, /Model\s+openai-compatible \/ scripted-model/);
  assert.match(status, /Servers\s+2 connected, 0 failed/);
  assert.match(status, /Memory\s+Memory on: saving to .*\.local\/share\/patchbay\/sessions/);
  assert.match(status, /Log file\s+.*\.local\/state\/patchbay\/patchbay\.log/);

  assert.match(
    await repl.send("/connections", "protocol"),
    /everything: stdio .*server-everything/,
  );
  assert.match(await repl.send("/refresh everything", "connected"), /2 of 2 servers connected/);
  assert.match(
    await repl.send("/debug", "Debug logging"),
    /Debug logging on \(log file .*patchbay\.log\)/,
  );
  assert.match(await repl.send("/debug", "Debug logging off"), /Debug logging off/);

  assert.match(
    await repl.send("/memory", "Memory off"),
    /Memory off: this conversation is not saved/,
  );
  assert.match(await repl.send("/memory", "Memory on"), /Memory on: saving to/);
  const cleared = await repl.send("/clear", "New conversation");
  assert.match(cleared, /New conversation [\w-]+\./);
  assert.match(await repl.send("/history", "Nothing said yet"), /Nothing said yet/);

  await repl.tmux.submit("/exit");
  assert.equal(await repl.tmux.exitCode(), 0);
  assert.deepEqual(await repl.leftoverProcesses(), []);
});

Deno.test("tab completion of commands and tool names; history survives a restart", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, replConfig(box, llm));
  {
    await using repl = await startRepl(box);
    await repl.tmux.type("/sta");
    await repl.tmux.press("Tab");
    await repl.tmux.waitFor(/› \/status\s*$/m);
    await repl.tmux.press("Enter");
    await repl.tmux.waitFor("Uptime");
    await repl.tmux.type("/call everything.ec");
    await repl.tmux.press("Tab");
    await repl.tmux.waitFor("/call everything.echo");
    await repl.tmux.type(' {"message": "tabbed"}');
    await repl.tmux.press("Enter");
    await repl.tmux.waitFor("Echo: tabbed");
    await repl.tmux.press("C-d");
    assert.equal(await repl.tmux.exitCode(), 0);
  }
  const saved = (await Deno.readTextFile(historyFile(box))).trim().split("\n").map((l) =>
    JSON.parse(l)
  );
  // Entries are kept exactly as typed (the completion added the space).
  assert.deepEqual(saved, ["/status ", '/call everything.echo {"message": "tabbed"}']);
  await using again = await startRepl(box);
  await again.tmux.press("Up");
  await again.tmux.waitFor('› /call everything.echo {"message": "tabbed"}');
  await again.tmux.press("Up");
  await again.tmux.waitFor(/› \/status$/m);
  await again.tmux.press("Enter");
  await again.tmux.waitFor("Uptime");
});

Deno.test("Ctrl+C cancels a streamed answer and a running tool call; twice at the prompt exits", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(
    box,
    replConfig(box, llm, {
      mcpServers: {
        ...replConfig(box, llm).mcpServers,
        everything: { ...replConfig(box, llm).mcpServers.everything, trusted: true },
      },
    }),
  );
  await using repl = await startRepl(box);

  llm.enqueue({ text: "word ".repeat(400), chunkChars: 5, chunkDelayMs: 40 });
  await repl.expectNext(() => repl.tmux.submit("talk for a while"), "word word word");
  await repl.expectNext(() => repl.tmux.press("C-c"), "⊘ cancelled");
  llm.enqueue({ text: "Still here." });
  await repl.send("are you there?", "Still here.");

  llm.enqueue({
    toolCalls: [{
      name: "everything__trigger-long-running-operation",
      arguments: { duration: 30, steps: 30 },
    }],
  });
  await repl.expectNext(
    () => repl.tmux.submit("run the long task"),
    "everything › trigger-long-running-operation",
  );
  const cancelled = await repl.expectNext(() => repl.tmux.press("C-c"), "⊘ cancelled");
  assert.doesNotMatch(cancelled, /error:/);
  llm.enqueue({ text: "Back again." });
  await repl.send("and now?", "Back again.");
  // The cancelled call left no dangling tool call: the model saw a result for it.
  const toolMessages = llm.requests.at(-1)!.body.messages.filter((m: { role: string }) =>
    m.role === "tool"
  );
  assert.equal(toolMessages.length, 1);
  assert.match(toolMessages[0].content, /cancel/i);

  await repl.expectNext(() => repl.tmux.press("C-c"), "Ctrl+C again to exit");
  await repl.tmux.press("C-c");
  assert.equal(await repl.tmux.exitCode(), 0);
  assert.deepEqual(await repl.leftoverProcesses(), []);
});

Deno.test("tool approval: no, yes, always for this tool (default No)", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, replConfig(box, llm));
  await using repl = await startRepl(box);
  const echo = (message: string) => ({
    toolCalls: [{ name: "everything__echo", arguments: { message } }],
  });

  llm.enqueue(echo("first"), { text: "Declined, fine." });
  await repl.expectNext(() => repl.tmux.submit("echo first"), "(default No)");
  const declined = await repl.expectNext(() => repl.tmux.press("n"), "Declined, fine.");
  assert.match(declined, /⊘ everything › echo/);

  llm.enqueue(echo("second"), { text: "Ran it." });
  await repl.expectNext(() => repl.tmux.submit("echo second"), "(default No)");
  const approved = await repl.expectNext(() => repl.tmux.press("y"), "Ran it.");
  assert.match(approved, /✓ everything › echo \d+ ms\s+Echo: second/);

  llm.enqueue(echo("third"), { text: "Always then." });
  await repl.expectNext(() => repl.tmux.submit("echo third"), "(default No)");
  await repl.expectNext(() => repl.tmux.press("a"), "Always then.");

  llm.enqueue(echo("fourth"), { text: "No question asked." });
  const silent = await repl.send("echo fourth", "No question asked.");
  assert.doesNotMatch(silent, /default No/);
  assert.match(silent, /Echo: fourth/);

  llm.enqueue({ toolCalls: [{ name: "everything__get-sum", arguments: { a: 1, b: 2 } }] }, {
    text: "Enter means no.",
  });
  await repl.expectNext(() => repl.tmux.submit("sum"), "(default No)");
  const enter = await repl.expectNext(() => repl.tmux.press("Enter"), "Enter means no.");
  assert.match(enter, /⊘ everything › get-sum/);
  const toolResults = llm.requests.at(-1)!.body.messages.filter((m: { role: string }) =>
    m.role === "tool"
  );
  assert.match(toolResults.at(-1).content, /declined/i);
});

Deno.test("an elicitation request is a form in the terminal", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, replConfig(box, llm));
  await using repl = await startRepl(box, { args: ["--yes"] });
  llm.enqueue({ toolCalls: [{ name: "everything__trigger-elicitation-request", arguments: {} }] }, {
    text: "Thanks for the details.",
  });
  const form = await repl.expectNext(() => repl.tmux.submit("ask me things"), "ccept and fill in");
  assert.match(form, /everything asks: Please provide inputs for the following fields:/);
  assert.match(form, /String\* — Your full, legal name/);
  await repl.expectNext(() => repl.tmux.press("a"), "String*:");
  await repl.expectNext(() => repl.tmux.submit("Ada Lovelace"), "Boolean (y/n):");
  await repl.expectNext(() => repl.tmux.submit("y"), "String with default");
  await repl.expectNext(() => repl.tmux.submit(""), "String with email format (email):");
  const invalid = await repl.expectNext(
    () => repl.tmux.submit("not-an-email"),
    "enter an email address",
  );
  assert.match(invalid, /enter an email address/);
  await repl.expectNext(() => repl.tmux.submit("ada@example.org"), "String with uri format (uri):");
  await repl.expectNext(() => repl.tmux.submit(""), "String with date format (date):");
  await repl.expectNext(
    () => repl.tmux.submit("1815-12-10"),
    "Integer (whole number, default 42):",
  );
  // The remaining fields keep their defaults: Enter at each prompt, as it appears.
  for (
    const field of [
      "Number in range 1-1000 (number, default 3.14):",
      "Untitled Single Select Enum",
      "Untitled Multiple Select Enum",
      "Titled Single Select Enum",
      "Titled Multiple Select Enum",
      "Legacy Titled Single Select Enum",
    ]
  ) {
    await repl.expectNext(() => repl.tmux.press("Enter"), field);
  }
  await repl.expectNext(() => repl.tmux.press("Enter"), "Thanks for the details.");
  const result =
    llm.requests.at(-1)!.body.messages.find((m: { role: string }) => m.role === "tool").content;
  assert.match(result, /User provided the requested information/);
  assert.match(result, /Name: Ada Lovelace/);
  assert.match(result, /Agreed to terms: true/);
  assert.match(result, /Email: ada@example\.org/);
  assert.match(result, /Favorite Integer: 42/);
});

Deno.test("Ctrl+C during a form withdraws it: the prompt is clean and nothing typed leaks", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, replConfig(box, llm));
  await using repl = await startRepl(box, { args: ["--yes"] });
  llm.enqueue({ toolCalls: [{ name: "everything__trigger-elicitation-request", arguments: {} }] });
  await repl.expectNext(() => repl.tmux.submit("ask me things"), "ccept and fill in");
  await repl.expectNext(() => repl.tmux.press("a"), "String*:");
  await repl.tmux.type("half typed");
  await repl.expectNext(() => repl.tmux.press("C-c"), "⊘ cancelled");
  await repl.send("/status", "Uptime");
  // One echo of what was typed: no second reader of the keyboard is left behind.
  assert.match(await repl.tmux.screen(), /^› \/status$/m);
  assert.equal(llm.requests.length, 1, "nothing typed into the form reached the model");
});

Deno.test("time spent filling in a form does not count against tool_call_timeout", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, replConfig(box, llm, { AgentConfig: { tool_call_timeout: 2 } }));
  await using repl = await startRepl(box, { args: ["--yes"] });
  llm.enqueue(
    { toolCalls: [{ name: "everything__trigger-elicitation-request", arguments: {} }] },
    { text: "Got your name." },
  );
  await repl.expectNext(() => repl.tmux.submit("ask me"), "ccept and fill in");
  await repl.expectNext(() => repl.tmux.press("a"), "String*:");
  // Longer than the whole tool_call_timeout, spent by the person, not the server.
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  await repl.expectNext(() => repl.tmux.submit("Grace Hopper"), "Boolean (y/n):");
  await repl.expectNext(() => repl.tmux.submit("y"), "String with default");
  // Every other field is optional or has a default: Enter at each prompt as it appears.
  for (
    const next of [
      "String with email format",
      "String with uri format",
      "String with date format",
      "Integer (whole number",
      "Number in range",
      "Untitled Single Select Enum",
      "Untitled Multiple Select Enum",
      "Titled Single Select Enum",
      "Titled Multiple Select Enum",
      "Legacy Titled Single Select Enum",
      "Got your name.",
    ]
  ) {
    await repl.expectNext(() => repl.tmux.press("Enter"), next);
  }
  const screen = await repl.tmux.screen();
  assert.doesNotMatch(screen, /Tool timeout/);
  const result = llm.requests.at(-1)!.body.messages.find((m: { role: string }) =>
    m.role === "tool"
  );
  assert.match(result.content, /User provided the requested information/);
  assert.match(result.content, /Name: Grace Hopper/);
});
