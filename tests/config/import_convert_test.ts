/** Other clients' entries turned into patchbay's, with what was converted and left out. */

import assert from "node:assert/strict";
import { convertEntry } from "../../lib/config/import_convert.ts";

const places = { home: "/home/u", cwd: "/work" };
const plain = { dialect: "mcpServers" as const, inputs: {} };

Deno.test("an entry from another patchbay file keeps patchbay's own fields, timeout included", () => {
  const written = {
    transport_type: "stdio",
    command: "npx",
    roots: ["."],
    sampling: "deny",
    timeout: 90,
    trusted: true,
  };
  // Kept as written with --keep-trust (or from the person's own configuration)...
  const kept = convertEntry("fs", structuredClone(written), plain, places, { keepTrust: true });
  assert.deepEqual(kept.entry, written);
  assert.deepEqual(kept.dropped, []);
  assert.deepEqual(kept.trust.map((t) => t.shown), ["trusted: true", 'roots: ["."]']);
  // ...and by default without what widens trust; "sampling": "deny" narrows it, so it stays.
  const dropped = convertEntry("fs", structuredClone(written), plain, places);
  assert.deepEqual(dropped.entry, {
    transport_type: "stdio",
    command: "npx",
    sampling: "deny",
    timeout: 90,
  });
  assert.deepEqual(dropped.trust.map((t) => t.shown), ["trusted: true", 'roots: ["."]']);
});

Deno.test("a timeout of a client whose unit is unknown is left out, with why", () => {
  const converted = convertEntry("x", { command: "x", timeout: 5000 }, plain, places);
  assert.equal(converted.entry!.timeout, undefined);
  assert.match(converted.dropped[0], /^timeout: its unit is not known here/);
});

Deno.test("gemini-cli: a timeout beyond a day is left out rather than guessed", () => {
  const gemini = { dialect: "gemini" as const, inputs: {} };
  const converted = convertEntry("g", { httpUrl: "https://h/mcp", timeout: 1e9 }, gemini, places);
  assert.equal(converted.entry!.timeout, undefined);
  assert.match(converted.dropped[0], /timeout 1000000000 ms: outside 0 to one day/);
});

Deno.test("a bare url is streamable HTTP, or SSE when it ends in /sse, as patchbay reads one", () => {
  const read = (url: string) => convertEntry("r", { url }, plain, places).entry?.transport_type;
  assert.equal(read("https://h.example/mcp"), "streamable_http");
  assert.equal(read("https://h.example/sse"), "sse");
  assert.equal(read("https://h.example/v1/sse?team=a"), "sse");
  // A written type is kept as written.
  const typed = convertEntry("t", { type: "http", url: "https://h.example/sse" }, plain, places);
  assert.equal(typed.entry?.transport_type, "streamable_http");
});
