/**
 * The wire trace against the real server-everything on each transport (stdio, streamable
 * HTTP, SSE), recorded through `deno task start --trace FILE` (the launcher's plan must
 * grant the file): both directions, the bodies as sent and received, requests paired with
 * their responses, HTTP exchanges with the headers that matter, process events, mode 0600;
 * then read back by `trace show` and `trace stats`. See docs/trace.md.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { EventLine, HttpLine, MessageLine, TraceLine } from "../../lib/trace/record.ts";
import { parseTrace } from "../../lib/trace/timeline.ts";
import { configWith, runPatchbay, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { everythingEntry, NODE } from "../support/deps.ts";
import { startEverythingHttp } from "../support/servers.ts";

const MESSAGE = "trace me, please";

async function readTrace(path: string): Promise<TraceLine[]> {
  const read = parseTrace(await Deno.readTextFile(path));
  assert.equal(read.skipped, 0, "every line of the trace is a JSON object");
  return read.lines;
}

/** Calls echo through `deno task start --trace`, and returns the trace's lines. */
async function traceEcho(box: Sandbox, entry: Record<string, unknown>): Promise<TraceLine[]> {
  await writeConfig(box, configWith({ everything: entry }));
  const file = join(box.cwd, "traces", "wire.jsonl");
  await Deno.mkdir(join(box.cwd, "traces"));
  const run = await runPatchbay(box, [
    "--trace",
    file,
    "call",
    "everything.echo",
    JSON.stringify({ message: MESSAGE }),
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /trace me, please/);
  assert.match(run.stderr, /Recording the wire trace in .*wire\.jsonl/);
  assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600, "the trace is its owner's only");
  return await readTrace(file);
}

/** The echo call went out with its arguments and came back with its answer, paired. */
function assertEchoBothWays(lines: TraceLine[], transport: string): void {
  const messages = lines.filter((l): l is MessageLine => l.kind === "message");
  assert.ok(messages.every((m) => m.transport === transport && m.server === "everything"));
  const call = messages.find((m) => m.dir === "out" && m.method === "tools/call");
  assert.ok(call, "the tools/call request is in the trace");
  assert.equal(call.type, "request");
  const params = (call.message as { params: { name: string; arguments: unknown } }).params;
  assert.equal(params.name, "echo");
  assert.deepEqual(params.arguments, { message: MESSAGE });
  assert.ok(call.bytes > 0);
  const answer = messages.find((m) => m.dir === "in" && m.id === call.id && m.type === "result");
  assert.ok(answer, "the tools/call response is in the trace");
  assert.equal(answer.method, "tools/call", "the response names the request it answers");
  assert.ok(typeof answer.ms === "number" && answer.ms >= 0, "the response carries its latency");
  const result = (answer.message as { result: { content: { text: string }[] } }).result;
  assert.equal(result.content[0].text, `Echo: ${MESSAGE}`);
  // The handshake in both directions too.
  assert.ok(messages.some((m) => m.dir === "out" && m.method === "initialize"));
  assert.ok(
    messages.some((m) => m.dir === "in" && m.method === "initialize" && m.ms !== undefined),
  );
  assert.ok(messages.some((m) => m.method === "notifications/initialized" && m.dir === "out"));
  // Connection events, same file.
  const states = lines.filter((l) => l.kind === "event" && l.event === "state");
  assert.deepEqual(states.map((l) => l.kind === "event" && l.state), [
    "connecting",
    "connected",
    "closed",
  ]);
}

