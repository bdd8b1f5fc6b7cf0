/**
 * W3C trace context without a package (lib/telemetry/ids.ts), and the `_meta` every request
 * to a server carries (lib/telemetry/mcp_requests.ts) with telemetry off: valid ids, the
 * request's other `_meta` kept, a tool call's own context kept, and the trace a request
 * belongs to (its connection attempt's, its turn's, or a new one).
 */

import assert from "node:assert/strict";
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import {
  childContext,
  formatTraceparent,
  newSpanId,
  newTraceId,
  parseTraceparent,
  traceMeta,
  validContext,
} from "../../lib/telemetry/ids.ts";
import { RequestTracer } from "../../lib/telemetry/mcp_requests.ts";
import { activeTelemetry, ID_ONLY, inTurn } from "../../lib/telemetry/telemetry.ts";

const W3C = /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/;

Deno.test("ids: random, of the W3C form, never all zero; traceparent read and written back", () => {
  const ids = new Set(Array.from({ length: 200 }, () => newTraceId()));
  assert.equal(ids.size, 200);
  for (const id of ids) assert.match(id, /^[0-9a-f]{32}$/);
  assert.match(newSpanId(), /^[0-9a-f]{16}$/);
  const root = childContext();
  const child = childContext(root);
  assert.equal(child.traceId, root.traceId);
  assert.notEqual(child.spanId, root.spanId);
  const text = formatTraceparent(child);
  assert.match(text, W3C);
  assert.deepEqual(parseTraceparent(text), { ...child });
  assert.deepEqual(parseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"), {
    traceId: "0af7651916cd43dd8448eb211c80319c",
    spanId: "b7ad6b7169203331",
    sampled: false,
  });
  for (
    const bad of [
      "00-00000000000000000000000000000000-b7ad6b7169203331-01",
      "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
      "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
      "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",
      "00-0af7651916cd43dd8448eb211c80319c-b7ad6b71692033-01",
      42,
    ]
  ) {
    assert.equal(parseTraceparent(bad), undefined, String(bad));
  }
  assert.ok(!validContext({ traceId: "x", spanId: "y" }));
  assert.deepEqual(traceMeta({ ...child, tracestate: "rojo=00f067aa0ba902b7" }), {
    traceparent: text,
    tracestate: "rojo=00f067aa0ba902b7",
  });
  assert.deepEqual(Object.keys(traceMeta(child)), ["traceparent"]);
});

function request(id: number, method: string, params?: Record<string, unknown>): JSONRPCMessage {
  return { jsonrpc: "2.0", id, method, ...(params ? { params } : {}) } as JSONRPCMessage;
}

// deno-lint-ignore no-explicit-any
const metaOf = (message: JSONRPCMessage): any => (message as any).params?._meta;

Deno.test("every request gets a traceparent in _meta, its other _meta kept; nothing else is touched", () => {
  assert.equal(activeTelemetry(), ID_ONLY, "telemetry is off in this process");
  const tracer = new RequestTracer({ server: "s", transport: "stdio" });
  const ping = request(1, "ping");
  const stamped = tracer.outgoing(ping);
  assert.match(metaOf(stamped).traceparent, W3C);
  assert.equal(metaOf(ping), undefined, "the SDK's message is not changed");
  const versioned = tracer.outgoing(
    request(2, "tools/list", {
      cursor: "c",
      _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", progressToken: 7 },
    }),
  );
  // deno-lint-ignore no-explicit-any
  assert.equal((versioned as any).params.cursor, "c");
  assert.equal(metaOf(versioned)["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
  assert.equal(metaOf(versioned).progressToken, 7);
  assert.match(metaOf(versioned).traceparent, W3C);
  // A tool call's context is its span's: kept as given.
  const given = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  const call = request(3, "tools/call", { name: "echo", _meta: { traceparent: given } });
  assert.equal(tracer.outgoing(call), call);
  // Notifications and answers are not requests.
  const note = { jsonrpc: "2.0", method: "notifications/initialized" } as JSONRPCMessage;
  assert.equal(tracer.outgoing(note), note);
  const answer = { jsonrpc: "2.0", id: 9, result: {} } as JSONRPCMessage;
  assert.equal(tracer.outgoing(answer), answer);
});

Deno.test("a request belongs to the trace of its connection attempt, else of the turn, else a new one", async () => {
  const tracer = new RequestTracer({
    server: "s",
    transport: "streamable_http",
    url: "http://h:1/",
  });
  const traceOf = (n: number) =>
    parseTraceparent(metaOf(tracer.outgoing(request(n, "ping"))).traceparent)!;
  const attempt = ID_ONLY.start("connect s", { parent: null });
  tracer.attempt = attempt;
  const during = traceOf(1);
  assert.equal(during.traceId, attempt.context.traceId);
  assert.notEqual(during.spanId, attempt.context.spanId, "each request has its own span id");
  tracer.attempt = undefined;
  const turn = ID_ONLY.start("invoke_agent patchbay", { parent: null });
  const inside = await inTurn(turn, () => Promise.resolve(traceOf(2)));
  assert.equal(inside.traceId, turn.context.traceId);
  const outside = [traceOf(3), traceOf(4)];
  assert.notEqual(outside[0].traceId, turn.context.traceId);
  assert.notEqual(outside[0].traceId, outside[1].traceId);
});
