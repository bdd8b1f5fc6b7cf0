import assert from "node:assert/strict";
import { convertToolResult } from "../../lib/agent/content.ts";
import {
  describeBinaries,
  STRUCTURED_BINARY_MIN_CHARS,
} from "../../lib/agent/structured_binary.ts";

/** base64 of 1,500 bytes: past the length at which a base64 string is taken for binary. */
const PNG = btoa("\x89PNG" + "x".repeat(1496));
const WAV = btoa("RIFF" + "y".repeat(2996));

Deno.test("server-filesystem's read_media_file: the image once, its copy in structuredContent not repeated", () => {
  const block = { type: "image" as const, data: PNG, mimeType: "image/png" };
  const result = convertToolResult({
    content: [block],
    structuredContent: { content: [block] },
  });
  assert.equal(result.text, "[image: image/png, 1.5 kB]");
  assert.equal(result.images.length, 1);
  assert.deepEqual(result.binaries, []);
});

Deno.test("binary values inside structured content are described, never passed on as text", () => {
  const result = convertToolResult({
    content: [{ type: "image", data: PNG, mimeType: "image/png" }],
    structuredContent: {
      screenshot: { mimeType: "image/png", data: PNG },
      thumbnail: `data:image/jpeg;base64,${btoa("j".repeat(1200))}`,
      recording: { mime_type: "audio/wav", blob: WAV },
      id: "a".repeat(40),
      note: "short text stays",
    },
  });
  assert.doesNotMatch(result.text, new RegExp(PNG.slice(0, 40)));
  assert.doesNotMatch(result.text, /base64,/);
  assert.match(
    result.text,
    /"screenshot":\{"mimeType":"image\/png","data":"\[image\/png, 1\.5 kB of base64 repeating a content block above\]"\}/,
  );
  assert.match(
    result.text,
    /"thumbnail":"\[image\/jpeg, 1\.2 kB of base64 left out of the text\]"/,
  );
  assert.match(result.text, /"blob":"\[audio\/wav, 3\.0 kB of base64 left out of the text\]"/);
  assert.match(result.text, /"id":"a{40}","note":"short text stays"/);
  // The distinct image joins the images (saved, offered to a vision model); the sound is
  // handed back to be saved; the repeated image is not counted twice.
  assert.deepEqual(result.images.map((i) => i.mimeType), ["image/png", "image/jpeg"]);
  assert.deepEqual(result.binaries.map((b) => [b.mimeType, b.bytes]), [["audio/wav", 3000]]);
});

Deno.test("audio blocks and binary resources are handed back to be saved; image resources are images", () => {
  const result = convertToolResult({
    content: [
      { type: "audio", data: WAV, mimeType: "audio/wav" },
      {
        type: "resource",
        resource: { uri: "file:///a.bin", blob: btoa("zz"), mimeType: "application/zip" },
      },
      { type: "resource", resource: { uri: "file:///a.png", blob: PNG, mimeType: "image/png" } },
    ],
  });
  assert.deepEqual(result.binaries.map((b) => b.mimeType), ["audio/wav", "application/zip"]);
  assert.equal(result.binaries[1].uri, "file:///a.bin");
  assert.deepEqual(result.images.map((i) => i.uri), ["file:///a.png"]);
});

Deno.test("what is not binary stays: short strings, text with spaces, base64 below the length", () => {
  const short = "QUJD".repeat(STRUCTURED_BINARY_MIN_CHARS / 4 - 1);
  const prose = "word ".repeat(400);
  const { value, binaries } = describeBinaries(
    { short, prose, nested: [[{ n: 1 }]] },
    new Set(),
    () => "described",
  );
  assert.deepEqual(value, { short, prose, nested: [[{ n: 1 }]] });
  assert.deepEqual(binaries, []);
});

Deno.test("each binary value is found where it is, with its type from a field beside it", () => {
  const { value, binaries } = describeBinaries(
    { items: [{ contentType: "application/pdf", payload: PNG }] },
    new Set([WAV]),
    (b) => `<${b.path}>`,
  );
  assert.deepEqual(value, {
    items: [{ contentType: "application/pdf", payload: "<items[0].payload>" }],
  });
  assert.deepEqual(binaries.map((b) => [b.path, b.mimeType, b.repeated]), [
    ["items[0].payload", "application/pdf", false],
  ]);
});
