/**
 * A look at JSON-RPC messages as they cross a transport, before the SDK parses them: what
 * the server wrote, key order included (the SDK's schemas rebuild objects). The wire trace
 * (docs/trace.md) also hears what happens to the process or the HTTP exchanges around them.
 *
 * @module
 */

import type { JSONRPCMessage } from "@modelcontextprotocol/client";

/** Something that happened to a stdio server's process. */
export type TransportEvent =
  | { event: "spawn"; pid: number; command: string; args: readonly string[] }
  | { event: "exit"; pid: number; code: number; signal: string | null };

/** One HTTP exchange: the request, and the head of its response (or why none came). */
export interface HttpExchange {
  method: string;
  url: string;
  status?: number;
  /** Milliseconds to the response head. */
  ms: number;
  /** The request headers that matter for troubleshooting (never a credential). */
  request: Record<string, string>;
  response?: Record<string, string>;
  request_bytes?: number;
  response_bytes?: number;
  failure?: string;
}

/** Told of every message a transport sends and receives; must not throw or modify them. */
export interface MessageObserver {
  sent?(message: JSONRPCMessage): void;
  received?(message: JSONRPCMessage): void;
  /** A process started or ended (stdio). */
  event?(event: TransportEvent): void;
  /** An HTTP exchange finished its head (network transports), when `exchanges` is true. */
  exchange?(exchange: HttpExchange): void;
  /** Whether exchanges are wanted now: measuring them costs a clock read per request. */
  readonly exchanges?: boolean;
}
