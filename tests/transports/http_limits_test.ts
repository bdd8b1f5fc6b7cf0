/**
 * The message cap on streamable HTTP and SSE, against a hostile server on loopback: an
 * endless `data:` line during a tool call used to keep patchbay at 90 % CPU and up to 1 GB
 * of memory until the tool timeout. Now the same 10 MB cap as a stdio line applies: that
 * server fails with the cause, nothing more is read, and the other servers keep working.
 * Also the event-stream framing: a `\r\n` split between two chunks is one line break.
 *
 * @module
 */

import assert from "node:assert/strict";
import { ConnectionManager } from "../../lib/connections/manager.ts";
import type { ServerConfig } from "../../lib/config/types.ts";
import { EventStreamScanner, type StreamEvent } from "../../lib/transports/event_stream.ts";
import { MAX_MESSAGE_BYTES } from "../../lib/transports/limits.ts";
import { type FloodKind, startHostileHttp } from "../fixtures/hostile_http_server.ts";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { fixtureEntry, httpEntry, RecordingLog } from "../support/servers.ts";

const encoder = new TextEncoder();
const CAP_MESSAGE = /sent a message of more than 10 MB/;
/**
 * What may be in flight when the cap trips (the cap, socket buffers, one chunk): far below
 * the hundreds of megabytes an unbounded read reached before the tool timeout.
 */
const READ_BOUND = 4 * MAX_MESSAGE_BYTES;

function scan(chunks: string[]): StreamEvent[] {
  const events: StreamEvent[] = [];
  const scanner = new EventStreamScanner((event) => events.push(event));
  for (const chunk of chunks) assert.equal(scanner.push(encoder.encode(chunk)), undefined);
  return events;
}

const STREAM = "event: endpoint\r\ndata: /messages?session=abc\r\n\r\n" +
  ": keep-alive\r\n\r\n" +
  'id: 7\r\nevent: message\r\ndata: {"a":1}\r\ndata: line two\r\n\r\n' +
  "retry: 1000\ndata: lf only\n\n" +
  "data: cr only\r\rdata: last\n\n";

const EXPECTED: StreamEvent[] = [
  { event: "endpoint", data: "/messages?session=abc", id: undefined },
  { event: "message", data: '{"a":1}\nline two', id: "7" },
  { event: "message", data: "lf only", id: undefined },
  { event: "message", data: "cr only", id: undefined },
  { event: "message", data: "last", id: undefined },
];

Deno.test("a line break split between two chunks (\\r | \\n) is one line break, at every split", () => {
  assert.deepEqual(scan([STREAM]), EXPECTED);
  for (let at = 1; at < STREAM.length; at++) {
    assert.deepEqual(scan([STREAM.slice(0, at), STREAM.slice(at)]), EXPECTED, `split at ${at}`);
  }
  for (let size = 1; size <= 5; size++) {
    const pieces: string[] = [];
    for (let i = 0; i < STREAM.length; i += size) pieces.push(STREAM.slice(i, i + size));
    assert.deepEqual(scan(pieces), EXPECTED, `pieces of ${size}`);
  }
});

Deno.test("the scanner stops at the cap: an endless data line is refused, not kept", () => {
  const scanner = new EventStreamScanner(() => {}, 1000);
  assert.equal(scanner.push(encoder.encode("data: " + "x".repeat(900))), undefined);
  const over = scanner.push(encoder.encode("x".repeat(200)));
  assert.ok(over !== undefined && over > 1000, `overflow reported (${over})`);
  // Many short data lines in one event that never ends count together.
  const lines = new EventStreamScanner(() => {}, 1000);
  let result: number | undefined;
  for (let i = 0; i < 100 && result === undefined; i++) {
    result = lines.push(encoder.encode("data: 0123456789\n"));
  }
  assert.ok(result !== undefined, "an event of endless data lines is capped too");
  // Events that end are never capped, however many there are.
  const many = new EventStreamScanner(() => {}, 1000);
  for (let i = 0; i < 1000; i++) {
    assert.equal(many.push(encoder.encode(`data: ${"z".repeat(500)}\n\n`)), undefined);
  }
});

