/**
 * W3C Trace Context ids (https://www.w3.org/TR/trace-context/) without any package: a
 * trace id, a span id, and the `traceparent` text that carries them. patchbay sends one in
 * the `_meta` of every MCP request (the MCP specification reserves `traceparent`,
 * `tracestate` and `baggage` there), whether or not telemetry is exported, so a server's
 * spans and a `--trace` line can always be matched.
 *
 * @module
 */

/** The place of one span in one trace, as `traceparent` carries it. */
export interface TraceContext {
  /** 32 lowercase hex digits, not all zero. */
  traceId: string;
  /** 16 lowercase hex digits, not all zero. */
  spanId: string;
  /** The `sampled` flag of `traceparent`. */
  sampled: boolean;
  /** The W3C `tracestate`, when there is one. */
  tracestate?: string;
}

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;
/** tracestate is at most 32 list members of at most 256 characters each (W3C). */
const MAX_TRACESTATE_CHARS = 512;

function randomHex(bytes: number): string {
  const buffer = crypto.getRandomValues(new Uint8Array(bytes));
  // All zero is the invalid id; one byte set makes it valid without skewing the rest.
  if (buffer.every((b) => b === 0)) buffer[bytes - 1] = 1;
  let hex = "";
  for (const b of buffer) hex += b.toString(16).padStart(2, "0");
  return hex;
}

/** A new random trace id. */
export function newTraceId(): string {
  return randomHex(16);
}

/** A new random span id. */
export function newSpanId(): string {
  return randomHex(8);
}

/**
 * A new span's context: a child of `parent` (same trace, new span id), or the root of a
 * new trace. Unless told, a span is marked sampled: the flag tells a server that the caller
 * may record the trace, which leaves the server's own sampling as it was without one.
 */
export function childContext(parent?: TraceContext, sampled = true): TraceContext {
  return {
    traceId: parent?.traceId ?? newTraceId(),
    spanId: newSpanId(),
    sampled: parent?.sampled ?? sampled,
    ...(parent?.tracestate ? { tracestate: parent.tracestate } : {}),
  };
}

/** Whether both ids have the W3C form and are not all zero. */
export function validContext(context: Pick<TraceContext, "traceId" | "spanId">): boolean {
  return TRACE_ID.test(context.traceId) && !/^0+$/.test(context.traceId) &&
    SPAN_ID.test(context.spanId) && !/^0+$/.test(context.spanId);
}

/** `00-<trace id>-<span id>-<flags>`, version 00. */
export function formatTraceparent(context: TraceContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.sampled ? "01" : "00"}`;
}

/** The context a `traceparent` carries; `undefined` for anything not of the W3C form. */
export function parseTraceparent(text: unknown): TraceContext | undefined {
  if (typeof text !== "string") return undefined;
  const match = TRACEPARENT.exec(text.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags] = match;
  // Version ff is invalid; version 00 has exactly four fields.
  if (version === "ff" || (version === "00" && text.trim().length !== 55)) return undefined;
  const context = { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 };
  return validContext(context) ? context : undefined;
}

/**
 * The `_meta` members that carry `context` in an MCP request: `traceparent`, and
 * `tracestate` when there is one (SEP-414: unprefixed keys, W3C values).
 */
export function traceMeta(context: TraceContext): Record<string, string> {
  const tracestate = context.tracestate?.slice(0, MAX_TRACESTATE_CHARS);
  return {
    traceparent: formatTraceparent(context),
    ...(tracestate ? { tracestate } : {}),
  };
}
