/**
 * The HTTP exchanges of a network transport, for the wire trace: method, URL, status, the
 * headers that matter for troubleshooting (session id, protocol version, content type, the
 * authorization scheme: never the credential) and the sizes. Seen at the innermost fetch,
 * so what is recorded is what went on the network, after OAuth set its headers.
 *
 * @module
 */

import type { FetchLike } from "@modelcontextprotocol/client";
import { utf8Length } from "../trace/recorder.ts";
import type { MessageObserver } from "./observer.ts";

/** Request headers recorded as they are. */
const REQUEST_HEADERS = [
  "mcp-session-id",
  "mcp-protocol-version",
  // The request's method (2026-07-28): which POST carried what, e.g. the server/discover
  // probe a 2025-era server refuses.
  "mcp-method",
  "content-type",
  "accept",
  "last-event-id",
] as const;

/** Response headers recorded as they are. */
const RESPONSE_HEADERS = [
  "mcp-session-id",
  "mcp-protocol-version",
  "content-type",
  "www-authenticate",
  "retry-after",
] as const;

/** Longest header value kept (a hostile server's header must not fill the trace). */
const MAX_HEADER_CHARS = 512;

/** `base`, telling `observer` of each exchange while it wants them. */
export function observeExchanges(base: FetchLike, observer: MessageObserver): FetchLike {
  // Without a trace, a request costs one check: no clock read, no promise of its own.
  return (input, init = {}) => observer.exchanges ? observed(input, init) : base(input, init);

  async function observed(input: string | URL, init: RequestInit): Promise<Response> {
    const started = performance.now();
    const headers = new Headers(init.headers);
    const request = pick(headers, REQUEST_HEADERS);
    const authorization = headers.get("authorization");
    if (authorization) request.authorization = authorization.split(/\s+/, 1)[0];
    const common = {
      method: init.method ?? "GET",
      url: String(input),
      request,
      ...(typeof init.body === "string" ? { request_bytes: utf8Length(init.body) } : {}),
    };
    let response: Response;
    try {
      response = await base(input, init);
    } catch (error) {
      observer.exchange?.({
        ...common,
        ms: elapsed(started),
        failure: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
      throw error;
    }
    const length = Number(response.headers.get("content-length") ?? NaN);
    observer.exchange?.({
      ...common,
      status: response.status,
      ms: elapsed(started),
      response: pick(response.headers, RESPONSE_HEADERS),
      ...(Number.isFinite(length) ? { response_bytes: length } : {}),
    });
    return response;
  }
}

function pick(headers: Headers, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = headers.get(name);
    if (value !== null) out[name] = value.slice(0, MAX_HEADER_CHARS);
  }
  return out;
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 100) / 100;
}
