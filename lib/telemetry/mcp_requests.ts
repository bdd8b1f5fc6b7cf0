/**
 * Trace context on the wire: every request patchbay sends to a server carries
 * `traceparent` (and `tracestate` when there is one) in its `_meta`, as the MCP
 * specification reserves them (SEP-414), so the server's spans join patchbay's trace. The
 * transports call {@linkcode RequestTracer.outgoing} before a message is written (and
 * before the wire trace sees it, so the trace records the ids sent).
 *
 * A request that already carries a `traceparent` keeps it (a tool call's is its tool-call
 * span's). Any other gets a span of its own, a child of the connection attempt while one
 * runs, else of the turn running; one sent outside both (a liveness ping, a list refreshed
 * after `list_changed`) gets fresh ids and no span. With telemetry on, each span ends
 * with the request's answer (its JSON-RPC error, if any), and every request's duration is
 * recorded (`mcp.client.operation.duration`).
 *
 * @module
 */

import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { DEFAULTS } from "../defaults.ts";
import type { MessageObserver, TransportEvent } from "../transports/observer.ts";
import { ATTR, METRIC, OPERATION } from "./attributes.ts";
import { parseTraceparent, traceMeta } from "./ids.ts";
import {
  activeTelemetry,
  type Attributes,
  currentTurn,
  ID_ONLY,
  type SpanHandle,
} from "./telemetry.ts";

/** How a server is reached, as its spans say. */
export interface RequestTracerOptions {
  /** The server's name in the configuration. */
  server: string;
  transport: "stdio" | "streamable_http" | "sse";
  /** An HTTP server's address. */
  url?: string;
  /** @default DEFAULTS.telemetry.maxPendingRequests */
  maxPending?: number;
}

/** What is known of the session once it is open. */
export interface SessionDetails {
  sessionId?: string;
  protocolVersion?: string;
}

interface Pending {
  span?: SpanHandle;
  started: number;
  attributes: Attributes;
}

type Message = {
  id?: string | number | null;
  method?: unknown;
  params?: Record<string, unknown>;
  error?: { code?: number; message?: string };
};

/** Stamps and follows one transport's requests. */
export class RequestTracer implements MessageObserver {
  /** The connection attempt's span, while it runs: the requests it makes are its children. */
  attempt?: SpanHandle;
  /** The session's id and protocol revision, once known. */
  details: () => SessionDetails = () => ({});
  readonly #options: RequestTracerOptions;
  readonly #common: Attributes;
  readonly #pending = new Map<string, Pending>();

