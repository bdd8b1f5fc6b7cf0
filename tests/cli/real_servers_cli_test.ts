/**
 * What real third-party servers did to the scripting commands (issue 38), each through
 * `deno task start` against the server that showed it:
 *
 * - mcp-fetch-server's `resources/list` -32601 is a warning in `tools --json`, the doctor
 *   and the trace, never a failed server (1);
 * - server-filesystem's `read_media_file` prints no base64 from `call`, saves the image,
 *   and reaches the model in `run` as words and one image part (2, 4);
 * - server-everything's sampling tool is not offered to `call`, and a refusal of
 *   patchbay's in `run` is worded as patchbay's (3); its blob prompt is described (5);
 *   `read server:uri`, `resources <server>` and `prompts <server>` (8);
 * - server-filesystem that cannot start: `mcp list --check` shows its failure once (6), the
 *   doctor's cause points at the stderr lines it shows, and `tools --json` has them (7).
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { everythingEntry, fetchEntry, filesystemEntry, NODE } from "../support/deps.ts";
import { runDoctor } from "../support/doctor.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";

const LLM = { provider: "openai", model: "gpt-4o-mini" };

/** A PNG signature and 8 kB after it: server-filesystem sends it as `image/png`. */
async function writePng(path: string): Promise<Uint8Array> {
  const bytes = new Uint8Array(8192);
  crypto.getRandomValues(bytes);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  await Deno.writeFile(path, bytes);
  return bytes;
}

/** The longest run of base64 characters in `text` (an image leaking as text is thousands). */
function longestBase64(text: string): number {
  return Math.max(0, ...(text.match(/[A-Za-z0-9+/]{40,}={0,2}/g) ?? []).map((s) => s.length));
}

Deno.test("mcp-fetch-server's unservable resources: connected, a warning in tools --json, the doctor and the trace", async () => {
  await using box = await sandbox({ LLM_API_KEY: "sk-test-key-0123456789" });
  await writeConfig(box, { LLM, mcpServers: { fetch: { command: NODE, args: [fetchEntry()] } } });
  const trace = join(box.home, "trace.jsonl");
  const listed = await runPatchbay(box, ["--trace", trace, "tools", "fetch", "--json"]);
  assert.equal(listed.code, 0, listed.stderr);
  const json = JSON.parse(listed.stdout);
  assert.equal(json.servers[0].state, "connected");
  assert.deepEqual(json.servers[0].warnings, [
    "the server declares resources but answered resources/list and resources/templates/list " +
    "with an error (Method not found, code -32601): it is treated as having no resources and " +
    "no resource templates",
  ]);
  assert.ok(json.tools.some((t: { tool: string }) => t.tool === "fetch_html"), listed.stdout);

  const shown = await runPatchbay(box, ["trace", "show", trace]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /fetch +· +warning warning=the server declares resources but/);

  const doctor = await runDoctor(box, ["--offline"]);
  const check = doctor.check("server:fetch");
  assert.equal(check.status, "warn");
  assert.match(
    check.finding,
    /connected over stdio .* offers 6 tools.*; the server declares resources/,
  );
  assert.match(check.remedy ?? "", /nothing to fix in patchbay/);
});

Deno.test("read_media_file from call: the image named once and saved, no base64; run sends it once", async () => {
  await using llm = await startScriptedLlm();
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  const png = join(box.cwd, "photo.png");
  const bytes = await writePng(png);
  await writeConfig(box, {
    LLM: {
      provider: "openai-compatible",
      model: "scripted-model",
      base_url: llm.baseUrl,
      vision: true,
    },
    mcpServers: { fs: { command: NODE, args: [filesystemEntry(), box.cwd] } },
  });
  const called = await runPatchbay(box, [
    "call",
    "fs.read_media_file",
    JSON.stringify({ path: png }),
  ]);
  assert.equal(called.code, 0, called.stderr);
  assert.equal(called.stdout.trim(), "[image: image/png, 8.2 kB]");
  const saved = /^Image from fs › read_media_file saved to (\S+\.png)$/m.exec(called.stderr);
  assert.ok(saved, called.stderr);
  assert.deepEqual(await Deno.readFile(saved[1]), bytes);

  const json = JSON.parse(
    (await runPatchbay(box, [
      "call",
      "--json",
      "fs.read_media_file",
      JSON.stringify({ path: png }),
    ]))
      .stdout,
  );
  assert.deepEqual(json.saved, [{
    kind: "image",
    mime_type: "image/png",
    bytes: 8192,
    path: saved[1],
  }]);

  llm.enqueue(
    { toolCalls: [{ name: "fs__read_media_file", arguments: { path: png } }] },
    { text: "A photo." },
  );
  const ran = await runPatchbay(box, ["--yes", "run", "describe photo.png"]);
  assert.equal(ran.code, 0, ran.stderr);
  assert.match(ran.stderr, /Image from fs › read_media_file saved to /);
  const messages = llm.requests.at(-1)!.body.messages as {
    role: string;
    content: string | { type: string }[];
  }[];
  const tool = String(messages.find((m) => m.role === "tool")!.content);
  assert.match(tool, /\[image: image\/png, 8\.2 kB\]/);
  assert.ok(longestBase64(tool) < 100, tool);
  assert.doesNotMatch(tool, /characters cut here/);
  const parts = messages.flatMap((m) => Array.isArray(m.content) ? m.content : []);
  assert.equal(parts.filter((p) => p.type === "image_url").length, 1);
});

