/**
 * Telemetry as a person turns it on: a `Telemetry` section (or `OTEL_EXPORTER_OTLP_ENDPOINT`)
 * and `deno task start run …` with a tool call to server-everything and the scripted model,
 * exported by Deno's own exporter to a real OTLP/HTTP receiver on loopback, in JSON and in
 * protobuf. Checked: the spans (turn, model requests, tool call, connection attempts and
 * their requests) with their attributes and parent/child links, the metrics, that no secret
 * reaches the collector, the collector's header from `${VAR}`, and that the `traceparent`
 * server-everything received (the wire trace records each message as sent) is the tool
 * call's span.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { ROWS } from "../../lib/errors/failure_table.ts";
import { VERSION } from "../../lib/version.ts";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { everythingEntry, NODE } from "../support/deps.ts";
import { type OtlpSpan, startOtlpReceiver } from "../support/otlp_receiver.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { startEverythingHttp } from "../support/servers.ts";
import type { ScriptedLlm } from "../support/scripted_llm.ts";

const LLM_KEY = "sk-telemetrytestkey0123456789abcdef";
const COLLECTOR_KEY = "collector-secret-5f1e2d3c";
const PROMPT_SECRET = "hunter2-prompt-secret-77";

function config(llm: ScriptedLlm, telemetry: Record<string, unknown>, extra = {}) {
  return {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: { everything: { command: NODE, args: [everythingEntry(), "stdio"] }, ...extra },
    Telemetry: telemetry,
  };
}

function byName(spans: OtlpSpan[], name: string): OtlpSpan[] {
  return spans.filter((span) => span.name === name);
}

function only(spans: OtlpSpan[], name: string): OtlpSpan {
  const found = byName(spans, name);
  assert.equal(found.length, 1, `one span "${name}" in ${spans.map((s) => s.name).join(", ")}`);
  return found[0];
}

/** The trace file's lines. */
async function traceLines(path: string): Promise<Record<string, unknown>[]> {
  return (await Deno.readTextFile(path)).trim().split("\n").map((line) => JSON.parse(line));
}