  constructor(options: RequestTracerOptions) {
    this.#options = options;
    const url = options.url ? new URL(options.url) : undefined;
    this.#common = {
      [ATTR.server]: options.server,
      [ATTR.networkTransport]: options.transport === "stdio" ? "pipe" : "tcp",
      ...(url
        ? {
          [ATTR.serverAddress]: url.hostname,
          [ATTR.serverPort]: Number(url.port || (url.protocol === "https:" ? 443 : 80)),
        }
        : {}),
    };
  }

  /** `message` as it is to be sent: a request with the trace context in its `_meta`. */
  outgoing(message: JSONRPCMessage): JSONRPCMessage {
    const m = message as Message;
    if (typeof m.method !== "string") return message;
    if (m.id === undefined || m.id === null) {
      if (m.method === "notifications/cancelled") this.#cancelled(m.params?.requestId);
      return message;
    }
    const params = m.params ?? {};
    const meta = (params._meta ?? {}) as Record<string, unknown>;
    const attributes = this.#attributes(m.method, params, m.id);
    const telemetry = activeTelemetry();
    const given = parseTraceparent(meta.traceparent);
    let span: SpanHandle | undefined;
    if (!given) {
      const parent = this.attempt ?? currentTurn();
      span = (parent ? telemetry : ID_ONLY).start(spanName(m.method, params), {
        kind: "client",
        parent: parent ?? null,
        attributes,
      });
    }
    if (telemetry.exporting) {
      this.#remember(String(m.id), {
        span: span?.recording ? span : undefined,
        started: performance.now(),
        attributes,
      });
    }
    if (!span) return message;
    return {
      ...message,
      params: { ...params, _meta: { ...meta, ...traceMeta(span.context) } },
    } as JSONRPCMessage;
  }

  /** Ends the span of a request when its answer arrives. */
  received(message: JSONRPCMessage): void {
    const m = message as Message;
    if (m.method !== undefined || m.id === undefined || m.id === null) return;
    const pending = this.#pending.get(String(m.id));
    if (!pending) return;
    this.#pending.delete(String(m.id));
    const code = m.error ? String(m.error.code ?? "_OTHER") : undefined;
    this.#finish(pending, code, m.error?.message);
  }

  /** A stdio server's process ended: no request of it will be answered now. */
  event(event: TransportEvent): void {
    if (event.event === "exit") this.abandon();
  }

  /** Ends every request still waiting (the transport closed, the attempt failed). */
  abandon(): void {
    for (const pending of this.#pending.values()) {
      this.#finish(pending, "connection_closed", "the connection ended before the answer");
    }
    this.#pending.clear();
  }

  #cancelled(requestId: unknown): void {
    const key = String(requestId);
    const pending = this.#pending.get(key);
    if (!pending) return;
    this.#pending.delete(key);
    this.#finish(pending, "cancelled", "patchbay cancelled the request");
  }

  #finish(pending: Pending, errorType: string | undefined, message?: string): void {
    const outcome: Attributes = errorType
      ? {
        [ATTR.errorType]: errorType,
        ...(/^-?\d+$/.test(errorType) ? { [ATTR.rpcStatusCode]: errorType } : {}),
      }
      : {};
    activeTelemetry().record(
      METRIC.mcpDuration,
      (performance.now() - pending.started) / 1000,
      { ...metricAttributes(pending.attributes), ...outcome },
    );
    if (!pending.span) return;
    if (errorType) pending.span.fail(errorType, message, outcome);
    pending.span.end();
  }

  #remember(id: string, pending: Pending): void {
    const max = this.#options.maxPending ?? DEFAULTS.telemetry.maxPendingRequests;
    if (this.#pending.size >= max) {
      // A request never answered must not grow memory: the oldest is given up.
      const [oldest, entry] = this.#pending.entries().next().value!;
      this.#pending.delete(oldest);
      entry.span?.end();
    }
    this.#pending.set(id, pending);
  }

  #attributes(method: string, params: Record<string, unknown>, id: string | number): Attributes {
    const details = this.details();
    const name = typeof params.name === "string" ? params.name : undefined;
    return {
      ...this.#common,
      [ATTR.mcpMethod]: method,
      [ATTR.jsonrpcRequestId]: String(id),
      [ATTR.mcpSessionId]: details.sessionId,
      [ATTR.mcpProtocolVersion]: details.protocolVersion,
      ...(method === "tools/call"
        ? { [ATTR.toolName]: name, [ATTR.operationName]: OPERATION.tool }
        : {}),
      ...(method === "prompts/get" ? { [ATTR.promptName]: name } : {}),
    };
  }
}

/** `{mcp.method.name} {target}`: the tool or prompt, the names being few. */
function spanName(method: string, params: Record<string, unknown>): string {
  const target = (method === "tools/call" || method === "prompts/get") &&
      typeof params.name === "string"
    ? ` ${params.name}`
    : "";
  return `${method}${target}`;
}

/** The attributes of a duration: the few values, not the request's id or session. */
function metricAttributes(attributes: Attributes): Attributes {
  const {
    [ATTR.jsonrpcRequestId]: _id,
    [ATTR.mcpSessionId]: _session,
    [ATTR.serverPort]: _port,
    ...rest
  } = attributes;
  return rest;
}
