/**
 * With telemetry on, each request a transport sends is a span that ends with its answer:
 * a JSON-RPC error marks it failed with the code, a request patchbay cancels ends
 * cancelled, and a server process that exits ends what it never answered. Seen through a
 * telemetry that records spans in memory (the exporting one needs Deno's exporter on at
 * process start; tests/e2e/telemetry_export_test.ts checks it end to end).
 */

import assert from "node:assert/strict";
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { childContext, parseTraceparent } from "../../lib/telemetry/ids.ts";
import { RequestTracer } from "../../lib/telemetry/mcp_requests.ts";
import {
  activeTelemetry,
  type Attributes,
  ID_ONLY,
  parentContext,
  setActiveTelemetry,
  type SpanHandle,
  type Telemetry,
} from "../../lib/telemetry/telemetry.ts";

interface Recorded {
  name: string;
  parent?: string;
  attributes: Record<string, unknown>;
  failed?: string;
  ended: boolean;
}

/** A telemetry that keeps its spans and histogram records. */
function recording(): Telemetry & { spans: Recorded[]; durations: Attributes[] } {
  const spans: Recorded[] = [];
  const durations: Attributes[] = [];
  return {
    exporting: true,
    captureContent: false,
    spans,
    durations,
    start(name, options = {}): SpanHandle {
      const parent = parentContext(options.parent);
      const record: Recorded = {
        name,
        parent: parent?.spanId,
        attributes: { ...options.attributes },
        ended: false,
      };
      spans.push(record);
      return {
        context: childContext(parent),
        recording: true,
        set: (attributes) => Object.assign(record.attributes, attributes),
        fail: (type, _message, attributes) => {
          record.failed = type;
          Object.assign(record.attributes, attributes);
        },
        end: () => record.ended = true,
      };
    },
    within: (_span, fn) => fn(),
    add() {},
    record: (_metric, _value, attributes) => durations.push(attributes),
    guardFetch: (_url, fetch) => fetch,
    content: () => undefined,
  };
}

const request = (id: number, method: string, params: Record<string, unknown> = {}) =>
  ({ jsonrpc: "2.0", id, method, params }) as JSONRPCMessage;

Deno.test("request spans end with their answer, an error, a cancellation or the process's exit", () => {
  const telemetry = recording();
  setActiveTelemetry(telemetry);
  try {
    const tracer = new RequestTracer({ server: "fs", transport: "stdio", maxPending: 3 });
    const attempt = activeTelemetry().start("connect fs", { parent: null });
    tracer.attempt = attempt;
    tracer.details = () => ({ protocolVersion: "2025-11-25" });
    // deno-lint-ignore no-explicit-any
    const sent = tracer.outgoing(request(1, "prompts/get", { name: "review" })) as any;
    const [span] = telemetry.spans.filter((s) => s.name === "prompts/get review");
    assert.equal(span.parent, attempt.context.spanId);
    assert.equal(parseTraceparent(sent.params._meta.traceparent)?.traceId, attempt.context.traceId);
    assert.deepEqual(
      [span.attributes["mcp.method.name"], span.attributes["gen_ai.prompt.name"]],
      ["prompts/get", "review"],
    );
    assert.equal(span.attributes["mcp.protocol.version"], "2025-11-25");
    assert.equal(span.attributes["network.transport"], "pipe");
    tracer.received({ jsonrpc: "2.0", id: 1, error: { code: -32602, message: "bad" } } as never);
    assert.equal(span.failed, "-32602");
    assert.equal(span.attributes["rpc.response.status_code"], "-32602");
    assert.ok(span.ended);
    tracer.outgoing(request(2, "resources/read", { uri: "file:///a" }));
    tracer.outgoing({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 2 },
    } as JSONRPCMessage);
    const read = telemetry.spans.find((s) => s.name === "resources/read")!;
    assert.deepEqual([read.failed, read.ended], ["cancelled", true]);
    tracer.outgoing(request(3, "tools/list"));
    tracer.event({ event: "exit", pid: 1, code: 1, signal: null });
    const list = telemetry.spans.find((s) => s.name === "tools/list")!;
    assert.deepEqual([list.failed, list.ended], ["connection_closed", true]);
    // A tool call's span is its own (the manager's): only its duration is recorded here.
    const spansBefore = telemetry.spans.length;
    const given = `00-${childContext().traceId}-${childContext().spanId}-01`;
    tracer.outgoing(request(4, "tools/call", { name: "echo", _meta: { traceparent: given } }));
    assert.equal(telemetry.spans.length, spansBefore);
    tracer.received({ jsonrpc: "2.0", id: 4, result: {} } as never);
    const last = telemetry.durations.at(-1)!;
    assert.equal(last["mcp.method.name"], "tools/call");
    assert.equal(last["jsonrpc.request.id"], undefined, "no request id in a metric");
    // Outside an attempt and a turn: ids, no span.
    tracer.attempt = undefined;
    tracer.outgoing(request(5, "ping"));
    assert.ok(!telemetry.spans.some((s) => s.name === "ping"));
    // Never answered: past the bound the oldest are given up, so at most 3 are waiting.
    for (let id = 10; id < 20; id++) tracer.outgoing(request(id, "ping"));
    const before = telemetry.durations.length;
    tracer.abandon();
    assert.equal(telemetry.durations.length - before, 3);
  } finally {
    setActiveTelemetry(ID_ONLY);
  }
});