Deno.test("telemetry (http/json): spans, links, metrics, no secret, and the traceparent servers get", async () => {
  await using box = await sandbox({ LLM_API_KEY: LLM_KEY });
  await using receiver = await startOtlpReceiver();
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: "everything__echo", arguments: { message: "hi" }, id: "call_e1" }] },
      { text: "Echoed." },
    ],
  });
  await Deno.writeTextFile(join(box.cwd, ".env"), `COLLECTOR_KEY=${COLLECTOR_KEY}\n`);
  await writeConfig(
    box,
    config(llm, {
      endpoint: receiver.endpoint,
      protocol: "http/json",
      headers: { "x-collector-key": "${COLLECTOR_KEY}" },
    }, { broken: { command: "patchbay-no-such-command" } }),
  );
  const trace = join(box.cwd, "trace.jsonl");
  const result = await runPatchbay(box, [
    "--trace",
    trace,
    "--trace-model",
    "run",
    "--yes",
    `echo hi (my password is ${PROMPT_SECRET})`,
  ]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, "Echoed.\n");

  // Deno's exporter sent both signals, with the header the section gave from ${VAR}.
  const traces = receiver.requests.filter((r) => r.path === "/v1/traces");
  assert.ok(traces.length > 0 && traces.every((r) => r.contentType === "application/json"));
  assert.ok(receiver.requests.some((r) => r.path === "/v1/metrics"));
  assert.ok(receiver.requests.every((r) => r.headers["x-collector-key"] === COLLECTOR_KEY));
  // No secret in anything exported: the keys, the header, what the person typed.
  const bodies = receiver.bodies();
  for (const secret of [LLM_KEY, COLLECTOR_KEY, PROMPT_SECRET]) {
    assert.ok(!bodies.includes(secret), `the collector received ${secret}`);
  }

  const spans = receiver.spans().filter((span) => span.scope === "patchbay");
  const turn = only(spans, "invoke_agent patchbay");
  assert.equal(turn.parentSpanId, "");
  assert.equal(turn.resource["service.name"], "patchbay");
  assert.equal(turn.resource["service.version"], VERSION);
  assert.equal(turn.attributes["gen_ai.operation.name"], "invoke_agent");
  assert.equal(turn.attributes["gen_ai.request.model"], "scripted-model");
  assert.equal(turn.attributes["patchbay.turn.steps"], 2);
  assert.equal(turn.attributes["patchbay.turn.tool_calls"], 1);
  assert.equal(turn.attributes["gen_ai.usage.input_tokens"], 200);
  // Content is captured only when asked for.
  assert.equal(turn.attributes["gen_ai.input.messages"], undefined);

  const chats = byName(spans, "chat scripted-model");
  assert.equal(chats.length, 2);
  for (const chat of chats) {
    assert.equal(chat.parentSpanId, turn.spanId);
    assert.equal(chat.traceId, turn.traceId);
    assert.equal(chat.kind, 3, "a model request is a client span");
    assert.equal(chat.attributes["gen_ai.operation.name"], "chat");
    assert.equal(chat.attributes["gen_ai.provider.name"], "openai-compatible");
    assert.equal(chat.attributes["gen_ai.usage.input_tokens"], 100);
    assert.equal(chat.attributes["gen_ai.usage.output_tokens"], 10);
    assert.equal(chat.attributes["server.address"], "127.0.0.1");
  }
  assert.deepEqual(
    chats.map((c) => c.attributes["gen_ai.response.finish_reasons"]).sort(),
    [["stop"], ["tool_calls"]],
  );
  // Deno's own span of each model request's fetch is the model request's child.
  const fetches = receiver.spans().filter((s) => chats.some((c) => c.spanId === s.parentSpanId));
  assert.equal(fetches.length, 2, "Deno's fetch spans under the model requests");
  // The model's server received the trace context over HTTP (Deno's propagation).
  assert.ok(llm.requests.every((r) => r.headers.traceparent?.includes(turn.traceId)));

  const tool = only(spans, "tools/call echo");
  assert.equal(tool.parentSpanId, turn.spanId);
  assert.equal(tool.traceId, turn.traceId);
  assert.equal(tool.attributes["gen_ai.operation.name"], "execute_tool");
  assert.equal(tool.attributes["gen_ai.tool.name"], "echo");
  assert.equal(tool.attributes["gen_ai.tool.call.id"], "call_e1");
  assert.equal(tool.attributes["mcp.method.name"], "tools/call");
  assert.equal(tool.attributes["patchbay.mcp.server"], "everything");
  assert.equal(tool.attributes["patchbay.tool.outcome"], "ok");
  assert.equal(tool.attributes["network.transport"], "pipe");

  // Each connection attempt is a trace of its own, its requests its children.
  const connect = byName(spans, "connect everything");
  assert.ok(connect.length >= 1);
  const connected = connect.find((span) => span.status.code !== 2)!;
  assert.equal(connected.parentSpanId, "");
  assert.ok(connected.attributes["patchbay.mcp.tools"] as number > 0);
  const initialize = spans.filter((s) =>
    s.parentSpanId === connected.spanId && s.attributes["mcp.method.name"] === "initialize"
  );
  assert.equal(initialize.length, 1, "initialize is a child of its connection attempt");
  assert.equal(initialize[0].kind, 3);
  // A server that cannot start: its attempt failed, with the row of the failure table.
  const broken = only(spans, "connect broken");
  assert.equal(broken.status.code, 2);
  const kind = broken.attributes["patchbay.failure.kind"] as string;
  assert.ok(Object.hasOwn(ROWS, kind), `a row of the failure table: ${kind}`);
  assert.equal(kind, "not_running");
  assert.equal(broken.attributes["error.type"], "server_connect_failed");

  const metrics = receiver.metrics().filter((m) => m.scope === "patchbay");
  const names = new Set(metrics.map((m) => m.name));
  for (
    const name of [
      "gen_ai.client.token.usage",
      "gen_ai.client.operation.duration",
      "mcp.client.operation.duration",
      "patchbay.model.requests",
      "patchbay.tool.calls",
      "patchbay.failures",
    ]
  ) {
    assert.ok(names.has(name), `metric ${name} in ${[...names].join(", ")}`);
  }
  const tokenTypes = metrics.filter((m) => m.name === "gen_ai.client.token.usage")
    .flatMap((m) => m.points.map((p) => p["gen_ai.token.type"]));
  assert.deepEqual([...new Set(tokenTypes)].sort(), ["input", "output"]);
  const failures = metrics.filter((m) => m.name === "patchbay.failures").flatMap((m) => m.points);
  assert.ok(
    failures.some((p) =>
      p["patchbay.failure.kind"] === kind && p["patchbay.failure.during"] === "connection"
    ),
  );
  const calls = metrics.filter((m) => m.name === "patchbay.tool.calls").flatMap((m) => m.points);
  assert.ok(
    calls.some((p) => p["gen_ai.tool.name"] === "echo" && p["patchbay.tool.outcome"] === "ok"),
  );

  // What server-everything received: the tools/call request, as the trace recorded it on
  // the way out, carries the tool call span's ids, as do its trace line and its answer's.
  const lines = await traceLines(trace);
  const call = lines.find((l) =>
    l.kind === "message" && l.method === "tools/call" && l.dir === "out"
  )!;
  // deno-lint-ignore no-explicit-any
  const meta = (call.message as any).params._meta;
  assert.equal(meta.traceparent, `00-${tool.traceId}-${tool.spanId}-01`);
  assert.equal(call.trace_id, tool.traceId);
  assert.equal(call.span_id, tool.spanId);
  const answer = lines.find((l) =>
    l.kind === "message" && l.method === "tools/call" && l.dir === "in" && l.type === "result"
  )!;
  assert.equal(answer.span_id, tool.spanId);
  const init = lines.find((l) =>
    l.kind === "message" && l.method === "initialize" && l.dir === "out" &&
    l.server === "everything"
  )!;
  assert.equal(init.span_id, initialize[0].spanId);
  // The model lines name their spans too.
  const models = lines.filter((l) => l.kind === "model");
  assert.deepEqual(models.map((l) => l.span_id).sort(), chats.map((c) => c.spanId).sort());
});

