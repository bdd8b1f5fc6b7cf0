/**
 * Telemetry exported by Deno's own OpenTelemetry (`OTEL_DENO=true`): spans and metrics made
 * through `npm:@opentelemetry/api`, whose providers Deno registers itself, so there is no
 * exporter stack of patchbay's (docs/telemetry.md). Loaded only when telemetry is on
 * (`start.ts`); the session runs without this module, or the package, otherwise.
 *
 * Every string that goes into an attribute, a status or a metric passes the session's
 * redactor first; content (prompts, arguments, results) only when the person asked for it
 * (`Telemetry.capture_content`), masked and cut.
 *
 * @module
 */

import {
  type Attributes as OtelAttributes,
  type Context,
  context,
  type Counter,
  type Histogram,
  metrics,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { DEFAULTS } from "../defaults.ts";
import type { Redactor } from "../redact/redact.ts";
import { VERSION } from "../version.ts";
import {
  GENAI_DURATION_BUCKETS,
  MCP_DURATION_BUCKETS,
  METRIC,
  SCOPE,
  TOKEN_BUCKETS,
} from "./attributes.ts";
import { childContext, newSpanId, newTraceId, type TraceContext, validContext } from "./ids.ts";
import {
  type Attributes,
  type CounterName,
  type FetchFunction,
  type HistogramName,
  parentContext,
  type SpanHandle,
  type SpanOptions,
  type Telemetry,
} from "./telemetry.ts";

/** What each histogram measures, in which unit, with which buckets. */
const HISTOGRAMS: Readonly<
  Record<HistogramName, { unit: string; description: string; buckets: readonly number[] }>
> = {
  [METRIC.tokenUsage]: {
    unit: "{token}",
    description: "Tokens of one model request, by gen_ai.token.type",
    buckets: TOKEN_BUCKETS,
  },
  [METRIC.operationDuration]: {
    unit: "s",
    description: "Duration of one model request",
    buckets: GENAI_DURATION_BUCKETS,
  },
  [METRIC.mcpDuration]: {
    unit: "s",
    description: "Duration of one MCP request, from sending it to its answer",
    buckets: MCP_DURATION_BUCKETS,
  },
};

const COUNTERS: Readonly<Record<CounterName, { unit: string; description: string }>> = {
  [METRIC.modelRequests]: { unit: "{request}", description: "Model requests, by outcome" },
  [METRIC.toolCalls]: { unit: "{call}", description: "Tool calls, by server, tool and outcome" },
  [METRIC.failures]: {
    unit: "{failure}",
    description: "Failures, by row of the failure table (patchbay.failure.kind)",
  },
};

/** Options of {@linkcode OtelTelemetry}. */
export interface OtelTelemetryOptions {
  /** The session's redactor: every attribute string passes it. */
  redactor: Redactor;
  /** @default DEFAULTS.telemetry.captureContent */
  captureContent?: boolean;
}

/** Telemetry through Deno's exporter. */
export class OtelTelemetry implements Telemetry {
  readonly exporting = true;
  readonly captureContent: boolean;
  readonly #redactor: Redactor;
  readonly #tracer = trace.getTracer(SCOPE, VERSION);
  readonly #meter = metrics.getMeter(SCOPE, VERSION);
  readonly #counters = new Map<CounterName, Counter>();
  readonly #histograms = new Map<HistogramName, Histogram>();

  constructor(options: OtelTelemetryOptions) {
    this.#redactor = options.redactor;
    this.captureContent = options.captureContent ?? DEFAULTS.telemetry.captureContent;
  }

  start(name: string, options: SpanOptions = {}): SpanHandle {
    const parent = parentContext(options.parent);
    const span = this.#tracer.startSpan(
      name,
      {
        kind: options.kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL,
        attributes: this.#clean(options.attributes ?? {}),
        root: parent === undefined,
      },
      parent ? contextOf(parent) : ROOT_CONTEXT,
    );
    const ids = span.spanContext();
    const own = { traceId: ids.traceId, spanId: ids.spanId, sampled: true };
    // A runtime that exports no traces (OTEL_DENO_TRACING=false) hands out empty spans:
    // the ids are then patchbay's own, as when telemetry is off.
    return new OtelSpan(span, validContext(own) ? own : childContext(parent), this);
  }

  within<T>(span: SpanHandle, fn: () => T): T {
    if (!(span instanceof OtelSpan)) return fn();
    return context.with(trace.setSpan(context.active(), span.span), fn);
  }

  add(metric: CounterName, value: number, attributes: Attributes): void {
    let counter = this.#counters.get(metric);
    if (!counter) {
      counter = this.#meter.createCounter(metric, COUNTERS[metric]);
      this.#counters.set(metric, counter);
    }
    counter.add(value, this.#clean(attributes, false));
  }

  record(metric: HistogramName, value: number, attributes: Attributes): void {
    let histogram = this.#histograms.get(metric);
    if (!histogram) {
      const { unit, description, buckets } = HISTOGRAMS[metric];
      histogram = this.#meter.createHistogram(metric, {
        unit,
        description,
        advice: { explicitBucketBoundaries: [...buckets] },
      });
      this.#histograms.set(metric, histogram);
    }
    histogram.record(value, this.#clean(attributes, false));
  }

  guardFetch(url: string, fetch: FetchFunction): FetchFunction {
    if (this.#redactor.redact(url) === url) return fetch;
    // Under a parent that is not sampled, Deno records no span of its own (the launcher
    // starts the client with a parent-based sampler), and its span's URL is not exported.
    return (input, init) => context.with(unsampledContext(), () => fetch(input, init));
  }

  content(value: unknown): string | undefined {
    if (!this.captureContent || value === undefined) return undefined;
    const text = typeof value === "string" ? value : JSON.stringify(value) ?? String(value);
    return this.#text(text);
  }

  /** A masked string, cut to the content bound. */
  #text(value: string): string {
    const masked = this.#redactor.redact(value);
    const max = DEFAULTS.telemetry.maxContentChars;
    return masked.length <= max
      ? masked
      : `${masked.slice(0, max)}…[${masked.length - max} more characters]`;
  }

  /** `attributes` for the API: masked, undefined left out, counts as integers. */
  #clean(attributes: Attributes, integers = true): OtelAttributes {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(attributes)) {
      if (value === undefined) continue;
      if (typeof value === "string") out[key] = this.#text(value);
      else if (Array.isArray(value)) out[key] = value.map((v) => this.#text(String(v)));
      else if (integers && typeof value === "number" && Number.isSafeInteger(value) && value >= 0) {
        // Deno exports a bigint as an integer (intValue), a number as a double; the
        // conventions type counts (tokens, ports) as integers.
        out[key] = BigInt(value);
      } else out[key] = value;
    }
    return out as OtelAttributes;
  }

  /** Masks and cuts a status message. */
  mask(message: string): string {
    return this.#text(message);
  }

  /** Masks attributes for a span. */
  clean(attributes: Attributes): OtelAttributes {
    return this.#clean(attributes);
  }
}

/** One exported span. */
class OtelSpan implements SpanHandle {
  readonly recording = true;
  #ended = false;

  constructor(
    readonly span: Span,
    readonly context: TraceContext,
    readonly owner: OtelTelemetry,
  ) {}

  set(attributes: Attributes): void {
    if (!this.#ended) this.span.setAttributes(this.owner.clean(attributes));
  }

  fail(errorType: string, message?: string, attributes: Attributes = {}): void {
    if (this.#ended) return;
    this.span.setAttributes(this.owner.clean({ ...attributes, "error.type": errorType }));
    this.span.setStatus({
      code: SpanStatusCode.ERROR,
      ...(message ? { message: this.owner.mask(message) } : {}),
    });
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.span.end();
  }
}

/** A context whose span is `parent` (a span of this trace, or one of patchbay's ids). */
function contextOf(parent: TraceContext): Context {
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: parent.traceId,
    spanId: parent.spanId,
    traceFlags: parent.sampled ? 1 : 0,
  });
}

/** A context under which nothing is sampled. */
function unsampledContext(): Context {
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: newTraceId(),
    spanId: newSpanId(),
    traceFlags: 0,
  });
}
