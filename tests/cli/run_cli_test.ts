/**
 * One-shot mode and the scriptable commands through the real entry point (`deno task
 * start`), with real MCP servers and the scripted model; input piped on stdin.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { replConfig } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";

const events = (stdout: string) => stdout.trim().split("\n").map((line) => JSON.parse(line));

Deno.test("run: a prompt in, the answer on stdout, status on stderr, exit 0", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm({ replies: [{ text: "Four." }] });
  await writeConfig(box, replConfig(box, llm));
  const result = await runPatchbay(box, ["run", "what", "is", "2+2?"]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, "Four.\n");
  assert.equal(llm.requests[0].body.messages.at(-1).content, "what is 2+2?");
});

Deno.test("run: piped stdin is the prompt, or is added to it", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm({ replies: [{ text: "ok" }, { text: "reviewed" }] });
  await writeConfig(box, replConfig(box, llm));
  const piped = await runPatchbay(box, ["run"], { stdin: "summarize this\n" });
  assert.equal(piped.code, 0, piped.stderr);
  assert.equal(llm.requests[0].body.messages.at(-1).content, "summarize this");
  const both = await runPatchbay(box, ["run", "review:"], { stdin: "diff --git a b\n" });
  assert.equal(both.code, 0, both.stderr);
  assert.equal(llm.requests[1].body.messages.at(-1).content, "review:\n\ndiff --git a b");
  const nothing = await runPatchbay(box, ["run"], { stdin: "" });
  assert.equal(nothing.code, 2);
  assert.match(nothing.stderr, /error: nothing to ask: give a prompt or pipe text on stdin/);
});

Deno.test("run --json --yes: a parseable event stream with tool calls, usage and done", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: "everything__get-sum", arguments: { a: 2, b: 3 } }] },
      { text: "The sum is 5." },
    ],
  });
  await writeConfig(box, replConfig(box, llm));
  const result = await runPatchbay(box, ["run", "--json", "--yes", "add 2 and 3"]);
  assert.equal(result.code, 0, result.stderr);
  const stream = events(result.stdout);
  const types = stream.map((e) => e.type);
  assert.deepEqual(types.filter((t) => t === "server"), ["server", "server"]);
  assert.ok(
    types.includes("tool_call") && types.includes("tool_result") && types.includes("usage"),
  );
  const call = stream.find((e) => e.type === "tool_call");
  assert.deepEqual([call.server, call.tool, call.arguments], ["everything", "get-sum", {
    a: 2,
    b: 3,
  }]);
  const toolResult = stream.find((e) => e.type === "tool_result");
  assert.equal(toolResult.status, "ok");
  assert.match(toolResult.preview, /The sum of 2 and 3 is 5/);
  const text = stream.filter((e) => e.type === "text_delta").map((e) => e.text).join("");
  assert.equal(text, "The sum is 5.");
  const done = stream.at(-1);
  assert.equal(done.type, "done");
  assert.equal(done.steps, 2);
  assert.equal(done.tool_calls, 1);
  assert.equal(done.usage.total_tokens, 220);
});

Deno.test("run --json without --yes declines tool calls and says why", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: "everything__echo", arguments: { message: "x" } }] },
      { text: "Could not run it." },
    ],
  });
  await writeConfig(box, replConfig(box, llm));
  const result = await runPatchbay(box, ["run", "--json", "echo x"]);
  assert.equal(result.code, 0, result.stderr);
  const stream = events(result.stdout);
  assert.ok(
    stream.some((e) =>
      e.type === "notice" && /pass --yes or mark the server "trusted"/.test(e.text)
    ),
  );
  assert.equal(stream.find((e) => e.type === "tool_result").status, "declined");
});

Deno.test("run: failures give a non-zero exit code and the contract's message", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm({
    replies: [{ status: 401, errorMessage: "Incorrect API key provided" }],
  });
  // No key for a provider that needs one: refused before any request.
  await writeConfig(box, {
    ...replConfig(box, llm),
    LLM: { provider: "openai", model: "gpt-4o-mini" },
  });
  const noKey = await runPatchbay(box, ["run", "hi"]);
  assert.equal(noKey.code, 1);
  assert.match(noKey.stderr, /error: Invalid API key\n\s+cause: {2}LLM_API_KEY is not set/);
  const noKeyJson = await runPatchbay(box, ["run", "--json", "hi"]);
  assert.equal(noKeyJson.code, 1);
  assert.equal(events(noKeyJson.stdout).at(-1).error.code, "invalid_api_key");
  assert.equal(llm.requests.length, 0);

  await writeConfig(box, replConfig(box, llm));
  const refused = await runPatchbay(box, ["run", "hi"], { env: { LLM_API_KEY: "wrong-key" } });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /error: Authentication failed/);
  assert.match(refused.stderr, /remedy: set LLM_API_KEY in \.env/);
});

Deno.test("tools, prompts, resources: text and --json, exit 1 with the diagnosis when a server fails", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  const config = replConfig(box, llm);
  await writeConfig(box, config);
  const tools = await runPatchbay(box, ["tools", "everything"]);
  assert.equal(tools.code, 0, tools.stderr);
  assert.match(tools.stdout, /^everything \(\d+ tools\)\n {2}echo\(message\)\n/);
  const json = JSON.parse((await runPatchbay(box, ["tools", "--json"])).stdout);
  assert.deepEqual(json.servers.map((s: { state: string }) => s.state), ["connected", "connected"]);
  assert.ok(
    json.tools.some((t: { server: string; tool: string }) =>
      t.server === "filesystem" && t.tool === "read_text_file"
    ),
  );
  const prompts = await runPatchbay(box, ["prompts", "--json"]);
  assert.ok(
    JSON.parse(prompts.stdout).prompts.some((p: { name: string }) => p.name === "simple-prompt"),
  );
  const resources = await runPatchbay(box, ["resources"]);
  assert.match(resources.stdout, /demo:\/\/resource\/static\/document\/architecture\.md/);

  await writeConfig(box, {
    ...config,
    mcpServers: { ...config.mcpServers, broken: { command: "patchbay-no-such-command" } },
  });
  const broken = await runPatchbay(box, ["tools"]);
  assert.equal(broken.code, 1);
  assert.match(broken.stdout, /everything \(\d+ tools\)/);
  assert.match(broken.stderr, /Failed to connect to server 'broken': Session terminated/);
  assert.match(broken.stderr, /command 'patchbay-no-such-command' not found/);
  const unknown = await runPatchbay(box, ["tools", "everythin"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown server 'everythin' \(did you mean 'everything'\?\)/);
});

Deno.test("call, read and prompt: results as sent, JSON on request, errors with exit 1", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await Deno.writeTextFile(join(box.cwd, "data.txt"), "line one\nline two\n");
  await writeConfig(box, replConfig(box, llm));
  const echo = await runPatchbay(box, ["call", "everything.echo", '{"message": "Hi THERE"}']);
  assert.equal(echo.code, 0, echo.stderr);
  assert.equal(echo.stdout, "Echo: Hi THERE\n");
  const fromStdin = await runPatchbay(box, ["call", "filesystem.read_text_file", "-"], {
    stdin: JSON.stringify({ path: join(box.cwd, "data.txt") }),
  });
  assert.equal(fromStdin.stdout, "line one\nline two\n\n");
  const full = JSON.parse(
    (await runPatchbay(box, ["call", "--json", "everything.get-sum", '{"a": 1, "b": 2}'])).stdout,
  );
  assert.deepEqual(full.content, [{ type: "text", text: "The sum of 1 and 2 is 3." }]);
  const failing = await runPatchbay(box, [
    "call",
    "filesystem.read_text_file",
    JSON.stringify({ path: "/etc/shadow" }),
  ]);
  assert.equal(failing.code, 1);
  assert.match(failing.stderr, /Access denied|outside allowed/i);
  const badJson = await runPatchbay(box, ["call", "everything.echo", "{message}"]);
  assert.equal(badJson.code, 1);
  assert.match(badJson.stderr, /error: Tool arguments are not valid JSON/);

  const read = await runPatchbay(box, ["read", "demo://resource/static/document/architecture.md"]);
  assert.equal(read.code, 0, read.stderr);
  assert.match(read.stdout, /^# Everything Server – Architecture/);
  const prompt = await runPatchbay(box, ["prompt", "args-prompt", "city=Paris", "state=Texas"]);
  assert.equal(prompt.code, 0, prompt.stderr);
  assert.match(prompt.stdout, /Paris/);
  const missing = await runPatchbay(box, ["prompt", "no-such-prompt"]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /error: Unknown prompt: no-such-prompt/);
  // A script's remedy names patchbay's commands, never the interactive client's /prompts.
  assert.match(missing.stderr, /remedy: see the list with `patchbay prompts`/);
  const noTool = await runPatchbay(box, ["call", "nosuch.tool", "{}"]);
  assert.equal(noTool.code, 2);
  assert.match(noTool.stderr, /error: Unknown tool: nosuch\.tool/);
  assert.match(noTool.stderr, /remedy: see the list with `patchbay tools`/);
  assert.doesNotMatch(noTool.stderr + missing.stderr, /\/tools|\/prompts/);
  // A required argument the prompt declares is caught before the server is asked.
  const noCity = await runPatchbay(box, ["prompt", "args-prompt", "state=Texas"]);
  assert.equal(noCity.code, 2);
  assert.match(noCity.stderr, /^error: Usage: patchbay prompt args-prompt city=…$/m);
  assert.match(
    noCity.stderr,
    /cause: {2}the prompt args-prompt of server 'everything' requires city, which was not given/,
  );
  assert.match(noCity.stderr, /remedy: give each as name=value; `patchbay prompts` lists/);
  assert.doesNotMatch(noCity.stderr, /-32602|Invalid arguments/);
  // Arguments not written name=value: the example is the command's own, not /prompt's.
  const stray = await runPatchbay(box, ["prompt", "args-prompt", "Paris"]);
  assert.match(stray.stderr, /error: Cannot read the arguments: Paris/);
  assert.match(stray.stderr, /remedy: write e\.g\. patchbay prompt greeting name="Ada Lovelace"/);
  assert.doesNotMatch(stray.stderr, /\/prompt/);
});
