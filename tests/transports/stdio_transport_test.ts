import assert from "node:assert/strict";
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { LineSplitter, LineTooLongError } from "../../lib/transports/lines.ts";
import { groupMembers } from "../../lib/transports/process.ts";
import { StdioTransport, type StdioTransportOptions } from "../../lib/transports/stdio.ts";
import { testDepsDir } from "../support/deps.ts";
import {
  descendants,
  eventually,
  FIXTURE_SERVER,
  processAlive,
  RecordingLog,
} from "../support/servers.ts";
import { DENO } from "../support/deps.ts";
import { bounded } from "../support/bounded.ts";

const INITIALIZE: JSONRPCMessage = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "t", version: "1" },
  },
};

/** A transport to the fixture server, with everything it received recorded. */
function fixture(flags: string[], options: Partial<StdioTransportOptions> = {}) {
  const log = new RecordingLog();
  const received: JSONRPCMessage[] = [];
  let closes = 0;
  const transport = new StdioTransport({
    command: DENO,
    args: ["run", "--quiet", "--no-config", "--allow-run", FIXTURE_SERVER, ...flags],
    log,
    ...options,
  });
  transport.onmessage = (message) => received.push(message);
  transport.onclose = () => closes++;
  return { transport, log, received, closes: () => closes };
}

async function answer(received: JSONRPCMessage[], id: number): Promise<Record<string, unknown>> {
  await eventually(() => received.some((m) => "id" in m && m.id === id), `answer to ${id}`);
  return received.find((m) => "id" in m && m.id === id) as Record<string, unknown>;
}

const call = (id: number, name: string, args: Record<string, unknown> = {}): JSONRPCMessage => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args },
});

Deno.test("line splitter: lines across chunks, CRLF, and the size cap", () => {
  const splitter = new LineSplitter(10);
  const enc = (s: string) => new TextEncoder().encode(s);
  const dec = (lines: Uint8Array[]) => lines.map((l) => new TextDecoder().decode(l));
  assert.deepEqual(dec(splitter.push(enc("ab"))), []);
  assert.deepEqual(dec(splitter.push(enc("c\r\nde\nf"))), ["abc", "de"]);
  assert.deepEqual(dec(splitter.push(enc("g\n"))), ["fg"]);
  assert.throws(() => splitter.push(enc("x".repeat(11))), LineTooLongError);
  assert.throws(() => new LineSplitter(10).push(enc("y".repeat(11) + "\n")), LineTooLongError);
});

Deno.test("the child gets the minimal environment plus the entry's env, never secrets", async () => {
  const parent: Record<string, string> = {
    HOME: "/home/someone",
    PATH: Deno.env.get("PATH")!,
    USER: "someone",
    LLM_API_KEY: "sk-secret-value-123456",
    REDIS_PASSWORD: "hunter22",
    REDIS_HOST: "db.internal",
    AWS_SECRET_ACCESS_KEY: "aws-secret",
  };
  const transport = new StdioTransport({
    command: "env",
    env: { SERVER_SETTING: "on" },
    parentEnv: (name) => parent[name],
  });
  await transport.start();
  await transport.exited;
  await transport.close();
  const lines = transport.evidence().stdoutNoise;
  const names = lines.map((line) => line.split("=")[0]).sort();
  assert.ok(lines.includes("HOME=/home/someone"), lines.join("\n"));
  assert.ok(lines.includes("USER=someone"));
  assert.ok(lines.includes("SERVER_SETTING=on"));
  for (const secret of ["LLM_API_KEY", "REDIS_PASSWORD", "REDIS_HOST", "AWS_SECRET_ACCESS_KEY"]) {
    assert.ok(!names.includes(secret), `${secret} leaked: ${names.join(", ")}`);
  }
});

Deno.test("stray stdout text is logged as a protocol warning and the session goes on", async () => {
  const { transport, log, received } = fixture(["--noise"]);
  await transport.start();
  await transport.send(INITIALIZE);
  await answer(received, 1);
  await transport.send(call(2, "echo", { message: "still here" }));
  const reply = await answer(received, 2);
  assert.deepEqual((reply.result as { content: unknown[] }).content, [
    { type: "text", text: "still here" },
  ]);
  assert.ok(log.matching(/protocol warning: .*fixture server starting up/).length === 1);
  assert.ok(log.matching(/protocol warning: .*about to answer echo/).length === 1);
  await transport.close();
});

Deno.test("stderr is kept in a bounded buffer and the log, escape sequences stripped", async () => {
  const { transport, log, received } = fixture(["--noise"]);
  await transport.start();
  await transport.send(INITIALIZE);
  await answer(received, 1);
  await eventually(() => transport.evidence().stderrTail.length > 0, "stderr line");
  const [line] = transport.evidence().stderrTail;
  assert.equal(line, "red warning on stderr ");
  assert.ok(!line.includes("\u001b"));
  assert.ok(log.lines.some((l) => l.level === "info" && l.message === "red warning on stderr "));
  await transport.close();
});

