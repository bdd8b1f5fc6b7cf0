/**
 * The pure parts of mentions, attachments, images and tool search, and attachments in both
 * memory stores (the file store and a real redis-server).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { toChatMessages } from "../../lib/agent/history.ts";
import { toChatMessages as samplingMessages } from "../../lib/agent/sampling.ts";
import { findMentions } from "../../lib/agent/mentions.ts";
import { searchApplies, searchTools, ToolSearch } from "../../lib/agent/tool_search.ts";
import type { CatalogueTool } from "../../lib/connections/types.ts";
import { createEnvironment } from "../../lib/env.ts";
import { openMemory } from "../../lib/memory/mod.ts";
import type { StoredAttachment, StoredMessage } from "../../lib/memory/types.ts";
import { visionByModel } from "../../lib/providers.ts";
import { imageProtocol, inlineImage } from "../../lib/ui/inline_image.ts";
import { appendEach } from "../support/conversation.ts";
import { RedisServer } from "../support/redis.ts";
import { tempDir } from "../support/temp_dir.ts";

const SERVERS = ["everything", "docs", "docs-v2"];
const found = (text: string) => findMentions(text, SERVERS).map((m) => `${m.server}|${m.uri}`);

Deno.test("mentions: only @known-server: followed by a URI counts", () => {
  assert.deepEqual(found("read @everything:demo://a/b please"), ["everything|demo://a/b"]);
  assert.deepEqual(found("@docs:x"), ["docs|x"]);
  // E-mail addresses, handles, unknown servers, a colon followed by a space.
  assert.deepEqual(found("bob@everything:x and me@docs.com"), []);
  assert.deepEqual(found("thanks @alice, ask @bob:later"), []);
  assert.deepEqual(found("@nosuch:thing"), []);
  assert.deepEqual(found("@everything: hello"), []);
  assert.deepEqual(found("@everything:"), []);
});

Deno.test("mentions: brackets, trailing punctuation and server names that share a prefix", () => {
  assert.deepEqual(found("(see @docs:file:///a.md)."), ["docs|file:///a.md"]);
  assert.deepEqual(found('"@everything:demo://x/y?", she said'), ["everything|demo://x/y"]);
  assert.deepEqual(found("@docs-v2:guide @docs:guide"), ["docs-v2|guide", "docs|guide"]);
  const [mention] = findMentions("a @docs:u. b", SERVERS);
  assert.deepEqual([mention.start, mention.end], [2, 9]);
});

Deno.test("vision auto: decided by the model's name, DeepSeek never", () => {
  const cases: [Parameters<typeof visionByModel>, boolean][] = [
    [["openai", "gpt-4o-mini"], true],
    [["openai", "gpt-4.1"], true],
    [["openai", "o1-mini"], false],
    [["openai", "o3-mini"], false],
    [["openai", "o3"], true],
    [["openai", "gpt-3.5-turbo"], false],
    [["anthropic", "claude-3-5-sonnet-latest"], true],
    [["anthropic", "claude-sonnet-4-5"], true],
    [["gemini", "gemini-2.0-flash"], true],
    [["openrouter", "meta-llama/llama-3.2-11b-vision-instruct"], true],
    [["ollama", "llava:13b"], true],
    [["ollama", "qwen2.5vl:7b"], true],
    [["ollama", "llama3.1"], false],
    [["deepseek", "deepseek-vision-anything"], false],
    [["groq", "llama-3.3-70b-versatile"], false],
    [["openai-compatible", "scripted-model"], false],
  ];
  for (const [[provider, model], expected] of cases) {
    assert.equal(visionByModel(provider, model), expected, `${provider}/${model}`);
  }
});

const PNG = "iVBORw0KGgo=";
const image = (server = "everything"): StoredAttachment => ({
  server,
  kind: "image",
  mimeType: "image/png",
  data: PNG,
  bytes: 8,
});
const at = "2026-01-01T00:00:00.000Z";

Deno.test("attachments: a step's tool images follow all of its results; without vision, a note", () => {
  const history: StoredMessage[] = [
    { role: "user", content: "go", timestamp: at },
    {
      role: "assistant",
      content: null,
      toolCalls: [{ id: "a", name: "s__t", arguments: "{}" }, {
        id: "b",
        name: "s__u",
        arguments: "{}",
      }],
      timestamp: at,
    },
    {
      role: "tool",
      content: "[image: image/png, 8 B]",
      toolCallId: "a",
      server: "s",
      tool: "t",
      attachments: [image("s")],
      timestamp: at,
    },
    { role: "tool", content: "done", toolCallId: "b", server: "s", tool: "u", timestamp: at },
  ];
  const seen = toChatMessages(history, { vision: true });
  assert.deepEqual(seen.map((m) => m.role), ["user", "assistant", "tool", "tool", "user"]);
  const last = seen.at(-1)!;
  assert.ok(Array.isArray(last.content));
  assert.deepEqual(last.content.filter((p) => p.type === "image"), [{
    type: "image",
    mimeType: "image/png",
    data: PNG,
  }]);
  const blind = toChatMessages(history, { vision: false });
  assert.deepEqual(blind.map((m) => m.role), ["user", "assistant", "tool", "tool"]);
  assert.match(blind[2].content as string, /an image was returned \(image: image\/png, 8 B\)/);
});

Deno.test("attachments: only the most recent images are sent; old messages load unchanged", () => {
  const history: StoredMessage[] = [1, 2, 3].map((n) => ({
    role: "user" as const,
    content: `m${n}`,
    attachments: [{ ...image(), uri: `demo://${n}` }],
    timestamp: at,
  }));
  const seen = toChatMessages(history, { vision: true, maxImages: 2 });
  assert.equal(typeof seen[0].content, "string");
  assert.match(seen[0].content as string, /not passed to the model/);
  assert.ok(Array.isArray(seen[1].content) && Array.isArray(seen[2].content));
  const old: StoredMessage = { role: "user", content: "plain", timestamp: at };
  assert.deepEqual(toChatMessages([old], { vision: true }), [{ role: "user", content: "plain" }]);
});

const tool = (server: string, name: string, description: string): CatalogueTool => ({
  name: `${server}__${name}`,
  server,
  originalName: name,
  description,
  inputSchema: { type: "object", properties: {} },
});

Deno.test("tool search: thresholds, ranking, and what each request offers", () => {
  const catalogue = [
    tool("github", "create_issue", "Create an issue"),
    tool("everything", "get-sum", "Returns the sum of two numbers"),
    tool("files", "read_file", "Read a file"),
  ];
  const auto = { mode: "auto" as const, maxTools: 2, maxTokens: 100_000 };
  assert.ok(searchApplies(catalogue, auto));
  assert.ok(!searchApplies(catalogue, { ...auto, maxTools: 3 }));
  assert.ok(searchApplies(catalogue, { ...auto, maxTools: 3, maxTokens: 10 }));
  assert.ok(!searchApplies(catalogue, { ...auto, mode: "never", maxTools: 0 }));
  assert.deepEqual(searchTools("sum numbers", catalogue).map((t) => t.name), [
    "everything__get-sum",
  ]);
  assert.deepEqual(
    searchTools("github.create_issue", catalogue).map((t) => t.name)[0],
    [
      "github__create_issue",
    ][0],
  );
  const search = new ToolSearch({ ...auto, mode: "always" });
  assert.deepEqual(search.definitions(catalogue).map((d) => d.name), ["find_tools"]);
  const result = search.run('{"query": "read a file"}', catalogue);
  assert.match(result.text, /files__read_file \(server files\)/);
  const first = search.definitions(catalogue).map((d) => d.name);
  assert.deepEqual(first, ["find_tools", ...search.lastFound]);
  assert.ok(search.loaded.has("files__read_file"));
  // A later search adds its tools after the ones loaded before (a prompt cache keeps those).
  // (github's tool comes first in the catalogue, yet after read_file here.)
  search.run('{"query": "github.create_issue"}', catalogue);
  const second = search.definitions(catalogue).map((d) => d.name);
  assert.deepEqual(second.slice(0, first.length), first);
  assert.deepEqual(second.slice(first.length), ["github__create_issue"]);
  assert.equal(search.run("{", catalogue).isError, true);
  search.clear();
  assert.deepEqual(search.definitions(catalogue).map((d) => d.name), ["find_tools"]);
});

Deno.test("inline images: kitty draws PNG in chunks, iTerm2 any type; none inside tmux", () => {
  const env = (vars: Record<string, string>) => (name: string) => vars[name];
  assert.equal(imageProtocol(env({ TERM: "xterm-kitty" })), "kitty");
  assert.equal(imageProtocol(env({ TERM_PROGRAM: "iTerm.app" })), "iterm2");
  assert.equal(imageProtocol(env({ TERM_PROGRAM: "iTerm.app", TMUX: "/tmp/x" })), undefined);
  assert.equal(imageProtocol(env({ TERM: "xterm-256color" })), undefined);
  const big = "A".repeat(5000);
  const kitty = inlineImage("kitty", "image/png", big)!;
  assert.equal(
    kitty,
    `\x1b_Ga=T,f=100,m=1;${"A".repeat(4096)}\x1b\\\x1b_Gm=0;${"A".repeat(904)}\x1b\\\n`,
  );
  assert.equal(inlineImage("kitty", "image/jpeg", big), undefined);
  assert.ok(
    inlineImage("iterm2", "image/jpeg", PNG)!.startsWith("\x1b]1337;File=inline=1;size=9;"),
  );
  assert.equal(inlineImage("iterm2", "image/png", "not base64!\x1b"), undefined);
});

const withAttachments: StoredMessage[] = [
  {
    role: "user",
    content: "see @everything:demo://doc",
    attachments: [{ server: "everything", uri: "demo://doc", kind: "text", text: "hello" }],
    timestamp: at,
  },
  {
    role: "assistant",
    content: null,
    toolCalls: [{ id: "c1", name: "e__img", arguments: "{}" }],
    timestamp: at,
  },
  {
    role: "tool",
    content: "[image: image/png, 8 B]",
    toolCallId: "c1",
    server: "everything",
    tool: "img",
    attachments: [{ ...image(), path: "/tmp/x.png" }],
    timestamp: at,
  },
  { role: "assistant", content: "ok", timestamp: at },
];

Deno.test("memory: attachments round-trip in the file store and in Redis", async () => {
  await using dir = await tempDir();
  const settings = { backend: "file" as const, keyPrefix: "patchbay" };
  const files = await openMemory(settings, createEnvironment({}), { dataDir: dir.path });
  const session = files.newSession();
  await appendEach(session, withAttachments, "written");
  await files.close();
  const again = await openMemory(settings, createEnvironment({}), { dataDir: dir.path });
  assert.deepEqual((await again.resume(session.id)).messages, withAttachments);
  await again.close();

  await using redis = await RedisServer.start();
  const redisSettings = { backend: "redis" as const, keyPrefix: "patchbay" };
  const first = await openMemory(redisSettings, createEnvironment(redis.env), {
    dataDir: join(dir.path, "r"),
  });
  const stored = first.newSession();
  await appendEach(stored, withAttachments, "written");
  await first.close();
  const second = await openMemory(redisSettings, createEnvironment(redis.env), {
    dataDir: join(dir.path, "r"),
  });
  assert.deepEqual((await second.resume(stored.id)).messages, withAttachments);
  await second.close();
});

Deno.test("sampling: a server's image is an image part for a vision model, else described", () => {
  const params = {
    messages: [{
      role: "user" as const,
      content: [{ type: "text" as const, text: "what is this?" }, {
        type: "image" as const,
        mimeType: "image/png",
        data: PNG,
      }],
    }],
    maxTokens: 10,
  };
  assert.deepEqual(samplingMessages(params, true), [{
    role: "user",
    content: [{ type: "text", text: "what is this?" }, {
      type: "image",
      mimeType: "image/png",
      data: PNG,
    }],
  }]);
  assert.deepEqual(samplingMessages(params, false), [{
    role: "user",
    content: "what is this?\n[image: image/png, 8 B]",
  }]);
});
