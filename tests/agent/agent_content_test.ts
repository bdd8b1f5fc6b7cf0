/** Pure tests of MCP content conversion and the output cap. */

import assert from "node:assert/strict";
import type { CallToolResult } from "@modelcontextprotocol/client";
import {
  base64Bytes,
  capText,
  convertToolResult,
  formatBytes,
  TOOL_OUTPUT_MAX_CHARS,
} from "../../lib/agent/content.ts";

const PNG_1K = btoa("x".repeat(1500));

Deno.test("text blocks pass through, joined by newlines", () => {
  const result = convertToolResult({
    content: [{ type: "text", text: "one" }, { type: "text", text: "two" }],
  });
  assert.deepEqual(result, {
    text: "one\ntwo",
    isError: false,
    omittedChars: 0,
    mediaItems: 0,
    images: [],
    binaries: [],
  });
});

/** Content that is described rather than passed on: what the model reads instead. */
const described: {
  name: string;
  content: CallToolResult["content"];
  text: string;
  /** The media items counted, where the test checks them. */
  mediaItems?: number;
}[] = [
  {
    name: "images and audio are described by type and size in the text",
    content: [
      { type: "image", data: PNG_1K, mimeType: "image/png" },
      { type: "audio", data: btoa("abc"), mimeType: "audio/wav" },
    ],
    text: "[image: image/png, 1.5 kB]\n" +
      "[audio: audio/wav, 3 B; not passed to the model]",
    mediaItems: 2,
  },
  {
    name: "resource links name their URI, type, size and description",
    content: [{
      type: "resource_link",
      uri: "file:///tmp/report.pdf",
      name: "report.pdf",
      title: "Quarterly report",
      mimeType: "application/pdf",
      size: 2_500_000,
      description: "Q3 numbers",
    }],
    text: "[resource link: Quarterly report (report.pdf) <file:///tmp/report.pdf> " +
      "application/pdf, 2.5 MB: Q3 numbers]",
  },
  {
    name: "embedded text resources are included; binary ones described",
    content: [
      {
        type: "resource",
        resource: { uri: "test://static/1", mimeType: "text/plain", text: "Hello resource" },
      },
      {
        type: "resource",
        resource: {
          uri: "test://static/2",
          mimeType: "application/octet-stream",
          blob: btoa("12345678"),
        },
      },
    ],
    text: "[resource <test://static/1> (text/plain)]\nHello resource\n" +
      "[binary resource <test://static/2> (application/octet-stream), 8 B; not passed to the model]",
    mediaItems: 1,
  },
];

for (const { name, content, text, mediaItems } of described) {
  Deno.test(name, () => {
    const result = convertToolResult({ content });
    assert.equal(result.text, text);
    if (mediaItems !== undefined) assert.equal(result.mediaItems, mediaItems);
  });
}

Deno.test("images of image blocks and embedded image resources are handed back apart", () => {
  const result = convertToolResult({
    content: [
      { type: "image", data: PNG_1K, mimeType: "image/png" },
      {
        type: "resource",
        resource: { uri: "shot://1", mimeType: "image/jpeg", blob: btoa("jpg") },
      },
      { type: "resource", resource: { uri: "bin://1", mimeType: "application/zip", blob: "AA==" } },
    ],
  });
  assert.deepEqual(result.images.map((i) => [i.mimeType, i.bytes, i.uri]), [
    ["image/png", 1500, undefined],
    ["image/jpeg", 3, "shot://1"],
  ]);
  assert.match(result.text, /\[image resource <shot:\/\/1> \(image\/jpeg\), 3 B\]/);
  assert.equal(result.mediaItems, 3);
});

Deno.test("structured content is added unless the text already carries it", () => {
  const weather = { temperature: 22.5, conditions: "Sunny", humidity: 40 };
  const repeated = convertToolResult({
    content: [{ type: "text", text: JSON.stringify(weather, null, 2) }],
    structuredContent: weather,
  });
  assert.equal(repeated.text, JSON.stringify(weather, null, 2));
  const wrapped = convertToolResult({
    content: [{ type: "text", text: "alpha\nbeta\n" }],
    structuredContent: { content: "alpha\nbeta\n" },
  });
  assert.equal(wrapped.text, "alpha\nbeta\n");
  const extra = convertToolResult({
    content: [{ type: "text", text: "See the data." }],
    structuredContent: { rows: [1, 2] },
  });
  assert.equal(extra.text, 'See the data.\nStructured content (JSON): {"rows":[1,2]}');
  const only = convertToolResult({ content: [], structuredContent: { ok: true } });
  assert.equal(only.text, 'Structured content (JSON): {"ok":true}');
});

Deno.test("isError is carried, empty results are said to be empty, unknown types named", () => {
  const error = convertToolResult({ content: [{ type: "text", text: "boom" }], isError: true });
  assert.equal(error.isError, true);
  assert.equal(convertToolResult({ content: [] }).text, "(the tool returned no content)");
  const odd = convertToolResult({ content: [{ type: "video" }] } as unknown as CallToolResult);
  assert.equal(odd.text, '[content of type "video" omitted]');
});

Deno.test("long output keeps head and tail and says how much was cut", () => {
  const text = "H".repeat(30_000) + "T".repeat(30_000);
  const result = convertToolResult({ content: [{ type: "text", text }] });
  assert.equal(result.omittedChars, 60_000 - TOOL_OUTPUT_MAX_CHARS);
  assert.ok(result.text.startsWith("H".repeat(15_000) + "\n[… 40,000 of 60,000 characters cut"));
  assert.ok(result.text.endsWith("characters …]\n" + "T".repeat(5_000)));
  assert.match(result.text, /tool output is capped at 20,000 characters/);
});

Deno.test("the cap never splits a surrogate pair", () => {
  const text = "😀".repeat(100);
  const { text: capped } = capText(text, 51);
  assert.ok(!/[\ud800-\udbff](?![\udc00-\udfff])/.test(capped), "no lone high surrogate");
  assert.ok(!/(?<![\ud800-\udbff])[\udc00-\udfff]/.test(capped), "no lone low surrogate");
  assert.deepEqual(capText("short", 10), { text: "short", omittedChars: 0 });
});

Deno.test("sizes of base64 data and their wording", () => {
  assert.equal(base64Bytes(btoa("a")), 1);
  assert.equal(base64Bytes(btoa("ab")), 2);
  assert.equal(base64Bytes(btoa("abc")), 3);
  assert.equal(formatBytes(999), "999 B");
  assert.equal(formatBytes(1500), "1.5 kB");
  assert.equal(formatBytes(3_200_000), "3.2 MB");
});