Deno.test("the trace of a stdio server holds both directions, the bodies and the process", async () => {
  await using box = await sandbox();
  const lines = await traceEcho(box, { command: NODE, args: [everythingEntry(), "stdio"] });
  assertEchoBothWays(lines, "stdio");
  const events = lines.filter((l): l is EventLine => l.kind === "event");
  const spawn = events.find((l) => l.event === "spawn");
  const exit = events.find((l) => l.event === "exit");
  assert.ok(spawn && exit, "spawn and exit are recorded");
  assert.equal(spawn.pid, exit.pid);
  assert.equal(typeof spawn.pid, "number");
  assert.ok("code" in exit);

  // Read back as a person would.
  const file = join(box.cwd, "traces", "wire.jsonl");
  const shown = await runPatchbay(box, ["trace", "show", file, "--method", "tools/call"]);
  assert.equal(shown.code, 0, shown.stderr);
  const rows = shown.stdout.trim().split("\n");
  assert.equal(rows.length, 2, shown.stdout);
  assert.match(rows[0], /everything\s+→\s+tools\/call #\d+ echo\s+\d+ B/);
  assert.match(rows[1], /everything\s+←\s+tools\/call #\d+ result\s+[\d.]+ ms\s+\d+ B/);
  const stats = await runPatchbay(box, ["trace", "stats", file, "--json"]);
  assert.equal(stats.code, 0, stats.stderr);
  const call = JSON.parse(stats.stdout).find((r: { method: string }) => r.method === "tools/call");
  assert.equal(call.server, "everything");
  assert.equal(call.count, 1);
  assert.equal(call.errors, 0);
  assert.ok(call.p50 >= 0 && call.p95 >= call.p50 && call.bytes > 0);
  const table = await runPatchbay(box, ["trace", "stats", file]);
  assert.match(table.stdout, /^server\s+method\s+count\s+p50 ms\s+p95 ms\s+errors\s+bytes$/m);
  // server-everything speaks 2025-11-25: its refusal of the version probe is routine.
  assert.equal(
    JSON.parse(stats.stdout).find((r: { method: string }) => r.method === "server/discover")
      ?.errors,
    0,
  );
  await assertProbeExpected(box, file, /←\s+server\/discover #\S+ refused -32601 Method not found/);
});

/**
 * `trace show` marks the refused version probe expected (`shown`: its line), and `--errors`
 * leaves it out, saying so.
 */
async function assertProbeExpected(box: Sandbox, file: string, shown: RegExp): Promise<void> {
  const all = await runPatchbay(box, ["trace", "show", file]);
  assert.equal(all.code, 0, all.stderr);
  const line = all.stdout.split("\n").find((row) => shown.test(row));
  assert.ok(line, all.stdout);
  assert.match(line, /expected: a server of an earlier revision; initialize follows$/);
  assert.doesNotMatch(line, /ERROR/);
  const errors = await runPatchbay(box, ["trace", "show", file, "--errors"]);
  assert.equal(errors.code, 0, errors.stderr);
  assert.doesNotMatch(errors.stdout, /server\/discover|ERROR/);
  assert.match(
    errors.stderr,
    /^\(not shown: 1 expected refusal of the version probe: a server of an earlier revision answers server\/discover with an error, and initialize follows\)$/m,
  );
}

Deno.test("the trace of a streamable HTTP server holds the bodies, the exchanges and no token", async () => {
  await using server = await startEverythingHttp("streamableHttp");
  await using box = await sandbox({ EVERYTHING_TOKEN: "tok-streamable-0123456789" });
  const lines = await traceEcho(box, {
    transport_type: "streamable_http",
    url: `${server.origin}/mcp`,
    headers: { Authorization: "Bearer ${EVERYTHING_TOKEN}" },
  });
  assertEchoBothWays(lines, "streamable_http");
  const exchanges = lines.filter((l): l is HttpLine => l.kind === "http");
  const posts = exchanges.filter((l) => l.method === "POST");
  assert.ok(posts.length >= 3, "each message went in a POST");
  assert.ok(posts.every((l) => l.url === `${server.origin}/mcp` && typeof l.status === "number"));
  assert.ok(
    posts.every((l) => l.request.authorization === "Bearer"),
    "the scheme, never the token",
  );
  assert.ok(posts.some((l) => l.response?.["mcp-session-id"]), "the session id the server gave");
  assert.ok(posts.some((l) => l.request["mcp-protocol-version"]), "the protocol version sent");
  assert.ok(posts.some((l) => (l.request_bytes ?? 0) > 0));
  assert.ok(
    posts.some((l) => /json|event-stream/.test(l.response?.["content-type"] ?? "")),
    "the content type answered",
  );
  // The standing GET stream was asked for (whatever the server answered).
  assert.ok(
    exchanges.some((l) => l.method === "GET"),
    JSON.stringify(exchanges.map((l) => l.method)),
  );
  // Closing ends the session.
  assert.ok(exchanges.some((l) => l.method === "DELETE"));
  const text = await Deno.readTextFile(join(box.cwd, "traces", "wire.jsonl"));
  assert.ok(
    !text.includes("tok-streamable-0123456789"),
    "the header's token never reaches the trace",
  );
  // The version probe's POST names its method; the 2025-11-25 server answers it 400.
  const probe = posts.find((l) => l.request["mcp-method"] === "server/discover");
  assert.equal(probe?.status, 400, JSON.stringify(posts[0]));
  await assertProbeExpected(
    box,
    join(box.cwd, "traces", "wire.jsonl"),
    /⇄\s+POST \S+\/mcp 400 /,
  );
});

Deno.test("the trace of an SSE server holds the event stream, the posts and the bodies", async () => {
  await using server = await startEverythingHttp("sse");
  await using box = await sandbox();
  const lines = await traceEcho(box, { transport_type: "sse", url: `${server.origin}/sse` });
  assertEchoBothWays(lines, "sse");
  const exchanges = lines.filter((l): l is HttpLine => l.kind === "http");
  const stream = exchanges.find((l) => l.method === "GET");
  assert.ok(stream, "the event stream's GET");
  assert.equal(stream.url, `${server.origin}/sse`);
  assert.equal(stream.status, 200);
  assert.match(stream.response?.["content-type"] ?? "", /text\/event-stream/);
  const posts = exchanges.filter((l) => l.method === "POST");
  assert.ok(posts.length >= 3 && posts.every((l) => l.url.startsWith(`${server.origin}/message`)));
});
