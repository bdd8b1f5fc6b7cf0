/**
 * The scripting commands where this round's features meet, through `deno task start`
 * with real server-everything and the scripted model: `run --json` saying what a mention
 * attached, which tools a search loaded and where an image was saved; `call` on a disabled
 * server worded like the interactive client; `mcp get` showing an entry's tool filters.
 */

import assert from "node:assert/strict";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { everythingEntry, NODE } from "../support/deps.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";

const DOC = "demo://resource/static/document/architecture.md";

function events(stdout: string): Record<string, unknown>[] {
  return stdout.trim().split("\n").map((line) => JSON.parse(line));
}

Deno.test("run --json: mention, tool search and a saved image come as notices with their fields", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    AgentConfig: { tool_search: { mode: "always" } },
    mcpServers: { everything: { command: NODE, args: [everythingEntry(), "stdio"] } },
  });
  llm.enqueue(
    { toolCalls: [{ name: "find_tools", arguments: { query: "get-tiny-image" } }] },
    { toolCalls: [{ name: "everything__get-tiny-image", arguments: {} }] },
    { text: "A logo." },
  );
  const result = await runPatchbay(
    box,
    ["run", "--json", "--yes", `describe @everything:${DOC} and the tiny image`],
    { env: { LLM_API_KEY: "test-key" } },
  );
  assert.equal(result.code, 0, result.stderr);
  const notices = events(result.stdout).filter((event) => event.type === "notice");

  const attached = notices.find((event) => event.kind === "attachment");
  assert.ok(attached, result.stdout);
  assert.equal(attached.server, "everything");
  assert.equal(attached.uri, DOC);
  assert.equal(attached.mime_type, "text/markdown");
  assert.ok(typeof attached.bytes === "number" && attached.bytes > 1000, String(attached.bytes));
  assert.match(String(attached.text), /^Attached everything:/);

  const search = notices.find((event) => event.kind === "tool_search");
  assert.ok(search, result.stdout);
  assert.ok((search.loaded as string[]).includes("everything__get-tiny-image"));

  const image = notices.find((event) => event.kind === "image_saved");
  assert.ok(image, result.stdout);
  assert.equal(image.server, "everything");
  assert.equal(image.tool, "get-tiny-image");
  assert.equal(image.mime_type, "image/png");
  const saved = await Deno.stat(String(image.path));
  assert.ok(saved.isFile && saved.size > 0);
});

Deno.test("call on a disabled server names its state and how to enable it, in text and JSON", async () => {
  await using box = await sandbox();
  await writeConfig(box, {
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: {
      everything: {
        command: NODE,
        args: [everythingEntry(), "stdio"],
        disabled: true,
        include_tools: ["echo", "get-*"],
        exclude_tools: ["get-env"],
      },
    },
  });
  const text = await runPatchbay(box, ["call", "everything.echo", '{"message":"hi"}']);
  assert.equal(text.code, 1, text.stderr);
  assert.match(text.stderr, /error: Server 'everything' is not connected \(disabled\)/);
  assert.match(text.stderr, /cause: {2}the entry has "disabled": true/);
  assert.match(text.stderr, /remedy: `patchbay mcp enable everything` enables it in the file/);
  assert.doesNotMatch(text.stderr, /Unknown tool|\/connections/);

  const json = await runPatchbay(box, ["call", "--json", "everything.echo", '{"message":"hi"}']);
  assert.equal(json.code, 1);
  const error = JSON.parse(json.stdout.trim().split("\n").at(-1)!).error;
  assert.equal(error.code, "server_unavailable");
  assert.equal(error.message, "Server 'everything' is not connected (disabled)");
  assert.match(error.remedy, /patchbay mcp enable everything/);

  // The other scripting commands that name the server say the same.
  const prompt = await runPatchbay(box, ["prompt", "everything.simple-prompt"]);
  assert.equal(prompt.code, 1, prompt.stderr);
  assert.match(prompt.stderr, /error: Server 'everything' is not connected \(disabled\)/);
  assert.doesNotMatch(prompt.stderr, /Unknown prompt|\/connections/);
  const tools = await runPatchbay(box, ["tools", "everything"]);
  assert.match(
    tools.stderr,
    /everything offers no tools now: the entry has "disabled": true; `patchbay mcp enable everything`/,
  );

  const get = await runPatchbay(box, ["mcp", "get", "everything"]);
  assert.equal(get.code, 0, get.stderr);
  assert.match(get.stdout, /^ {2}include_tools +echo get-\*$/m);
  assert.match(get.stdout, /^ {2}exclude_tools +get-env$/m);
  const getJson = await runPatchbay(box, ["mcp", "get", "everything", "--json"]);
  const [server] = JSON.parse(getJson.stdout).servers;
  assert.deepEqual(server.include_tools, ["echo", "get-*"]);
  assert.deepEqual(server.exclude_tools, ["get-env"]);
});

Deno.test("trace show --last names the value typed when it is not a number", async () => {
  await using box = await sandbox();
  const result = await runPatchbay(box, ["trace", "show", "trace.jsonl", "--last", "abc"]);
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /error: --last must be a whole number of lines, not 'abc'/);
  assert.match(result.stderr, /remedy: e\.g\. patchbay trace show trace\.jsonl --last 50/);
});

Deno.test("config check: a wrong LLM.vision names the values it takes and the one seen", async () => {
  await using box = await sandbox();
  await writeConfig(box, {
    LLM: { provider: "openai", model: "gpt-4o-mini", vision: "yes" },
    mcpServers: {},
  });
  const result = await runPatchbay(box, ["config", "check"]);
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stderr, /LLM\.vision: expected true, false or "auto", got the string "yes"/);
  assert.doesNotMatch(result.stderr, /Invalid input/);
});

Deno.test("run --json: a call of an excluded tool names its server and tool, and search skips it", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    AgentConfig: { tool_search: { mode: "always" } },
    mcpServers: {
      everything: { command: NODE, args: [everythingEntry(), "stdio"], exclude_tools: ["get-env"] },
    },
  });
  llm.enqueue(
    { toolCalls: [{ name: "find_tools", arguments: { query: "get-env" } }] },
    { toolCalls: [{ name: "everything__get-env", arguments: {} }] },
    { text: "Done." },
  );
  const result = await runPatchbay(box, ["run", "--json", "--yes", "show the env"], {
    env: { LLM_API_KEY: "test-key" },
  });
  assert.equal(result.code, 0, result.stderr);
  const all = events(result.stdout);
  const search = all.find((event) => event.kind === "tool_search");
  assert.ok(search, result.stdout);
  assert.ok(!(search.loaded as string[]).includes("everything__get-env"), String(search.loaded));
  const call = all.find((event) => event.type === "tool_call");
  assert.deepEqual(
    { server: call?.server, tool: call?.tool },
    { server: "everything", tool: "get-env" },
  );
  const end = all.find((event) => event.type === "tool_result");
  assert.equal(end?.status, "error");
  assert.match(JSON.stringify(end), /excluded by mcpServers\.everything\.exclude_tools/);
});
