/**
 * Interop with popular MCP servers nobody here wrote, pinned in `tests/support/deps.ts`
 * and run offline: mcp-fetch-server, server-memory, server-sequential-thinking and
 * @playwright/mcp (driving Debian's Chromium), beside server-everything and
 * server-filesystem. One interactive session starts each server once; it connects to every
 * one, lists, calls a tool of each through `/call`, and checks that nothing breaks:
 *
 * - mcp-fetch-server declares resources but answers `resources/list` with -32601: it
 *   connects, its tools work, and the list it cannot serve is a warning (issue 38, 1);
 * - server-filesystem's `read_media_file` repeats its image inside `structuredContent`:
 *   the image is named once, no base64 reaches the screen or the model, and it is saved
 *   (2, 4); @playwright/mcp's screenshot from `/call` is saved and `/image` shows it (4);
 * - `/resource server:uri` reads like `@server:uri` (8).
 *
 * No wall-clock assertion: every wait is bounded and says what it waited for.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { sandbox, writeConfig } from "../support/cli.ts";
import {
  everythingEntry,
  fetchEntry,
  filesystemEntry,
  memoryEntry,
  NODE,
  playwrightArgs,
  thinkingEntry,
} from "../support/deps.ts";
import { startRepl } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";

/** A PNG signature and 8 kB after it: server-filesystem sends it as `image/png`. */
function pngFile(): Uint8Array {
  const bytes = new Uint8Array(8192);
  crypto.getRandomValues(bytes);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return bytes;
}

/** The longest run of base64 characters in `text` (an image leaking as text is thousands). */
function longestBase64(text: string): number {
  return Math.max(0, ...(text.match(/[A-Za-z0-9+/]{40,}={0,2}/g) ?? []).map((s) => s.length));
}

