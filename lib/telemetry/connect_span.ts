/**
 * The span of one connection attempt (`connect <server>`): the start of a trace of its own,
 * whose children are the attempt's requests (the version probe, `initialize`, the first
 * lists). It ends connected (with the protocol revision and the tools listed) or failed,
 * counted by the row of the failure table its diagnosis belongs to.
 *
 * @module
 */

import type { ServerConfig } from "../config/types.ts";
import { CancelledError } from "../errors.ts";
import { ATTR, METRIC } from "./attributes.ts";
import { errorType, failureKind } from "./failure_kind.ts";
import { RequestTracer, type SessionDetails } from "./mcp_requests.ts";
import { activeTelemetry, type SpanHandle } from "./telemetry.ts";

/** One attempt's span and the tracer of its transport's requests. */
export class ConnectAttempt {
  readonly span: SpanHandle;
  readonly requests: RequestTracer;
  readonly #server: string;

  constructor(config: ServerConfig) {
    this.#server = config.name;
    const url = config.transport === "stdio" ? undefined : config.url;
    this.requests = new RequestTracer({ server: config.name, transport: config.transport, url });
    this.span = activeTelemetry().start(`connect ${config.name}`, {
      parent: null,
      attributes: {
        [ATTR.server]: config.name,
        [ATTR.networkTransport]: config.transport === "stdio" ? "pipe" : "tcp",
        ...(url ? { [ATTR.serverAddress]: new URL(url).hostname } : {}),
      },
    });
    this.requests.attempt = this.span;
  }

  /** The session is open and listed: later requests are no longer the attempt's. */
  connected(details: SessionDetails & { tools: number }): void {
    this.requests.attempt = undefined;
    this.span.set({
      [ATTR.mcpProtocolVersion]: details.protocolVersion,
      [ATTR.mcpSessionId]: details.sessionId,
      [ATTR.tools]: details.tools,
    });
    this.span.end();
  }

  /**
   * The attempt failed with `error` (the diagnosis), or was called off. `counted`: a failure
   * a person meets (not a probe that only decides how to connect again).
   */
  failed(error: unknown, counted = true): void {
    this.requests.attempt = undefined;
    this.requests.abandon();
    if (!counted || error instanceof CancelledError) {
      // Called off (closing, skipped) or started again another way: not a failure.
      this.span.set({ [ATTR.errorType]: errorType(error) });
      this.span.end();
      return;
    }
    const kind = failureKind(error);
    this.span.fail(errorType(error), (error as Error)?.message, { [ATTR.failureKind]: kind });
    this.span.end();
    activeTelemetry().add(METRIC.failures, 1, {
      [ATTR.failureKind]: kind,
      [ATTR.errorType]: errorType(error),
      [ATTR.failureDuring]: "connection",
      [ATTR.server]: this.#server,
    });
  }
}
