// deno-lint-ignore-file no-control-regex -- the colour and escape tests look for ESC
/**
 * The interactive client as a person uses it: the real `patchbay` (through `deno task
 * start`) in a tmux pseudo-terminal, real server-everything and server-filesystem, and
 * the scripted model on loopback.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runPatchbay, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { historyFile, PATCHBAY, replConfig, startRepl, terminalEnv } from "../support/repl.ts";
import { type ScriptedLlm, startScriptedLlm } from "../support/scripted_llm.ts";
import { TmuxSession } from "../support/tmux.ts";
import { everythingEntry, NODE } from "../support/deps.ts";

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
  // The footer comes after the answer: wait for it, not for the answer's first words.
  assert.match(await repl.send("hi there", /1 step · 110 tokens/), /Hello from the/);
  // NO_COLOR (set in every sandbox): the Markdown as written, and no attribute anywhere.
  const plain = await repl.tmux.screen({ escapes: true });
  assert.match(plain, /^Hello from the \*\*model\*\*\.$/m);
  assert.doesNotMatch(plain, /\x1b/);
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
  assert.doesNotMatch(await repl.tmux.screen({ escapes: true }), /\x1b/, "NO_COLOR");
  // The block alone would also be printed by a /refresh that did nothing: the log shows
  // the server went through connecting to connected once more.
  const log = join(box.home, ".local/state/patchbay/patchbay.log");
  const connects = async () =>
    (await Deno.readTextFile(log)).match(/everything\] state connected$/gm)?.length ?? 0;
  const connectsBefore = await connects();
  assert.match(await repl.send("/refresh everything", "connected"), /2 of 2 servers connected/);
  assert.equal(await connects(), connectsBefore + 1, "/refresh everything reconnected it");
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

Deno.test("a broken server beside a good one: /connections says why and what to do; /status counts the limits; /quit", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  const missing = join(box.home, "no-such-server");
  await writeConfig(
    box,
    replConfig(box, llm, {
      mcpServers: {
        everything: replConfig(box, llm).mcpServers.everything,
        broken: { command: missing, args: ["--stdio"] },
      },
      AgentConfig: { request_limit: 50, total_tokens_limit: 10_000 },
    }),
  );
  await using repl = await startRepl(box);
  assert.match(await repl.tmux.screen(), /1 of 2 servers connected/);

  const connections = await repl.send("/connections", /broken: stdio .* · failed since/);
  assert.match(connections, /Servers +1 of 2 servers connected/);
  assert.match(connections, /✓ everything\s+connected\s+stdio\s+17 tools, 4 prompts, 7 resources/);
  assert.match(connections, new RegExp(`✗ broken\\s+failed\\s+stdio\\s+${missing} --stdio\n`));
  assert.match(connections, /error: Failed to connect to server 'broken': Session terminated/);
  assert.match(connections, new RegExp(`cause: +command '${missing}' does not exist\n`));
  assert.match(connections, /remedy: fix the path in "command", or install the server there/);
  assert.match(connections, /everything: stdio node .*server-everything.* · connected since/);

  // The good server works while the other is down.
  assert.match(
    await repl.send('/call everything.echo {"message": "still here"}', "Echo: still here"),
    /✓ everything › echo/,
  );
  llm.enqueue({ text: "Counted." });
  await repl.send("count this", "Counted.");
  const status = await repl.send("/status", "Uptime");
  assert.match(status, /Servers\s+1 connected, 1 failed, 0 other, of 2/);
  assert.match(status, /Requests\s+1 \(110 tokens\)/);
  assert.match(
    status,
    /Limits\s+request_limit 1\/50, total_tokens_limit 110\/10000, sampling_request_limit 0\/100, max_steps \d+, tool_call_timeout \d+ s/,
  );
  await repl.tmux.submit("/quit");
  assert.equal(await repl.tmux.exitCode(), 0);
  assert.deepEqual(await repl.leftoverProcesses(), []);
});

Deno.test("without a usable key: the model is refused with its remedy, servers still work, /status shows the limits", async () => {
  await using box = await sandbox();
  await writeConfig(box, {
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: { everything: { command: NODE, args: [everythingEntry(), "stdio"] } },
    AgentConfig: { request_limit: 7 },
  });
  await using repl = await startRepl(box, { env: { LLM_API_KEY: undefined } });
  assert.match(
    await repl.tmux.screen(),
    /openai\/gpt-4o-mini \(Invalid API key: LLM_API_KEY is not set/,
  );

  const refused = await repl.send("hello", /remedy: set LLM_API_KEY/);
  assert.match(refused, /error: Invalid API key/);
  assert.match(
    await repl.send(
      '/call everything.echo {"message": "no model needed"}',
      "Echo: no model needed",
    ),
    /✓ everything › echo/,
  );
  const status = await repl.send("/status", "Uptime");
  assert.match(status, /Model\s+openai \/ gpt-4o-mini \(unusable: Invalid API key\)/);
  assert.match(status, /Requests\s+0\n/);
  assert.match(
    status,
    /Limits\s+request_limit 0\/7, total_tokens_limit 0\/unlimited, sampling_request_limit 0\/100, max_steps \d+, tool_call_timeout \d+ s/,
  );
  await repl.tmux.submit("/exit");
  assert.equal(await repl.tmux.exitCode(), 0);
});

Deno.test("tab completion of commands, tools, prompts, prompt arguments and resource URIs; history survives a restart", async () => {
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

    // Prompt names, then the prompt's arguments through the server's completions: the
    // second argument's values depend on the first (sent as context).
    await repl.tmux.type("/prompt compl");
    await repl.tmux.press("Tab");
    await repl.tmux.waitFor(/› \/prompt completable-prompt$/m);
    await repl.tmux.type(" department=Eng");
    await repl.tmux.press("Tab");
    await repl.tmux.waitFor(/› \/prompt completable-prompt department=Engineering$/m);
    await repl.tmux.type(" name=A");
    await repl.tmux.press("Tab");
    await repl.tmux.waitFor(/› \/prompt completable-prompt department=Engineering name=Alice$/m);
    llm.enqueue({ text: "Promoted." });
    await repl.send("", "Promoted.");
    assert.equal(
      llm.requests.at(-1)!.body.messages.at(-1).content,
      "Please promote Alice to the head of the Engineering team.",
    );

    // Resource URIs.
    await repl.tmux.type("/resource demo://resource/static/document/archi");
    await repl.tmux.press("Tab");
    await repl.tmux.waitFor(/› \/resource demo:\/\/resource\/static\/document\/architecture\.md$/m);
    await repl.send("", "# Everything Server – Architecture");

    await repl.tmux.press("C-d");
    assert.equal(await repl.tmux.exitCode(), 0);
  }
  const saved = (await Deno.readTextFile(historyFile(box))).trim().split("\n").map((l) =>
    JSON.parse(l)
  );
  // Entries are kept exactly as typed (the completion added the space).
  assert.deepEqual(saved, [
    "/status ",
    '/call everything.echo {"message": "tabbed"}',
    "/prompt completable-prompt department=Engineering name=Alice",
    "/resource demo://resource/static/document/architecture.md",
  ]);
  await using again = await startRepl(box);
  await again.tmux.press("Up");
  await again.tmux.waitFor("› /resource demo://resource/static/document/architecture.md");
  await again.tmux.press("Up", "Up", "Up");
  await again.tmux.waitFor(/› \/status$/m);
  await again.tmux.press("Enter");
  await again.tmux.waitFor("Uptime");
});

/** `patchbay sessions --json` in the sandbox: the stored sessions, most recent first. */
async function storedSessions(box: Sandbox) {
  const listed = await runPatchbay(box, ["sessions", "--json"]);
  assert.equal(listed.code, 0, listed.stderr);
  return JSON.parse(listed.stdout).sessions as { id: string; messages: number; turns: number }[];
}

