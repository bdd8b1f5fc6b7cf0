/**
 * The session's telemetry, one holder for every part of patchbay (as `lib/trace/active.ts`
 * holds the wire trace): spans for turns, model requests, tool calls and connection
 * attempts, and metrics. Off, it is {@linkcode ID_ONLY}: each span is only ids, made with
 * no package and nothing exported, so every MCP request still carries a valid
 * `traceparent` and the wire trace still records it. When the launcher started the client
 * with Deno's OpenTelemetry on (`OTEL_DENO=true`, docs/telemetry.md), `start.ts` puts the
 * exporting implementation (`otel.ts`, over `npm:@opentelemetry/api`) in its place.
 *
 * Parents are explicit: a span belongs to the span given, else to the turn running
 * ({@linkcode inTurn}), else it starts a trace. Nothing is taken from an ambient context,
 * so a loop a span happened to start (a server's liveness pings) never joins it later.
 *
 * @module
 */

import type { METRIC } from "./attributes.ts";
import { childContext, type TraceContext } from "./ids.ts";

/** What an attribute may hold. */
export type AttributeValue = string | number | boolean | readonly string[];

/** Attributes; an `undefined` value is left out. */
export type Attributes = Readonly<Record<string, AttributeValue | undefined>>;

/** One span: its ids, and what is learnt about it until it ends. */
export interface SpanHandle {
  readonly context: TraceContext;
  /** Whether it is exported (telemetry on). */
  readonly recording: boolean;
  /** Adds attributes; each string passes the session's redactor first. */
  set(attributes: Attributes): void;
  /**
   * Marks it failed: `error.type` (a low-cardinality class: an error code, `tool_error`,
   * a JSON-RPC code), the status ERROR with `message` (masked), and `attributes`.
   */
  fail(errorType: string, message?: string, attributes?: Attributes): void;
  /** Ends it; later calls are ignored. */
  end(): void;
}

/** Options of {@linkcode Telemetry.start}. */
export interface SpanOptions {
  /** `client` for a request to another process (a server, the model). @default "internal" */
  kind?: "client" | "internal";
  /**
   * The span it belongs to; `null` starts a new trace.
   * @default the turn running, else none
   */
  parent?: SpanHandle | TraceContext | null;
  attributes?: Attributes;
}

/** Counters. */
export type CounterName =
  | typeof METRIC.modelRequests
  | typeof METRIC.toolCalls
  | typeof METRIC.failures;
/** Histograms. */
export type HistogramName =
  | typeof METRIC.tokenUsage
  | typeof METRIC.operationDuration
  | typeof METRIC.mcpDuration;

/** A fetch function, as the transports and the model client take one. */
export type FetchFunction = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** The session's telemetry. */
export interface Telemetry {
  /** Spans and metrics are exported. */
  readonly exporting: boolean;
  /** Prompts, answers, tool arguments and results go into spans (`Telemetry.capture_content`). */
  readonly captureContent: boolean;
  start(name: string, options?: SpanOptions): SpanHandle;
  /**
   * Runs `fn` with `span` as the runtime's active span, so the spans Deno makes itself
   * (each `fetch`) are its children.
   */
  within<T>(span: SpanHandle, fn: () => T): T;
  add(metric: CounterName, value: number, attributes: Attributes): void;
  record(metric: HistogramName, value: number, attributes: Attributes): void;
  /**
   * `fetch` for requests to `url`; when the URL holds a secret (a key in its query), one that
   * Deno records no span of, since Deno's own span would carry the URL unmasked.
   */
  guardFetch(url: string, fetch: FetchFunction): FetchFunction;
  /**
   * `value` as an attribute when content is captured: JSON (text as it is), masked, cut to
   * `DEFAULTS.telemetry.maxContentChars`; `undefined` when content is not captured.
   */
  content(value: unknown): string | undefined;
}

/** A span that is only its ids. */
class IdSpan implements SpanHandle {
  readonly recording = false;
  constructor(readonly context: TraceContext) {}
  set(): void {}
  fail(): void {}
  end(): void {}
}

/** The context a new span's parent gives it (`undefined`: a new trace). */
export function parentContext(parent: SpanOptions["parent"]): TraceContext | undefined {
  if (parent === null) return undefined;
  if (parent === undefined) return turn?.context;
  return "context" in parent ? parent.context : parent;
}

/** Telemetry off: ids for `_meta` and the wire trace, nothing recorded or exported. */
export const ID_ONLY: Telemetry = {
  exporting: false,
  captureContent: false,
  start: (_name, options = {}) => new IdSpan(childContext(parentContext(options.parent))),
  within: (_span, fn) => fn(),
  add() {},
  record() {},
  guardFetch: (_url, fetch) => fetch,
  content: () => undefined,
};

let active: Telemetry = ID_ONLY;
let turn: SpanHandle | undefined;

/** The session's telemetry. */
export function activeTelemetry(): Telemetry {
  return active;
}

/** Makes `telemetry` the session's (tests, and `start.ts`). */
export function setActiveTelemetry(telemetry: Telemetry): void {
  active = telemetry;
}

/** The turn running, whose spans the model requests and tool calls made now belong to. */
export function currentTurn(): SpanHandle | undefined {
  return turn;
}

/**
 * Runs one turn as `span`: spans started meanwhile without a parent of their own belong to
 * it. One turn runs at a time; the one it interrupted, if any, is current again after it.
 */
export async function inTurn<T>(span: SpanHandle, fn: () => Promise<T>): Promise<T> {
  const before = turn;
  turn = span;
  try {
    return await active.within(span, fn);
  } finally {
    turn = before;
  }
}