Deno.test("patchbay call on an endless data: line fails with the cap, and stops reading", async () => {
  await using server = startHostileHttp("sse-line");
  await using box = await sandbox();
  await writeConfig(box, configWith({ h: { url: `${server.origin}/mcp` } }));
  const result = await runPatchbay(box, ["call", "h.flood"]);
  assert.equal(result.code, 1, result.stdout);
  assert.match(result.stderr, CAP_MESSAGE);
  assert.match(result.stderr, /server 'h'/);
  const [flood] = server.floods;
  assert.ok(flood.bytes < READ_BOUND, `read ${flood.bytes} bytes of the flood`);
});

/** A manager over the hostile server (as `h`) and a well-behaved stdio server (`ok`). */
async function withManager(
  kind: FloodKind,
  transport: "streamable_http" | "sse",
  run: (manager: ConnectionManager, flooded: () => number) => Promise<void>,
) {
  await using server = startHostileHttp(kind);
  const path = transport === "sse" ? "/sse" : "/mcp";
  const servers: ServerConfig[] = [
    httpEntry("h", `${server.origin}${path}`, { transport }),
    fixtureEntry("ok"),
  ];
  await using manager = new ConnectionManager({
    servers,
    log: new RecordingLog(),
    backoff: { initialDelayMs: 50, factor: 2, maxDelayMs: 400, maxAttempts: 3 },
  });
  const states = await manager.start();
  assert.deepEqual(states.map((s) => s.state), ["connected", "connected"]);
  await run(manager, () => server.floods.reduce((sum, f) => sum + f.bytes, 0));
}

async function floodFails(manager: ConnectionManager, flooded: () => number) {
  const failure = await manager.callTool("h__flood", {}, { toolCallTimeoutSeconds: 120 }).then(
    () => assert.fail("the flood was accepted"),
    (error: Error & { reason?: string }) => error,
  );
  assert.match(`${failure.message} ${failure.reason ?? ""}`, CAP_MESSAGE);
  assert.ok(flooded() < READ_BOUND, `read ${flooded()} bytes of the flood`);
  // The other server was never disturbed.
  const echo = await manager.callTool("ok__echo", { message: "still fine" });
  assert.deepEqual(echo.content, [{ type: "text", text: "still fine" }]);
}

for (const kind of ["sse-line", "sse-lines", "json", "declared"] as const) {
  Deno.test(`streamable HTTP, ${kind}: that server fails with the cause; the other works`, async () => {
    await withManager(kind, "streamable_http", floodFails);
  });
}

Deno.test("legacy SSE, an endless data: line on the shared stream: the same", async () => {
  await withManager("sse-line", "sse", floodFails);
});

Deno.test("an answer whose CRLF line breaks are split between writes arrives whole", async () => {
  await withManager("sse-line", "streamable_http", async (manager) => {
    const echo = await manager.callTool("h__echo", { message: "split \r\n safe" });
    assert.deepEqual(echo.content, [{ type: "text", text: "split \r\n safe" }]);
  });
});

Deno.test("a flood while connecting (tools/list) is the diagnosed cause, with its remedy", async () => {
  await using server = startHostileHttp("sse-line");
  server.floodList = true;
  await using box = await sandbox();
  await writeConfig(box, configWith({ h: { url: `${server.origin}/mcp` } }));
  const result = await runPatchbay(box, ["tools"]);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /Failed to connect to server 'h': Session terminated/);
  assert.match(
    result.stderr,
    /cause: {2}the server at http:\/\/127\.0\.0\.1:\d+\/mcp sent a message of more than 10 MB/,
  );
  assert.match(result.stderr, /remedy: the server produced an answer too large to handle/);
});
