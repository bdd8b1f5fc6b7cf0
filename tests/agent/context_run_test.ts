/**
 * What a server offers, in the conversation, through `deno task start run`: resources
 * attached by `@server:uri` mention, images tool results carry (to a vision model as image
 * parts, described to one without), and tool search, with the real server-everything and a
 * scripted model that records what it receives.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { replConfig } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";

const DOC = "demo://resource/static/document/architecture.md";

// deno-lint-ignore no-explicit-any
type Body = any;
const lastUser = (body: Body) =>
  body.messages.filter((m: { role: string }) => m.role === "user").at(-1);

Deno.test("run: @server:uri attaches the resource to the message, wrapped as untrusted", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm({ replies: [{ text: "Read it." }] });
  await writeConfig(box, replConfig(box, llm));
  const result = await runPatchbay(box, ["run", `summarize @everything:${DOC}, briefly`]);
  assert.equal(result.code, 0, result.stderr);
  const content: string = lastUser(llm.requests[0].body).content;
  assert.equal(typeof content, "string");
  assert.ok(content.startsWith(`summarize @everything:${DOC}, briefly\n\n`), content);
  assert.match(
    content,
    new RegExp(
      `<resource server="everything" uri="${DOC}" mime="text/markdown" trust="untrusted">`,
    ),
  );
  assert.match(content, /# Everything Server/i);
  assert.match(result.stderr, new RegExp(`Attached everything:${DOC} \\(`));
});

Deno.test("run: text with @ that names no server is left as text", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm({ replies: [{ text: "ok" }] });
  await writeConfig(box, replConfig(box, llm));
  const prompt = "mail bob@everything:x or @alice, cc @nosuch:thing and @everything: too";
  const result = await runPatchbay(box, ["run", prompt]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(lastUser(llm.requests[0].body).content, prompt);
  assert.doesNotMatch(result.stderr, /Attached/);
});

Deno.test("run: a mention that cannot be read fails before anything is sent", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm({ replies: [{ text: "never" }] });
  await writeConfig(box, replConfig(box, llm));
  const result = await runPatchbay(box, ["run", "look at @everything:demo://no/such/thing"]);
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stderr, /Could not read @everything:demo:\/\/no\/such\/thing/);
  assert.match(
    result.stderr,
    /Resource demo:\/\/no\/such\/thing not found.*the message was not sent/,
  );
  // A script's remedy names the command that lists resources, not the REPL's /resources.
  assert.match(result.stderr, /remedy: check the URI with `patchbay resources everything`/);
  assert.doesNotMatch(result.stderr, /remedy:.*\s\/resources/);
  assert.equal(llm.requests.length, 0);
});

Deno.test("run: a tool's image goes to a vision model after the tool results, saved 0600", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: "everything__get-tiny-image", arguments: {} }] },
      { text: "A tiny image." },
    ],
  });
  const config = replConfig(box, llm);
  await writeConfig(box, { ...config, LLM: { ...config.LLM, vision: true } });
  const result = await runPatchbay(box, ["run", "--yes", "show me the tiny image"]);
  assert.equal(result.code, 0, result.stderr);
  const messages = llm.requests[1].body.messages;
  const toolIndex = messages.findIndex((m: { role: string }) => m.role === "tool");
  const tool = messages[toolIndex];
  assert.match(tool.content, /\[image: image\/png, [\d.]+ (kB|B)\]/);
  const after = messages[toolIndex + 1];
  assert.equal(after.role, "user");
  const image = after.content.find((p: { type: string }) => p.type === "image_url");
  assert.match(image.image_url.url, /^data:image\/png;base64,iVBOR/);
  assert.ok(after.content.some((p: { text?: string }) => /trust="untrusted"/.test(p.text ?? "")));
  const saved = /saved to (\S+\.png)/.exec(result.stderr)?.[1];
  assert.ok(saved, result.stderr);
  assert.ok(saved.startsWith(join(box.home, ".local", "state", "patchbay", "images")), saved);
  assert.equal((await Deno.stat(saved)).mode! & 0o777, 0o600);
});

Deno.test("run: a model without vision is told an image was returned, and its size", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: "everything__get-tiny-image", arguments: {} }] },
      { text: "I cannot see it." },
    ],
  });
  // `auto` with a model name the rule does not know as a vision model: text only.
  await writeConfig(box, replConfig(box, llm));
  const result = await runPatchbay(box, ["run", "--yes", "show me the tiny image"]);
  assert.equal(result.code, 0, result.stderr);
  const body = JSON.stringify(llm.requests[1].body);
  assert.doesNotMatch(body, /image_url/);
  const tool = llm.requests[1].body.messages.find((m: { role: string }) => m.role === "tool");
  assert.match(
    tool.content,
    /an image was returned \(image: image\/png, [\d.]+ k?B\); the model in use does not take images/,
  );
});

Deno.test("run: vision auto sends image parts to a model named as a vision model", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: "everything__get-tiny-image", arguments: {} }] },
      { text: "Seen." },
    ],
  });
  const config = replConfig(box, llm);
  await writeConfig(box, { ...config, LLM: { ...config.LLM, model: "gpt-4o-mini" } });
  const result = await runPatchbay(box, ["run", "--yes", "show me the tiny image"]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(JSON.stringify(llm.requests[1].body), /"image_url"/);
});

Deno.test("run: a provider that refuses image parts names LLM.vision: false as the remedy", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: "everything__get-tiny-image", arguments: {} }] },
      { status: 400, errorMessage: "image input is not supported by this model" },
    ],
  });
  const config = replConfig(box, llm);
  await writeConfig(box, { ...config, LLM: { ...config.LLM, vision: true } });
  const result = await runPatchbay(box, ["run", "--yes", "show me the tiny image"]);
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stderr, /The model refused a request with images/);
  assert.match(result.stderr, /"vision": false/);
});

Deno.test("run: attachments are stored with the conversation and sent again on --resume", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: "everything__get-tiny-image", arguments: {} }] },
      { text: "first" },
      { text: "second" },
    ],
  });
  const config = replConfig(box, llm);
  await writeConfig(box, { ...config, LLM: { ...config.LLM, vision: true } });
  const first = await runPatchbay(box, ["run", "--yes", `image and @everything:${DOC}`]);
  assert.equal(first.code, 0, first.stderr);
  const again = await runPatchbay(box, ["run", "and now?", "--resume"]);
  assert.equal(again.code, 0, again.stderr);
  const messages = llm.requests[2].body.messages;
  const firstUser = messages.find((m: { role: string }) => m.role === "user");
  assert.match(firstUser.content, /<resource server="everything" uri="demo:/);
  assert.match(JSON.stringify(messages), /data:image\/png;base64,iVBOR/);
});

Deno.test("run: with tool search the model gets find_tools, then the tools it found", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: "find_tools", arguments: { query: "sum of two numbers" } }] },
      { toolCalls: [{ name: "everything__get-sum", arguments: { a: 2, b: 3 } }] },
      { text: "5" },
    ],
  });
  await writeConfig(
    box,
    replConfig(box, llm, { AgentConfig: { tool_search: { mode: "always" } } }),
  );
  const result = await runPatchbay(box, ["run", "--yes", "add 2 and 3"]);
  assert.equal(result.code, 0, result.stderr);
  const names = (i: number) =>
    llm.requests[i].body.tools.map((t: { function: { name: string } }) => t.function.name);
  assert.deepEqual(names(0), ["find_tools"]);
  assert.match(llm.requests[0].body.tools[0].function.description, /tools from the servers/);
  assert.ok(names(1).includes("everything__get-sum"), names(1).join(", "));
  assert.ok(names(1).length < 10, names(1).join(", "));
  const found = llm.requests[1].body.messages.find((m: { role: string }) => m.role === "tool");
  assert.match(found.content, /everything__get-sum \(server everything\)/);
  // Named as what it is, patchbay's own tool, never an unknown server's.
  assert.match(
    found.content,
    /^<tool_output server="patchbay" tool="find_tools" trust="untrusted">\n/,
  );
  assert.doesNotMatch(found.content, /unknown/);
  assert.match(result.stderr, /Tool search: loaded [^\n]*everything__get-sum/);
  const sum = llm.requests[2].body.messages.filter((m: { role: string }) => m.role === "tool");
  assert.match(sum.at(-1).content, /The sum of 2 and 3 is 5/);
});