Deno.test("third-party servers in one session: each connects, lists and answers /call; nothing breaks", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  const page = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("<h1>patchbay interop</h1>", { headers: { "content-type": "text/html" } }),
  );
  await using _page = { [Symbol.asyncDispose]: () => page.shutdown() };
  await Deno.writeFile(join(box.cwd, "photo.png"), pngFile());
  await writeConfig(box, {
    LLM: {
      provider: "openai-compatible",
      model: "scripted-model",
      base_url: llm.baseUrl,
      vision: true,
    },
    mcpServers: {
      fetch: { command: NODE, args: [fetchEntry()] },
      memory: {
        command: NODE,
        args: [memoryEntry()],
        env: { MEMORY_FILE_PATH: join(box.home, "memory.jsonl") },
      },
      thinking: { command: NODE, args: [thinkingEntry()] },
      playwright: { command: NODE, args: playwrightArgs(join(box.home, "playwright")) },
      filesystem: { command: NODE, args: [filesystemEntry(), box.cwd] },
      everything: { command: NODE, args: [everythingEntry(), "stdio"] },
    },
  });
  await using repl = await startRepl(box, { args: ["--yes"] });

  // Every server connected, mcp-fetch-server with the list it cannot serve as a warning.
  const block = await repl.tmux.screen();
  assert.match(block, /^Servers {2}6 of 6 servers connected/m, block);
  for (const name of ["fetch", "memory", "thinking", "playwright", "filesystem", "everything"]) {
    assert.match(block, new RegExp(`✓ ${name} +connected`), block);
  }
  const connections = await repl.send("/connections", /6 of 6 servers connected[\s\S]*everything/);
  assert.match(
    connections,
    /✓ fetch +connected +stdio +6 tools, 0 prompts, 0 resources\n +warning: the server declares resources but answered resources\/list and resources\/templates\/list with an error \(Method not found, code -32601\)/,
  );
  const tools = await repl.send("/tools", /everything \(\d+ tools\)/);
  for (
    const [name, tool] of [
      ["fetch", "fetch_html"],
      ["memory", "create_entities"],
      ["thinking", "sequentialthinking"],
      ["playwright", "browser_take_screenshot"],
      ["filesystem", "read_media_file"],
    ]
  ) {
    assert.match(tools, new RegExp(`^${name} \\(\\d+ tools?\\)`, "m"), tools);
    assert.match(tools, new RegExp(tool), tools);
  }

  // A tool of each: the knowledge graph keeps what it was given; a thought is recorded.
  await repl.send(
    '/call memory.create_entities {"entities": [{"name": "patchbay", "entityType": "client", "observations": ["speaks MCP"]}]}',
    /✓ memory › create_entities/,
  );
  const graph = await repl.send("/call memory.read_graph {}", /✓ memory › read_graph[\s\S]*\n›$/);
  assert.match(graph, /speaks MCP/);
  const thought = await repl.send(
    '/call thinking.sequentialthinking {"thought": "check interop", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": false}',
    /✓ thinking › sequentialthinking[\s\S]*\n›$/,
  );
  assert.match(thought, /"thoughtNumber": ?1/);
  // mcp-fetch-server refuses loopback addresses itself: its refusal is named as its own.
  const refused = await repl.send(
    `/call fetch.fetch_html {"url": "http://127.0.0.1:${page.addr.port}/"}`,
    /remedy:/,
  );
  assert.match(refused, /✗ error fetch › fetch_html/);
  assert.match(refused, /server 'fetch' reported: .*blocked request to private address/);

  // An image named once, saved, never printed as base64; /image shows it.
  const media = await repl.send(
    `/call filesystem.read_media_file {"path": "${join(box.cwd, "photo.png")}"}`,
    /✓ filesystem › read_media_file[\s\S]*\n›$/,
  );
  assert.match(media, /Image from filesystem › read_media_file saved to \S+\.png/);
  assert.match(media, /\[image: image\/png, 8\.2 kB\]/);
  assert.doesNotMatch(media, /Structured content/);
  assert.ok(longestBase64(media) < 100, media);
  const shownMedia = await repl.send("/image", /filesystem: image\/png/);
  assert.match(shownMedia, /filesystem: image\/png, 8\.2 kB saved to \S+\.png/);

  // @playwright/mcp: a page on loopback, its screenshot saved and shown by /image.
  await repl.send(
    `/call playwright.browser_navigate {"url": "http://127.0.0.1:${page.addr.port}/"}`,
    /✓ playwright › browser_navigate[\s\S]*\n›$/,
    60_000,
  );
  const shot = await repl.send(
    "/call playwright.browser_take_screenshot {}",
    /✓ playwright › browser_take_screenshot[\s\S]*\n›$/,
    60_000,
  );
  const saved = /Image from playwright › browser_take_screenshot saved to (\S+\.png)/.exec(shot);
  assert.ok(saved, shot);
  assert.deepEqual([...(await Deno.readFile(saved[1])).slice(1, 4)], [0x50, 0x4e, 0x47]);
  const shown = await repl.send("/image", /playwright: image\/png/);
  assert.match(shown, new RegExp(`saved to ${saved[1].replaceAll(".", "\\.")}`));
  const before = await repl.send("/image 2", /filesystem: image\/png/);
  assert.match(before, /filesystem: image\/png, 8\.2 kB/);

  // `/resource server:uri`, as `@server:uri` in a message.
  const doc = await repl.send(
    "/resource everything:demo://resource/static/document/architecture.md",
    /\n›$/,
  );
  assert.match(doc, /demo:\/\/resource\/static\/document\/architecture\.md \(text\/markdown\)/);

  // In a model turn the image goes once, as an image part; the tool message is words only.
  llm.enqueue({
    toolCalls: [{
      name: "filesystem__read_media_file",
      arguments: { path: join(box.cwd, "photo.png") },
    }],
  }, { text: "Seen." });
  await repl.send("look at the photo", "Seen.");
  const messages = llm.requests.at(-1)!.body.messages as {
    role: string;
    content: string | { type: string }[];
  }[];
  const toolMessage = messages.find((m) => m.role === "tool")!;
  assert.match(String(toolMessage.content), /^\[image: image\/png, 8\.2 kB\]$/m);
  assert.doesNotMatch(String(toolMessage.content), /Structured content|cut here/);
  assert.ok(longestBase64(String(toolMessage.content)) < 100, String(toolMessage.content));
  const imageParts = messages.flatMap((m) => Array.isArray(m.content) ? m.content : [])
    .filter((part) => part.type === "image_url");
  assert.equal(imageParts.length, 1);

  await repl.tmux.submit("/exit");
  assert.equal(await repl.tmux.exitCode(30_000), 0);
  assert.deepEqual(await repl.leftoverProcesses(), [], "a server or its browser outlived patchbay");
});
