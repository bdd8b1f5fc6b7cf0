/**
 * The shape of one line of a wire trace (docs/trace.md): one JSON object per line, for a
 * JSON-RPC message, an HTTP exchange, a connection event or a model request.
 *
 * @module
 */

import type { HttpExchange } from "../transports/observer.ts";

/** How a server is reached. */
export type TraceTransport = "stdio" | "streamable_http" | "sse";

/** `out`: patchbay to the server; `in`: the server to patchbay. */
export type TraceDirection = "out" | "in";

/** Fields every line has. */
interface LineBase {
  /** ISO 8601 time the line was recorded. */
  t: string;
  /** The configured server name (absent on model lines). */
  server?: string;
}

/** A JSON-RPC message as sent or received. */
export interface MessageLine extends LineBase {
  kind: "message";
  server: string;
  transport: TraceTransport;
  dir: TraceDirection;
  /** The JSON-RPC id, for requests and responses. */
  id?: string | number;
  /** The request's method; on a response, the method of the request it answers. */
  method?: string;
  /** `request`, `notification`, `result` or `error`. */
  type: "request" | "notification" | "result" | "error";
  /** On a response: milliseconds since its request was sent or received. */
  ms?: number;
  /** On an error response: its code and message. */
  error?: { code?: number; message?: string };
  /** Size of the message as written on the wire, in bytes of UTF-8 JSON. */
  bytes: number;
  /** The message (masked); when cut, the start of its JSON text. */
  message: unknown;
  /** Present when the message was longer than the bound: what was kept of how much. */
  cut?: { kept: number; chars: number };
  /**
   * On a request: the trace and span ids of its `traceparent` (docs/telemetry.md); on a
   * response, those of the request it answers. The span's, when telemetry is exported.
   */
  trace_id?: string;
  span_id?: string;
}

/**
 * One HTTP exchange of a network transport (the request line, and the response head), as
 * the transport reports it ({@linkcode HttpExchange}).
 */
export interface HttpLine extends LineBase, HttpExchange {
  kind: "http";
  server: string;
  transport: TraceTransport;
}

/**
 * The event of an entry without `transport_type` whose url answered streamable HTTP the
 * legacy way, reached over SSE from then on (`transport`, `reason`).
 */
export const FALLBACK_EVENT = "fallback";

/** Something that happened to a connection or a process. */
export interface EventLine extends LineBase {
  kind: "event";
  /** `spawn`, `exit`, `state`, `oauth`, `trace`, … */
  event: string;
  [field: string]: unknown;
}

/** A request to the model provider (with `--trace-model`). */
export interface ModelLine extends LineBase {
  kind: "model";
  [field: string]: unknown;
}

/** Any line of a trace. */
export type TraceLine = MessageLine | HttpLine | EventLine | ModelLine;

/** A line before it is stamped with its time. */
export type UnstampedLine = TraceLine extends infer L
  ? L extends TraceLine ? Omit<L, "t"> & { t?: string } : never
  : never;
