/**
 * What the tests' OTLP receiver decodes (`otlp_receiver.ts`), in a module of its own so the
 * protobuf reader (`otlp_protobuf.ts`) and the receiver share it without importing each other.
 *
 * @module
 */

/** One span as exported. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  /** code 2 is ERROR. */
  status: { code: number; message: string };
  scope: string;
  resource: Record<string, unknown>;
}

/** One metric as exported, with the attributes of each of its data points. */
export interface OtlpMetric {
  name: string;
  scope: string;
  points: Record<string, unknown>[];
}