Deno.test("telemetry (http/protobuf, from OTEL_EXPORTER_OTLP_ENDPOINT): the same spans arrive as protobuf; content when asked, masked", async () => {
  await using box = await sandbox({ LLM_API_KEY: LLM_KEY });
  await using receiver = await startOtlpReceiver();
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: "everything__echo", arguments: { message: "hi" } }] },
      { text: "Echoed." },
    ],
  });
  await writeConfig(box, config(llm, { capture_content: true }));
  const result = await runPatchbay(box, ["run", "--yes", `echo hi ${LLM_KEY}`], {
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_SERVICE_NAME: "pb-test" },
  });
  assert.equal(result.code, 0, result.stderr);
  const traces = receiver.requests.filter((r) => r.path === "/v1/traces");
  assert.ok(traces.length > 0);
  for (const request of traces) {
    assert.equal(request.contentType, "application/x-protobuf");
    assert.ok(request.body.length > 0);
  }
  const spans = receiver.spans().filter((span) => span.scope === "patchbay");
  const turn = only(spans, "invoke_agent patchbay");
  assert.equal(turn.resource["service.name"], "pb-test");
  const tool = only(spans, "tools/call echo");
  assert.equal(tool.parentSpanId, turn.spanId);
  assert.equal(byName(spans, "chat scripted-model").length, 2);
  // Opted in: the person's message, masked; the tool's arguments and result.
  const input = turn.attributes["gen_ai.input.messages"] as string;
  assert.match(input, /echo hi \[REDACTED\]/);
  assert.equal(JSON.parse(tool.attributes["gen_ai.tool.call.arguments"] as string).message, "hi");
  assert.match(tool.attributes["gen_ai.tool.call.result"] as string, /Echo: hi/);
  assert.ok(!receiver.bodies().includes(LLM_KEY));
  assert.ok(receiver.metrics().some((m) => m.name === "patchbay.tool.calls"));
});

Deno.test("telemetry over streamable HTTP: a key in the server's URL reaches the collector nowhere; the spans say tcp", async () => {
  await using box = await sandbox({ LLM_API_KEY: LLM_KEY });
  await using receiver = await startOtlpReceiver();
  await using server = await startEverythingHttp("streamableHttp");
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: "remote__echo", arguments: { message: "hi" } }] },
      { text: "Echoed." },
    ],
  });
  const urlKey = "urlkey9f8e7d6c5b4a";
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: {
      remote: { transport_type: "streamable_http", url: `${server.origin}/mcp?api_key=${urlKey}` },
    },
    Telemetry: { endpoint: receiver.endpoint, protocol: "http/json" },
  });
  const result = await runPatchbay(box, ["run", "--yes", "echo hi"]);
  assert.equal(result.code, 0, result.stderr);
  const spans = receiver.spans();
  const tool = only(spans.filter((s) => s.scope === "patchbay"), "tools/call echo");
  assert.equal(tool.attributes["network.transport"], "tcp");
  assert.equal(tool.attributes["patchbay.tool.outcome"], "ok");
  // Deno recorded no request to the server (their URL holds the key); the model's it did.
  assert.ok(!receiver.bodies().includes(urlKey), "the URL's key reached the collector");
  assert.ok(spans.some((s) => s.scope !== "patchbay" && s.attributes["url.full"]));
  assert.ok(
    !spans.some((s) => String(s.attributes["url.full"] ?? "").startsWith(server.origin)),
  );
});
