/**
 * The `fetch` every HTTP transport uses: the configured `timeout` bounds the wait for
 * response headers, `sse_read_timeout` bounds the silence of an event stream (a silent
 * stream is cut, and the SDK reopens it with `Last-Event-ID`), every message is bounded
 * by `MAX_MESSAGE_BYTES` like a stdio line (a response body, or the data of one event: an
 * endless `data:` line must not grow memory), and event-stream fields are observed on the
 * way through (the legacy SSE transport needs the last event id and the announced
 * endpoint, which the SDK does not expose).
 *
 * @module
 */

import type { FetchLike } from "@modelcontextprotocol/client";
import { setTimer } from "../async/timers.ts";
import { MAX_MESSAGE_BYTES, MessageTooLargeError } from "./limits.ts";
import { EventStreamScanner, type StreamEvent } from "./event_stream.ts";

export type { StreamEvent };

/** Options of {@linkcode createTimedFetch}. */
export interface TimedFetchOptions {
  /** Longest wait for response headers (ms). */
  headersTimeoutMs: number;
  /** Longest silence on an event stream before it is cut (ms). */
  readTimeoutMs: number;
  /** Called for each event of every event stream. */
  onEvent?: (event: StreamEvent) => void;
  /** Called when a silent stream is cut. */
  onReadTimeout?: (url: string) => void;
  /** Adds headers to a request (e.g. `Last-Event-ID` on a stream reopened by the SDK). */
  decorate?: (url: string, init: RequestInit) => RequestInit;
  /**
   * Largest message: bytes of a response body, characters of one event's data.
   * @default MAX_MESSAGE_BYTES
   */
  maxMessageBytes?: number;
  /**
   * Called when a response carries a larger message; its body then fails with the same
   * {@linkcode MessageTooLargeError}, and nothing more of it is read.
   */
  onOversize?: (error: MessageTooLargeError) => void;
  /** The underlying fetch. @default globalThis.fetch */
  fetch?: FetchLike;
}

/** An HTTP response that did not arrive within the headers timeout. */
export class HeadersTimeoutError extends Error {
  constructor(url: string, ms: number) {
    super(`no response from ${url} within ${ms / 1000} s`);
    this.name = "HeadersTimeoutError";
  }
}

/** A fetch with the timeouts and stream observation described in the module doc. */
export function createTimedFetch(options: TimedFetchOptions): FetchLike {
  const base: FetchLike = options.fetch ?? ((url, init) => fetch(url, init));
  return async (input, init = {}) => {
    const url = String(input);
    const request = options.decorate ? options.decorate(url, init) : init;
    // The caller's signal still aborts the request; ours adds the timeouts. The caller's
    // is forwarded by a listener removed once the exchange is over: it lives as long as
    // the transport, so listeners must not pile up. Not by AbortSignal.any: its combined
    // signal is held only weakly by the caller's, and once garbage-collected the caller's
    // abort no longer reached an open event stream, which then stayed open after close.
    const controller = new AbortController();
    const caller = request.signal;
    const forward = () => controller.abort(caller?.reason);
    const release = () => caller?.removeEventListener("abort", forward);
    if (caller?.aborted) forward();
    else caller?.addEventListener("abort", forward, { once: true });
    const timer = setTimer(
      () => controller.abort(new HeadersTimeoutError(url, options.headersTimeoutMs)),
      options.headersTimeoutMs,
    );
    let response: Response;
    try {
      response = await base(input, { ...request, signal: controller.signal });
    } catch (error) {
      release();
      throw controller.signal.reason instanceof HeadersTimeoutError
        ? controller.signal.reason
        : error;
    } finally {
      clearTimeout(timer);
    }
    const maxBytes = options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
    const oversize = (seen: number) => {
      const error = new MessageTooLargeError(maxBytes, seen, `the server at ${url}`);
      options.onOversize?.(error);
      return error;
    };
    const declared = Number(response.headers.get("content-length") ?? NaN);
    if (response.body && declared > maxBytes) {
      release();
      await response.body.cancel().catch(() => {});
      throw oversize(declared);
    }
    const type = response.headers.get("content-type") ?? "";
    if (!response.body || !type.toLowerCase().startsWith("text/event-stream")) {
      // A plain answer is read at once; the event streams are what a close must end.
      release();
      if (!response.body) return response;
      return new Response(capBody(response.body, maxBytes, oversize), {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    }
    const body = watchStream(response.body, {
      maxChars: maxBytes,
      oversize,
      idleMs: options.readTimeoutMs,
      onIdle: () => {
        options.onReadTimeout?.(url);
        controller.abort(new Error(`event stream silent for ${options.readTimeoutMs / 1000} s`));
      },
      onEvent: options.onEvent,
      onEnd: release,
      signal: controller.signal,
    });
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** `body`, failing with `oversize(seen)` once more than `maxBytes` bytes arrived. */
function capBody(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  oversize: (seen: number) => MessageTooLargeError,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let seen = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await reader.read();
        if (done) return controller.close();
        seen += value.length;
        if (seen > maxBytes) {
          controller.error(oversize(seen));
          await reader.cancel().catch(() => {});
          return;
        }
        controller.enqueue(value);
      } catch (error) {
        controller.error(error);
      }
    },
    async cancel(reason) {
      await reader.cancel(reason).catch(() => {});
    },
  });
}

interface WatchOptions {
  /** Largest data of one event, in characters. */
  maxChars: number;
  oversize: (seen: number) => MessageTooLargeError;
  idleMs: number;
  onIdle: () => void;
  onEvent?: (event: StreamEvent) => void;
  /** Called once when the stream ends, fails or is cancelled. */
  onEnd?: () => void;
  /** Aborting ends the stream with its reason and releases the connection. */
  signal: AbortSignal;
}

/** Passes the stream through unchanged, timing its silences and parsing its events. */
function watchStream(
  source: ReadableStream<Uint8Array>,
  options: WatchOptions,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  const scanner = new EventStreamScanner((event) => options.onEvent?.(event), options.maxChars);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let output!: ReadableStreamDefaultController<Uint8Array>;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimer(options.onIdle, options.idleMs);
  };
  // The response is cancelled here, not left to fetch's own abort handling: under Deno
  // that did not always close a stream whose reading had moved to this wrapper (seen
  // after garbage collection), and the server kept the event stream open after close.
  const onAbort = () => {
    finish();
    try {
      output.error(options.signal.reason);
    } catch {
      // Already closed or errored.
    }
    reader.cancel(options.signal.reason).catch(() => {});
  };
  const finish = () => {
    clearTimeout(timer);
    options.signal.removeEventListener("abort", onAbort);
    options.onEnd?.();
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      output = controller;
      if (options.signal.aborted) return onAbort();
      options.signal.addEventListener("abort", onAbort, { once: true });
      arm();
    },
    async pull(controller) {
      try {
        const { value, done } = await reader.read();
        if (done) {
          finish();
          controller.close();
          return;
        }
        arm();
        const overflow = scanner.push(value);
        if (overflow !== undefined) {
          // Nothing more is read or passed on: the reader downstream holds at most the cap.
          finish();
          const error = options.oversize(overflow);
          controller.error(error);
          await reader.cancel(error).catch(() => {});
          return;
        }
        controller.enqueue(value);
      } catch (error) {
        finish();
        controller.error(error);
      }
    },
    async cancel(reason) {
      finish();
      await reader.cancel(reason).catch(() => {});
    },
  });
}