Deno.test("sampling: call does not offer it (the tool is absent, said why); run's refusal reads as patchbay's", async () => {
  await using llm = await startScriptedLlm();
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: {
      everything: { command: NODE, args: [everythingEntry(), "stdio"], sampling: "deny" },
    },
  });
  const called = await runPatchbay(box, [
    "call",
    "everything.trigger-sampling-request",
    '{"prompt": "hi"}',
  ]);
  assert.equal(called.code, 2, called.stderr);
  assert.match(called.stderr, /Unknown tool: everything\.trigger-sampling-request/);
  assert.match(called.stderr, /`call` loads no model, so it does not offer servers sampling/);
  assert.doesNotMatch(called.stderr, /no language model is attached/);

  llm.enqueue(
    {
      toolCalls: [{
        name: "everything__trigger-sampling-request",
        arguments: { prompt: "hi" },
      }],
    },
    { text: "It was refused." },
  );
  const ran = await runPatchbay(box, ["--yes", "run", "sample something"]);
  assert.equal(ran.code, 0, ran.stderr);
  assert.match(
    ran.stderr,
    /patchbay refused the sampling request server 'everything' made during the call, so the tool could not finish \(the refusal is patchbay's/,
  );
  assert.match(
    ran.stderr,
    /remedy: set "sampling" to "ask" \(or "allow"\) in the entry of 'everything'/,
  );
  assert.doesNotMatch(ran.stderr, /server's own message/);
});

Deno.test("server-everything by name: a blob in a prompt described, read server:uri, resources and prompts of one server", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await writeConfig(box, {
    LLM,
    mcpServers: {
      everything: { command: NODE, args: [everythingEntry(), "stdio"] },
      fs: { command: NODE, args: [filesystemEntry(), box.cwd] },
    },
  });
  const prompt = await runPatchbay(box, [
    "prompt",
    "everything.resource-prompt",
    "resourceType=Blob",
    "resourceId=1",
  ]);
  assert.equal(prompt.code, 0, prompt.stderr);
  assert.match(
    prompt.stdout,
    /\[binary resource <demo:\/\/resource\/dynamic\/blob\/1> \(\S+\), \d+ B; not passed to the model\]/,
  );

  const read = await runPatchbay(box, [
    "read",
    "everything:demo://resource/static/document/architecture.md",
  ]);
  assert.equal(read.code, 0, read.stderr);
  assert.match(read.stdout, /^# /m);

  const resources = await runPatchbay(box, ["resources", "everything"]);
  assert.equal(resources.code, 0, resources.stderr);
  assert.match(resources.stdout, /^everything \(\d+ resources?\)/m);
  assert.doesNotMatch(resources.stdout, /^fs /m);
  const prompts = await runPatchbay(box, ["prompts", "everything", "--json"]);
  assert.equal(prompts.code, 0, prompts.stderr);
  const names = JSON.parse(prompts.stdout).servers.map((s: { name: string }) => s.name);
  assert.deepEqual(names, ["everything"], "only the server named is connected");
});

Deno.test("server-filesystem that cannot start: mcp list --check once, the doctor's stderr where it says, tools --json's stderr", async () => {
  await using box = await sandbox({ LLM_API_KEY: "sk-test-key-0123456789" });
  await writeConfig(box, {
    LLM,
    mcpServers: { files: { command: NODE, args: [filesystemEntry(), join(box.home, "missing")] } },
  });
  const stderrLine = "Error: None of the specified directories are accessible";
  const check = await runPatchbay(box, ["mcp", "list", "--check"]);
  assert.equal(check.code, 1, check.stderr);
  const both = check.stdout + check.stderr;
  assert.equal(both.split("error: Failed to connect to server 'files'").length - 1, 1, both);
  assert.equal(both.split(`stderr: ${stderrLine}`).length - 1, 1, both);

  const doctor = await runDoctor(box, ["--offline"]);
  const files = doctor.check("server:files");
  assert.equal(files.status, "fail");
  assert.match(files.finding, /\(its last stderr lines are shown with this error\)/);
  assert.ok(files.details.includes(`stderr: ${stderrLine}`), files.details.join("\n"));
  const text = await runPatchbay(box, ["doctor", "--offline"]);
  const lines = text.stdout.split("\n");
  const at = lines.findIndex((line) => /server:files/.test(line));
  assert.ok(at >= 0 && lines.slice(at + 1).some((l) => l.includes(stderrLine)), text.stdout);

  const tools = await runPatchbay(box, ["tools", "files", "--json"]);
  assert.equal(tools.code, 1);
  const error = JSON.parse(tools.stdout).servers[0].error;
  assert.ok(error.stderr.includes(stderrLine), JSON.stringify(error));
  assert.match(error.remedy, /run the command by hand to see why/);
});
