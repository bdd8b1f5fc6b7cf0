/**
 * A real OTLP/HTTP receiver on loopback for the telemetry tests: it accepts what Deno's
 * exporter sends (`POST /v1/traces`, `/v1/metrics`, `/v1/logs`) in JSON (`http/json`) or
 * protobuf (`http/protobuf`), answers as a collector does, and keeps every request (path,
 * content type, headers, raw body) with its spans and metrics decoded.
 *
 * @module
 */

import { decodeMetrics, decodeSpans } from "./otlp_protobuf.ts";
import type { OtlpMetric, OtlpSpan } from "./otlp_types.ts";

export type { OtlpMetric, OtlpSpan } from "./otlp_types.ts";

/** One export request. */
export interface OtlpRequest {
  path: string;
  contentType: string;
  headers: Record<string, string>;
  body: Uint8Array;
}

/** A running receiver. */
export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the OTLP endpoint (Deno appends `/v1/traces` …). */
  readonly endpoint: string;
  readonly requests: OtlpRequest[];
  /** Every span received, in order. */
  spans(): OtlpSpan[];
  /** Every metric received (one entry per export of it). */
  metrics(): OtlpMetric[];
  /** The text of every request body (a secret must be in none). */
  bodies(): string;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

type JsonKeyValue = { key: string; value: JsonAnyValue };
type JsonAnyValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonAnyValue[] };
};

function jsonValue(value: JsonAnyValue | undefined): unknown {
  if (!value) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(jsonValue);
  return undefined;
}

function jsonAttributes(list: JsonKeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, jsonValue(kv.value)]));
}

// deno-lint-ignore no-explicit-any
type Json = any;

function jsonSpans(body: Json): OtlpSpan[] {
  return (body.resourceSpans ?? []).flatMap((rs: Json) =>
    (rs.scopeSpans ?? []).flatMap((ss: Json) =>
      (ss.spans ?? []).map((span: Json): OtlpSpan => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? "",
        name: span.name,
        kind: span.kind,
        attributes: jsonAttributes(span.attributes),
        status: { code: span.status?.code ?? 0, message: span.status?.message ?? "" },
        scope: ss.scope?.name ?? "",
        resource: jsonAttributes(rs.resource?.attributes),
      }))
    )
  );
}

function jsonMetrics(body: Json): OtlpMetric[] {
  return (body.resourceMetrics ?? []).flatMap((rm: Json) =>
    (rm.scopeMetrics ?? []).flatMap((sm: Json) =>
      (sm.metrics ?? []).map((metric: Json): OtlpMetric => {
        const points = metric.sum?.dataPoints ?? metric.histogram?.dataPoints ??
          metric.gauge?.dataPoints ?? [];
        return {
          name: metric.name,
          scope: sm.scope?.name ?? "",
          points: points.map((p: Json) => jsonAttributes(p.attributes)),
        };
      })
    )
  );
}

const isJson = (request: OtlpRequest) => request.contentType.includes("json");

/** Starts a receiver on 127.0.0.1, on a port the system picks. */
export function startOtlpReceiver(): Promise<OtlpReceiver> {
  const requests: OtlpRequest[] = [];
  const controller = new AbortController();
  const { promise, resolve } = Promise.withResolvers<number>();
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    signal: controller.signal,
    onListen: ({ port }) => resolve(port),
  }, async (req) => {
    const body = new Uint8Array(await req.arrayBuffer());
    const contentType = req.headers.get("content-type") ?? "";
    requests.push({
      path: new URL(req.url).pathname,
      contentType,
      headers: Object.fromEntries(req.headers),
      body,
    });
    // An empty Export*ServiceResponse: full success, in the encoding asked for.
    return contentType.includes("json")
      ? Response.json({})
      : new Response(new Uint8Array(), { headers: { "content-type": "application/x-protobuf" } });
  });
  const decode = (request: OtlpRequest, json: (b: Json) => unknown[], proto: typeof decodeSpans) =>
    isJson(request)
      ? json(JSON.parse(new TextDecoder().decode(request.body)))
      : proto(request.body);
  return promise.then((port) => {
    const close = async () => {
      controller.abort();
      await server.finished;
    };
    return {
      endpoint: `http://127.0.0.1:${port}`,
      requests,
      spans: () =>
        requests.filter((r) => r.path === "/v1/traces").flatMap((r) =>
          decode(r, jsonSpans, decodeSpans) as OtlpSpan[]
        ),
      metrics: () =>
        requests.filter((r) => r.path === "/v1/metrics").flatMap((r) =>
          decode(r, jsonMetrics, decodeMetrics as never) as OtlpMetric[]
        ),
      bodies: () => requests.map((r) => new TextDecoder().decode(r.body)).join("\n"),
      close,
      [Symbol.asyncDispose]: close,
    };
  });
}