Deno.test("an oversized message closes only this transport, with a clear reason", async () => {
  const { transport, log, received, closes } = fixture([], { maxMessageBytes: 4096 });
  await transport.start();
  await transport.send(INITIALIZE);
  await answer(received, 1);
  await transport.send(call(2, "big", { bytes: 10_000 }));
  await eventually(() => closes() === 1, "close after oversized message");
  const reason = transport.closeReason;
  assert.equal(reason?.kind, "oversize");
  assert.equal(reason?.kind === "oversize" && reason.limit, 4096);
  assert.ok(log.matching(/more than 4096 bytes/).length > 0);
  assert.ok(!received.some((m) => "id" in m && m.id === 2));
  await transport.close();
  assert.equal(closes(), 1);
});

Deno.test("exit at start: code and last stderr lines are recorded; onclose once", async () => {
  const { transport, closes } = fixture(["--exit-at-start=3"]);
  await transport.start();
  const status = await transport.exited;
  assert.equal(status?.code, 3);
  await eventually(() => closes() === 1, "onclose after exit");
  const evidence = transport.evidence();
  assert.deepEqual(evidence.closeReason, { kind: "exited", code: 3, signal: null });
  assert.deepEqual(evidence.stderrTail, [
    "fixture: loading configuration",
    "fatal: missing FIXTURE_CONFIG, cannot start",
  ]);
  await transport.close();
  await transport.close();
  assert.equal(closes(), 1);
});

Deno.test("a missing command fails start() with NotFound and is recorded", async () => {
  const transport = new StdioTransport({ command: "patchbay-no-such-command" });
  await assert.rejects(() => transport.start(), Deno.errors.NotFound);
  assert.ok(transport.evidence().spawnError instanceof Deno.errors.NotFound);
  let closes = 0;
  transport.onclose = () => closes++;
  await transport.close();
  assert.equal(closes, 1);
});

Deno.test("shutdown: a server ignoring the end of stdin gets SIGTERM", async () => {
  const { transport, log } = fixture(["--ignore-eof"], {
    stdinCloseGraceMs: 300,
    sigtermGraceMs: 2000,
  });
  await transport.start();
  const pid = transport.pid!;
  await transport.close();
  assert.ok(!processAlive(pid));
  assert.ok(log.matching(/ignored the end of stdin; sending SIGTERM/).length === 1);
});

Deno.test("shutdown: a server ignoring SIGTERM gets SIGKILL", async () => {
  const { transport, received } = fixture(["--ignore-eof", "--ignore-sigterm"], {
    stdinCloseGraceMs: 200,
    sigtermGraceMs: 300,
  });
  await transport.start();
  await transport.send(INITIALIZE);
  await answer(received, 1);
  const pid = transport.pid!;
  await transport.close();
  assert.ok(!processAlive(pid));
  assert.equal((await transport.exited)?.signal, "SIGKILL");
});

Deno.test("shutdown ends grandchildren too (the whole process group)", async () => {
  const { transport, received } = fixture(["--grandchild"]);
  await transport.start();
  await transport.send(INITIALIZE);
  await answer(received, 1);
  await eventually(
    () => transport.evidence().stderrTail.some((l) => l.startsWith("grandchild pid")),
    "grandchild started",
  );
  const grandchild = Number(
    transport.evidence().stderrTail.find((l) => l.startsWith("grandchild pid"))!.split(" ")[2],
  );
  assert.ok(processAlive(grandchild));
  const pid = transport.pid!;
  await transport.close();
  assert.ok(!processAlive(pid));
  assert.ok(!processAlive(grandchild), "grandchild survived");
  assert.deepEqual(groupMembers(pid), []);
});

Deno.test("shutdown ends an npx → sh → node chain without orphans", async () => {
  // `npx --offline` runs the locally installed bin: the same process chain as
  // `npx -y <package>`, without a network.
  const received: JSONRPCMessage[] = [];
  const transport = new StdioTransport({
    command: "npx",
    args: ["--offline", "mcp-server-everything", "stdio"],
    cwd: testDepsDir(),
  });
  transport.onmessage = (m) => received.push(m);
  await transport.start();
  await transport.send(INITIALIZE);
  await answer(received, 1);
  const tree = descendants(transport.pid!);
  assert.ok(tree.length >= 2, `expected npx to run children, saw ${tree.join(", ")}`);
  await transport.close();
  const alive = tree.filter(processAlive);
  assert.deepEqual(alive, [], `left behind: ${alive.join(", ")}`);
  assert.deepEqual(groupMembers(transport.pid!), []);
});

Deno.test("a request from the server after stdin closed does not stall shutdown", async () => {
  // server-everything asks for roots ~350 ms after initialization; closing before the
  // answer could be written must not sit out the whole grace period.
  const { everythingEntry, NODE } = await import("../support/deps.ts");
  const received: JSONRPCMessage[] = [];
  const log = new RecordingLog();
  const transport = new StdioTransport({
    command: NODE,
    args: [everythingEntry(), "stdio"],
    log,
    // Far beyond the bound below: a shutdown that sat out the grace fails there.
    stdinCloseGraceMs: 600_000,
  });
  transport.onmessage = (m) => received.push(m);
  await transport.start();
  await transport.send({
    ...INITIALIZE,
    params: {
      ...(INITIALIZE as { params: Record<string, unknown> }).params,
      capabilities: { roots: {} },
    },
  } as JSONRPCMessage);
  await answer(received, 1);
  await transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await bounded(
    transport.close(),
    "the shutdown to move on at the server's request (not after the 600 s grace)",
  );
  assert.ok(log.matching(/sent a request after its stdin closed/).length === 1);
});
