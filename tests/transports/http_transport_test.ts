import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/client";
import { HttpTransport, type HttpTransportOptions } from "../../lib/transports/http.ts";
import { type HttpFixture, startHttpFixture } from "../fixtures/http_server.ts";
import { DENO } from "../support/deps.ts";
import { eventually, RecordingLog, silentListener } from "../support/servers.ts";

/** A connected SDK client over {@linkcode HttpTransport} to the fixture. */
async function connect(
  fixture: HttpFixture,
  options: Partial<HttpTransportOptions> = {},
) {
  const log = new RecordingLog();
  const kind = options.kind ?? "streamable_http";
  const transport = new HttpTransport({
    kind,
    url: `${fixture.origin}${kind === "sse" ? "/sse" : "/mcp"}`,
    headers: { Authorization: "Bearer test-token-123" },
    timeoutSeconds: 5,
    sseReadTimeoutSeconds: 300,
    log,
    ...options,
  });
  const client = new Client({ name: "test", version: "1" });
  let closes = 0;
  client.onclose = () => closes++;
  await client.connect(transport);
  return {
    client,
    transport,
    log,
    closes: () => closes,
    async [Symbol.asyncDispose]() {
      await client.close();
    },
  };
}

const echo = async (client: Client, message: string) =>
  ((await client.callTool({ name: "echo", arguments: { message } })).content as {
    text: string;
  }[])[0].text;

Deno.test("headers, session id and protocol version ride on every request", async () => {
  await using fixture = startHttpFixture();
  await using session = await connect(fixture);
  assert.equal(await echo(session.client, "hi"), "hi");
  const posts = fixture.seen("POST", "/mcp");
  assert.ok(posts.length >= 3);
  for (const post of posts) {
    assert.equal(post.headers.get("authorization"), "Bearer test-token-123");
  }
  const [initialize, ...rest] = posts;
  assert.equal(initialize.headers.get("mcp-session-id"), null);
  const version = session.client.getNegotiatedProtocolVersion();
  assert.ok(version);
  for (const post of rest) {
    assert.equal(post.headers.get("mcp-session-id"), session.transport.sessionId);
    assert.equal(post.headers.get("mcp-protocol-version"), version);
  }
});

Deno.test("a 404 on a session request re-initializes once and resends", async () => {
  await using fixture = startHttpFixture();
  await using session = await connect(fixture);
  let renewed = 0;
  session.transport.onsessionrenewed = () => renewed++;
  const first = session.transport.sessionId;
  fixture.behaviour.forgetSessions = true;
  assert.equal(await echo(session.client, "after restart"), "after restart");
  assert.equal(renewed, 1);
  assert.notEqual(session.transport.sessionId, first);
  assert.deepEqual(
    fixture.rpcMethods().filter((m) => m === "initialize"),
    ["initialize", "initialize"],
  );
  assert.ok(session.log.matching(/expired \(HTTP 404\); starting a new session/).length === 1);
  // Calls keep working in the new session.
  assert.equal(await echo(session.client, "again"), "again");
  assert.equal(renewed, 1);
});

Deno.test("a server that keeps answering 404 closes the transport after one renewal", async () => {
  await using fixture = startHttpFixture();
  await using session = await connect(fixture);
  fixture.behaviour.alwaysNotFound = true;
  await assert.rejects(() => echo(session.client, "x"));
  await eventually(() => session.closes() === 1, "client closed");
  const reason = session.transport.closeReason;
  assert.equal(reason?.kind, "session_lost");
  // One renewal attempt only: the first initialize plus one more.
  assert.equal(fixture.rpcMethods().filter((m) => m === "initialize").length, 2);
});

Deno.test("closing deletes the session; 405 is accepted", async (t) => {
  for (const status of [200, 405]) {
    await t.step(`DELETE answered ${status}`, async () => {
      await using fixture = startHttpFixture({ deleteStatus: status });
      const session = await connect(fixture);
      const id = session.transport.sessionId;
      await session.transport.close();
      const deletes = fixture.seen("DELETE", "/mcp");
      assert.equal(deletes.length, 1);
      assert.equal(deletes[0].headers.get("mcp-session-id"), id);
      assert.equal(session.closes(), 1);
      assert.equal(session.transport.closeReason?.kind, "closed");
    });
  }
});