/** The messages of one stored session, as `patchbay sessions show --json` gives them. */
async function storedMessages(box: Sandbox, id: string) {
  const shown = await runPatchbay(box, ["sessions", "show", id, "--json"]);
  assert.equal(shown.code, 0, shown.stderr);
  return (JSON.parse(shown.stdout).messages as { role: string; content: string }[]).map((m) => [
    m.role,
    m.content,
  ]);
}

/** What the model was sent last, without the system prompt: `[role, content]` pairs. */
function lastConversation(llm: ScriptedLlm) {
  return llm.requests.at(-1)!.body.messages
    .filter((m: { role: string }) => m.role !== "system")
    .map((m: { role: string; content: string }) => [m.role, m.content]);
}

Deno.test("multi-line input; Ctrl+D stores the session and leaves no process; --resume continues it; /clear starts another", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, replConfig(box, llm));
  {
    await using repl = await startRepl(box);
    llm.enqueue({ text: "Got two lines." });
    await repl.expectNext(() => repl.tmux.submit("line one\\"), /^…\s*$/m);
    await repl.send("line two", "Got two lines.");
    assert.deepEqual(lastConversation(llm), [["user", "line one\nline two"]]);

    llm.enqueue({ text: "Got a block." });
    await repl.expectNext(() => repl.tmux.submit('"""'), /^…\s*$/m);
    await repl.tmux.submit("alpha \\");
    await repl.tmux.submit("  beta");
    await repl.send('"""', "Got a block.");
    assert.deepEqual(lastConversation(llm).at(-1), ["user", "alpha \\\n  beta"]);

    // The check below can see the servers: while the session runs, they are there.
    const running = await repl.leftoverProcesses();
    assert.ok(running.some((p) => p.includes("server-everything")), running.join("\n"));
    assert.ok(running.some((p) => p.includes("server-filesystem")), running.join("\n"));
    await repl.tmux.press("C-d");
    assert.equal(await repl.tmux.exitCode(), 0);
    assert.deepEqual(await repl.leftoverProcesses(), []);
  }
  const stored = await storedSessions(box);
  assert.equal(stored.length, 1);
  const firstId = stored[0].id;
  const firstExchange = [
    ["user", "line one\nline two"],
    ["assistant", "Got two lines."],
    ["user", "alpha \\\n  beta"],
    ["assistant", "Got a block."],
  ];
  assert.deepEqual(await storedMessages(box, firstId), firstExchange);

  await using resumed = await startRepl(box, { args: ["--resume", firstId.slice(0, 8)] });
  assert.match(
    await resumed.tmux.screen(),
    new RegExp(`Resuming session ${firstId} \\(4 messages\\)`),
  );
  llm.enqueue({ text: "You sent two messages." });
  await resumed.send("what did I say?", "You sent two messages.");
  assert.deepEqual(lastConversation(llm), [...firstExchange, ["user", "what did I say?"]]);

  const cleared = await resumed.send("/clear", "New conversation");
  const secondId = /New conversation ([\w-]+)\./.exec(cleared)![1];
  assert.notEqual(secondId, firstId);
  llm.enqueue({ text: "Fresh." });
  await resumed.send("start afresh", "Fresh.");
  assert.deepEqual(lastConversation(llm), [["user", "start afresh"]]);
  await resumed.tmux.submit("/exit");
  assert.equal(await resumed.tmux.exitCode(), 0);

  assert.deepEqual((await storedSessions(box)).map((s) => [s.id, s.messages]), [
    [secondId, 2],
    [firstId, 6],
  ]);
  assert.deepEqual(await storedMessages(box, secondId), [
    ["user", "start afresh"],
    ["assistant", "Fresh."],
  ]);
});

