/**
 * Just enough of a protobuf reader for OTLP export requests (opentelemetry-proto, `trace/v1`
 * and `metrics/v1`): spans with their ids, names, kinds, attributes and status, and
 * metrics with the attributes of their data points. Read by field number from the wire
 * format; fields it does not know are skipped. For the tests' OTLP receiver: no package.
 *
 * @module
 */

import type { OtlpMetric, OtlpSpan } from "./otlp_types.ts";

type Field = { no: number; wire: number; value: bigint | Uint8Array };

const decoder = new TextDecoder("utf-8", { fatal: true });

function varint(bytes: Uint8Array, at: number): [bigint, number] {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    if (at >= bytes.length) throw new Error("truncated varint");
    const b = bytes[at++];
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [result, at];
    shift += 7n;
  }
}

/** The fields of one message, in order. */
export function fields(bytes: Uint8Array): Field[] {
  const out: Field[] = [];
  let at = 0;
  while (at < bytes.length) {
    const [key, next] = varint(bytes, at);
    at = next;
    const no = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) {
      const [value, after] = varint(bytes, at);
      out.push({ no, wire, value });
      at = after;
    } else if (wire === 1 || wire === 5) {
      const size = wire === 1 ? 8 : 4;
      out.push({ no, wire, value: bytes.subarray(at, at + size) });
      at += size;
    } else if (wire === 2) {
      const [length, after] = varint(bytes, at);
      out.push({ no, wire, value: bytes.subarray(after, after + Number(length)) });
      at = after + Number(length);
    } else {
      throw new Error(`unsupported wire type ${wire}`);
    }
  }
  return out;
}

const all = (bytes: Uint8Array, no: number) =>
  fields(bytes).filter((f) => f.no === no).map((f) => f.value as Uint8Array);
const one = (bytes: Uint8Array, no: number) => fields(bytes).find((f) => f.no === no)?.value;
const text = (value: unknown) => value instanceof Uint8Array ? decoder.decode(value) : "";
const hex = (value: unknown) =>
  value instanceof Uint8Array
    ? [...value].map((b) => b.toString(16).padStart(2, "0")).join("")
    : "";

/** An `AnyValue`: string, bool, int, double, or an array of them. */
function anyValue(bytes: Uint8Array): unknown {
  const [field] = fields(bytes);
  if (!field) return undefined;
  switch (field.no) {
    case 1:
      return text(field.value);
    case 2:
      return field.value === 1n;
    case 3:
      return Number(BigInt.asIntN(64, field.value as bigint));
    case 4:
      return new DataView((field.value as Uint8Array).slice().buffer).getFloat64(0, true);
    case 5:
      return all(field.value as Uint8Array, 1).map(anyValue);
    default:
      return undefined;
  }
}

/** `KeyValue`s as an object. */
function attributes(list: Uint8Array[]): Record<string, unknown> {
  return Object.fromEntries(
    list.map((kv) => [text(one(kv, 1)), anyValue((one(kv, 2) as Uint8Array) ?? new Uint8Array())]),
  );
}

/** The spans of an `ExportTraceServiceRequest`. */
export function decodeSpans(body: Uint8Array): OtlpSpan[] {
  const spans: OtlpSpan[] = [];
  for (const resourceSpans of all(body, 1)) {
    const resource = attributes(all((one(resourceSpans, 1) as Uint8Array) ?? new Uint8Array(), 1));
    for (const scopeSpans of all(resourceSpans, 2)) {
      const scope = text(one((one(scopeSpans, 1) as Uint8Array) ?? new Uint8Array(), 1));
      for (const span of all(scopeSpans, 2)) {
        const status = one(span, 15) as Uint8Array | undefined;
        spans.push({
          traceId: hex(one(span, 1)),
          spanId: hex(one(span, 2)),
          parentSpanId: hex(one(span, 4)),
          name: text(one(span, 5)),
          kind: Number(one(span, 6) ?? 0n),
          attributes: attributes(all(span, 9)),
          status: {
            code: status ? Number(one(status, 3) ?? 0n) : 0,
            message: status ? text(one(status, 2)) : "",
          },
          scope,
          resource,
        });
      }
    }
  }
  return spans;
}

/** The metrics of an `ExportMetricsServiceRequest`, with their data points' attributes. */
export function decodeMetrics(body: Uint8Array): OtlpMetric[] {
  const metrics: OtlpMetric[] = [];
  for (const resourceMetrics of all(body, 1)) {
    for (const scopeMetrics of all(resourceMetrics, 2)) {
      const scope = text(one((one(scopeMetrics, 1) as Uint8Array) ?? new Uint8Array(), 1));
      for (const metric of all(scopeMetrics, 2)) {
        // sum = 7 (NumberDataPoint.attributes = 7), histogram = 9 (HistogramDataPoint = 9).
        const sum = one(metric, 7) as Uint8Array | undefined;
        const histogram = one(metric, 9) as Uint8Array | undefined;
        const points = sum
          ? all(sum, 1).map((p) => attributes(all(p, 7)))
          : histogram
          ? all(histogram, 1).map((p) => attributes(all(p, 9)))
          : [];
        metrics.push({ name: text(one(metric, 1)), scope, points });
      }
    }
  }
  return metrics;
}