Deno.test("a dropped event stream is reopened after the server's retry, with Last-Event-ID", async () => {
  // The SDK's own first delay is 1 s; the server asks for 2.5 s. A lower bound only (a
  // loaded machine makes the gap longer, never shorter): the server's retry was honoured.
  await using fixture = startHttpFixture({ getStream: "drop", retryMs: 2500 });
  await using _session = await connect(fixture);
  await eventually(() => fixture.seen("GET", "/mcp").length >= 2, "stream reopened", 30_000);
  const [first, second] = fixture.seen("GET", "/mcp");
  assert.equal(first.headers.get("last-event-id"), null);
  assert.equal(second.headers.get("last-event-id"), "e1");
  const gap = second.at - first.at;
  assert.ok(gap >= 2400, `reconnected after ${gap} ms, before the server's retry of 2.5 s`);
});

Deno.test("a silent event stream is cut after sse_read_timeout and resumed", async () => {
  await using fixture = startHttpFixture({ getStream: "silent", retryMs: 50 });
  await using session = await connect(fixture, { sseReadTimeoutSeconds: 0.4 });
  await eventually(() => fixture.seen("GET", "/mcp").length >= 2, "stream reopened", 5000);
  const [first, second] = fixture.seen("GET", "/mcp");
  assert.equal(second.headers.get("last-event-id"), "e1");
  // A lower bound only (load makes it longer, never shorter): the stream was cut at 0.4 s.
  assert.ok(second.at - first.at >= 350, `reopened after ${second.at - first.at} ms`);
  assert.ok(session.log.matching(/silent for 0.4 s; reopening it/).length >= 1);
});

Deno.test("legacy SSE: requests, then a reconnect that resumes with Last-Event-ID", async () => {
  await using fixture = startHttpFixture({ retryMs: 50, sseDropAfter: 2 });
  await using session = await connect(fixture, { kind: "sse" });
  // initialize was event 1, tools/call is event 2: the stream ends after it.
  assert.equal(await echo(session.client, "one"), "one");
  await eventually(() => fixture.seen("GET", "/sse").length >= 2, "stream reopened", 5000);
  assert.equal(fixture.seen("GET", "/sse")[1].headers.get("last-event-id"), "2");
  assert.equal(
    fixture.seen("GET", "/sse")[1].headers.get("authorization"),
    "Bearer test-token-123",
  );
  assert.equal(await echo(session.client, "two"), "two");
  assert.equal(session.closes(), 0);
});

Deno.test("legacy SSE: a reconnect into a new session closes the transport", async () => {
  await using fixture = startHttpFixture({
    retryMs: 50,
    sseDropAfter: 2,
    sseNewSessionOnReconnect: true,
  });
  await using session = await connect(fixture, { kind: "sse" });
  assert.equal(await echo(session.client, "one"), "one");
  await eventually(() => session.closes() === 1, "transport closed", 5000);
  const reason = session.transport.closeReason;
  assert.equal(reason?.kind, "session_lost");
  assert.match(reason?.kind === "session_lost" ? reason.detail : "", /new session/);
});

Deno.test("timeout bounds the wait for response headers", async () => {
  // A listener that accepts and never answers.
  await using silent = silentListener();
  const transport = new HttpTransport({
    kind: "streamable_http",
    url: `http://127.0.0.1:${silent.port}/mcp`,
    timeoutSeconds: 0.3,
    sseReadTimeoutSeconds: 300,
  });
  const client = new Client({ name: "test", version: "1" });
  // The message is the headers timeout's own (the SDK's would say otherwise, after 60 s).
  await assert.rejects(() => client.connect(transport), /no response from .* within 0.3 s/);
  await client.close();
});

Deno.test("closing ends an event stream even after garbage collection", async () => {
  // In a subprocess: collecting garbage on demand needs a V8 flag this test run lacks.
  const fixture = new URL("../fixtures/stream_close_after_gc.ts", import.meta.url).pathname;
  const output = await new Deno.Command(DENO, {
    args: ["run", "--allow-net=127.0.0.1", "--v8-flags=--expose-gc", fixture],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(output.stderr);
  assert.equal(output.code, 0, stderr);
  assert.equal(new TextDecoder().decode(output.stdout).trim(), "cancelled", stderr);
});