/** The SGR parameters in effect where `text` starts on a `capture-pane -e` screen. */
function attributesAt(screen: string, text: string): string[] {
  const at = screen.indexOf(text);
  assert.ok(at >= 0, `${JSON.stringify(text)} is not on the screen:\n${screen}`);
  const before = /(?:\x1b\[[0-9;]*m)*$/.exec(screen.slice(0, at))![0];
  return [...before.matchAll(/\x1b\[([0-9;]*)m/g)].flatMap((m) => m[1].split(";"));
}

const ESC = "\u001b";

Deno.test("colours in a terminal, none in files; escape sequences from the model and servers never reach the terminal", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, replConfig(box, llm));
  const colour = { NO_COLOR: undefined };
  {
    await using repl = await startRepl(box, { args: ["--yes"], env: colour });
    const raw = join(box.home, "terminal.raw");
    await repl.tmux.record(raw);
    const title = await repl.tmux.title();

    llm.enqueue({ text: "# Plan\n\nThis is **important** and plain.\n" });
    await repl.send("show me", "and plain.");
    const styled = await repl.tmux.screen({ escapes: true });
    assert.deepEqual(attributesAt(styled, "Plan"), ["1", "35"]);
    assert.ok(attributesAt(styled, "important").includes("1"), "bold is bold");
    assert.ok(!attributesAt(styled, " and plain.").includes("1"), "bold ends");
    assert.match(await repl.tmux.screen(), /^Plan\n\nThis is important and plain\.$/m);

    // A tool result and the answer both carry a title change and a screen clear.
    llm.enqueue(
      {
        toolCalls: [{
          name: "everything__echo",
          arguments: { message: `${ESC}]0;pwned${ESC}\\visible-echo${ESC}[2J` },
        }],
      },
      { text: `Done: ${ESC}]2;pwned\u0007shown${ESC}[2J text, ${ESC}[31mred${ESC}[0m.` },
    );
    const turn = await repl.send("echo it", "Done: shown text, red.");
    assert.match(turn, /✓ everything › echo \d+ ms\s+Echo: visible-echo\n/);
    const called = await repl.send(
      String.raw`/call everything.echo {"message": "\u001b]0;pwned\u0007via-call\u001b[2J"}`,
      "Echo: via-call",
    );
    assert.match(called, /Echo: via-call$/m);
    assert.match(
      await repl.send("/history", "conversation "),
      /model\s+Done: shown text, red\./,
    );
    assert.equal(await repl.tmux.title(), title);
    const screen = await repl.tmux.screen();
    // The first answer is still there: nothing cleared the screen.
    assert.match(screen, /This is important and plain\./);
    // What reached the terminal, byte for byte: the text, and no title or clear sequence.
    const bytes = await Deno.readTextFile(raw);
    assert.match(bytes, /Echo: visible-echo/);
    assert.match(bytes, /\x1b\[1m/, "the recording holds the colours, so it holds escapes");
    assert.doesNotMatch(bytes, /\x1b\]/);
    assert.doesNotMatch(bytes, /\x1b\[2J/);
    assert.doesNotMatch(bytes, /\x1b\[31m/);
    await repl.tmux.submit("/exit");
    assert.equal(await repl.tmux.exitCode(), 0);
  }

  // One-shot runs with a terminal on one stream and a file on the other: the file gets
  // plain text, the terminal its colours.
  llm.enqueue({ text: "# Plan\n\nThis is **important** and plain.\n" });
  llm.enqueue(
    { toolCalls: [{ name: "everything__echo", arguments: { message: "to the log" } }] },
    { text: "A **styled** answer." },
  );
  const patchbay = PATCHBAY.map((word) => `'${word}'`).join(" ");
  await using shell = await TmuxSession.start({
    command: [
      "sh",
      "-c",
      `${patchbay} run "render this" > answer.txt && ${patchbay} run --yes "log this" 2> status.txt`,
    ],
    env: terminalEnv(box, colour),
    cwd: box.cwd,
  });
  assert.equal(await shell.exitCode(30_000), 0, await shell.screen());
  assert.equal(
    await Deno.readTextFile(join(box.cwd, "answer.txt")),
    "# Plan\n\nThis is **important** and plain.\n",
  );
  const status = await Deno.readTextFile(join(box.cwd, "status.txt"));
  assert.match(status, /everything › echo/);
  assert.doesNotMatch(status, /\x1b/);
  assert.ok(attributesAt(await shell.screen({ escapes: true }), "styled").includes("1"));
});

/** Waits until the file holds `pattern` and returns its text. */
async function waitForFile(file: string, pattern: RegExp | string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  let text = "";
  while (Date.now() < deadline) {
    text = await Deno.readTextFile(file).catch(() => "");
    if (typeof pattern === "string" ? text.includes(pattern) : pattern.test(text)) return text;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${pattern} in ${file}:\n${text}`);
}

/** A tool call that needs approval, then the model's answer. */
const echoTurn = (message: string, answer: string) => [
  { toolCalls: [{ name: "everything__echo", arguments: { message } }] },
  { text: answer },
];

Deno.test("run > answer.txt at a terminal: the approval is asked on the terminal in its colours, the file holds only the answer", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, replConfig(box, llm));
  llm.enqueue(...echoTurn("approved", "A **styled** answer."));
  const patchbay = PATCHBAY.map((word) => `'${word}'`).join(" ");
  await using shell = await TmuxSession.start({
    command: ["sh", "-c", `${patchbay} run "echo it" > answer.txt`],
    env: terminalEnv(box, { NO_COLOR: undefined }),
    cwd: box.cwd,
  });
  const asked = await shell.waitFor("(default No)", { timeoutMs: 30_000 });
  assert.match(asked, /\? Run everything › echo\n.*approved.*\n\s+\[y\]es {2}\[n\]o {2}\[a\]lways/);
  // stderr is the terminal: the question carries its colours.
  assert.ok(attributesAt(await shell.screen({ escapes: true }), "[y]").includes("1"));
  await shell.press("y");
  assert.equal(await shell.exitCode(30_000), 0, await shell.screen());
  const screen = await shell.screen();
  assert.match(screen, /\(default No\) y\n/);
  assert.match(screen, /✓ everything › echo \d+ ms\s+Echo: approved/);
  assert.match(llm.requests.at(-1)!.body.messages.at(-1).content, /Echo: approved/);
  // The answer alone: no question, no key, no escape code.
  assert.equal(
    await Deno.readTextFile(join(box.cwd, "answer.txt")),
    "A **styled** answer.\n",
  );
});

Deno.test("the REPL with stdout or stderr redirected: prompts and questions stay on the terminal, each stream styled for itself", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, replConfig(box, llm));
  const patchbay = PATCHBAY.map((word) => `'${word}'`).join(" ");
  const colour = terminalEnv(box, { NO_COLOR: undefined });

  // stdout to a file: the banner, the prompt and the approval on the terminal (stderr,
  // coloured); the file gets the command output and the answer, plain.
  {
    const transcript = join(box.cwd, "transcript.txt");
    await using shell = await TmuxSession.start({
      command: ["sh", "-c", `${patchbay} > transcript.txt`],
      env: colour,
      cwd: box.cwd,
    });
    await shell.waitFor(/Type a message, or \/help.*\n› ?$/, { timeoutMs: 30_000 });
    // The servers connect behind the prompt; the block says when they all have.
    await shell.waitFor(/^Servers {2}2 of 2 servers connected\n/m, { timeoutMs: 30_000 });
    const prompt = attributesAt(await shell.screen({ escapes: true }), "›");
    assert.ok(prompt.includes("1") && prompt.includes("32"), `prompt attributes ${prompt}`);
    await shell.submit("/connections");
    await waitForFile(transcript, "protocol");
    llm.enqueue(...echoTurn("to the file", "Answer in the file."));
    await shell.submit("echo it");
    const asked = await shell.waitFor("(default No)");
    assert.match(asked, /\? Run everything › echo\n/);
    assert.ok(attributesAt(await shell.screen({ escapes: true }), "[y]").includes("1"));
    await shell.press("y");
    await waitForFile(transcript, "Answer in the file.");
    await shell.submit("/exit");
    assert.equal(await shell.exitCode(), 0, await shell.screen());
    const text = await Deno.readTextFile(transcript);
    assert.match(text, /^Servers {2}2 of 2 servers connected\n {2}✓ everything +connected/m);
    assert.match(text, /everything: stdio .* · protocol /);
    assert.match(text, /^Answer in the file\.$/m);
    assert.doesNotMatch(text, /\x1b/);
    assert.doesNotMatch(text, /^›|\? Run |\[y\]es/m);
  }

  // stderr to a file: the prompt, the approval and /connections on the terminal (stdout,
  // coloured); the log gets the banner and the status lines, plain.
  {
    const log = join(box.cwd, "status.txt");
    await using shell = await TmuxSession.start({
      command: ["sh", "-c", `${patchbay} 2> status.txt`],
      env: colour,
      cwd: box.cwd,
    });
    await waitForFile(log, "Type a message, or /help", 30_000);
    await waitForFile(log, "Servers  2 of 2 servers connected", 30_000);
    await shell.waitFor(/^›$/m);
    const connections = await shell.screen().then((before) =>
      shell.submit("/connections").then(() => shell.waitFor("protocol", { after: before.length }))
    );
    assert.match(connections, /^Servers {2}2 of 2 servers connected$/m);
    const styled = await shell.screen({ escapes: true });
    assert.ok(attributesAt(styled, "Servers").includes("1"), "bold on the terminal");
    assert.ok(attributesAt(styled, "✓").includes("32"), "green on the terminal");
    llm.enqueue(...echoTurn("to the log", "Answer on the terminal."));
    await shell.submit("echo it");
    const asked = await shell.waitFor("(default No)");
    assert.match(asked, /\? Run everything › echo\n.*to the log/);
    assert.ok(attributesAt(await shell.screen({ escapes: true }), "[y]").includes("1"));
    await shell.press("y");
    await shell.waitFor("Answer on the terminal.");
    // A server's form: all of it on the terminal too.
    llm.enqueue(
      { toolCalls: [{ name: "everything__trigger-elicitation-request", arguments: {} }] },
      { text: "Form declined." },
    );
    const before = (await shell.screen()).length;
    await shell.submit("ask me");
    await shell.waitFor("(default No)", { after: before });
    await shell.press("y");
    const form = await shell.waitFor("ccept and fill in", { after: before });
    assert.match(form, /\? everything asks: Please provide inputs for the following fields:/);
    assert.match(form, /String\* — Your full, legal name/);
    assert.ok(attributesAt(await shell.screen({ escapes: true }), "[d]").includes("1"));
    await shell.press("d");
    await shell.waitFor("Form declined.", { after: before });
    await shell.submit("/exit");
    assert.equal(await shell.exitCode(), 0, await shell.screen());
    const text = await Deno.readTextFile(log);
    assert.match(text, /patchbay \d+\.\d+\.\d+ · openai-compatible\/scripted-model/);
    assert.match(text, /✓ everything › echo \d+ ms\s+Echo: to the log/);
    assert.match(text, /everything › trigger-elicitation-request/);
    assert.doesNotMatch(text, /\x1b/);
    assert.doesNotMatch(text, /^›|\? Run |\[y\]es|asks:|legal name|\[d\]ecline/m);
  }
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
      arguments: { duration: 30, steps: 60 },
    }],
  });
  await repl.expectNext(
    () => repl.tmux.submit("run the long task"),
    "everything › trigger-long-running-operation",
  );
  // The server's progress notifications show on the spinner line, step after step (with
  // the call's time once it has run for a while).
  const progress = /everything › trigger-long-running-operation (\d+)\/60(?: \d+ s)?$/m;
  const step = Number(progress.exec(await repl.tmux.waitFor(progress))![1]);
  await repl.tmux.waitFor(
    new RegExp(
      `everything › trigger-long-running-operation (?!${step}/)\\d+/60(?: \\d+ s)?$`,
      "m",
    ),
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

Deno.test("tool approval: no, yes, always for this tool, always for this server (default No)", async () => {
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

  // Always for this server: get-sum once more, then a tool never approved runs unasked.
  llm.enqueue({ toolCalls: [{ name: "everything__get-sum", arguments: { a: 2, b: 3 } }] }, {
    text: "Server trusted.",
  });
  await repl.expectNext(() => repl.tmux.submit("sum again"), "(default No)");
  const server = await repl.expectNext(() => repl.tmux.press("s"), "Server trusted.");
  assert.match(server, /✓ everything › get-sum \d+ ms\s+The sum of 2 and 3 is 5\./);
  llm.enqueue({ toolCalls: [{ name: "everything__get-tiny-image", arguments: {} }] }, {
    text: "Image fetched.",
  });
  const unasked = await repl.send("an image", "Image fetched.");
  assert.doesNotMatch(unasked, /default No/);
  assert.match(unasked, /✓ everything › get-tiny-image \d+ ms/);
  // Another server's tools still ask.
  llm.enqueue({
    toolCalls: [{ name: "filesystem__list_allowed_directories", arguments: {} }],
  }, { text: "Asked again." });
  await repl.expectNext(() => repl.tmux.submit("list dirs"), "(default No)");
  await repl.expectNext(() => repl.tmux.press("n"), "Asked again.");
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
