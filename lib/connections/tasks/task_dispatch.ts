/**
 * The raw request path ext-tasks needs for a 2026-07-28 Tasks server: the SDK's own codecs
 * reject the extension's wire shapes (a `tools/call` answered with `resultType: "task"`,
 * the `tasks/*` methods), so these requests are written to the session's transport
 * directly, with ids of their own (`patchbay-task-<n>`), and their answers taken off the
 * transport before the SDK sees them. Everything else still goes through the SDK.
 *
 * @module
 */

import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import type {
  DispatchOptions,
  JsonRpcResponse,
  RawClientDispatch,
  V2RequestFraming,
} from "@modelcontextprotocol/ext-tasks/client";
import { timerDelay } from "../../async/timers.ts";
import type { ServerSession } from "../session/live_session.ts";

/** The SDK's own default request timeout, used when ext-tasks gives none. */
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** What ext-tasks needs to speak 2026-07-28 Tasks on `session`. */
export function rawTaskDispatch(
  session: ServerSession,
): { rawDispatch: RawClientDispatch; v2RequestFraming: V2RequestFraming } {
  const dispatcher = new RawDispatcher(session);
  return {
    rawDispatch: (request, options) => dispatcher.dispatch(request, options),
    v2RequestFraming: {
      protocolVersion: session.protocolVersion ?? "2026-07-28",
      clientInfo: { ...session.framing.clientInfo },
      clientCapabilities: JSON.parse(JSON.stringify(session.framing.capabilities)),
    },
  };
}

interface Waiting {
  resolve: (response: JsonRpcResponse) => void;
  reject: (error: unknown) => void;
}

/** Sends raw requests on a session's transport and routes their answers back. */
class RawDispatcher {
  readonly #session: ServerSession;
  readonly #waiting = new Map<string, Waiting>();
  #next = 0;
  #installed = false;

  constructor(session: ServerSession) {
    this.#session = session;
  }

  async dispatch(request: unknown, options: DispatchOptions = {}): Promise<JsonRpcResponse> {
    this.#install();
    const { method, params } = request as { method: string; params?: Record<string, unknown> };
    const id = `patchbay-task-${++this.#next}`;
    const answer = new Promise<JsonRpcResponse>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
    });
    const timeoutMs = options.context?.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const timer = setTimeout(
      () => this.#fail(id, new Error(`${method} got no answer within ${timeoutMs} ms`)),
      timerDelay(timeoutMs),
    );
    const onAbort = () => this.#fail(id, options.signal?.reason ?? new Error("aborted"));
    options.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const message = { jsonrpc: "2.0", id, method, ...(params ? { params } : {}) };
      await this.#session.transport.send(message as JSONRPCMessage);
      return await answer;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      this.#waiting.delete(id);
    }
  }

  #fail(id: string, error: unknown): void {
    this.#waiting.get(id)?.reject(error);
    this.#waiting.delete(id);
  }

  /** Puts the router in front of the SDK's message handler (once). */
  #install(): void {
    if (this.#installed) return;
    this.#installed = true;
    const transport = this.#session.transport;
    const sdk = transport.onmessage;
    transport.onmessage = (message) => {
      const m = message as { id?: unknown; result?: unknown; error?: unknown };
      const waiting = typeof m.id === "string" ? this.#waiting.get(m.id) : undefined;
      if (!waiting) return sdk?.(message);
      if (m.error && typeof m.error === "object") {
        const error = m.error as { code?: unknown; message?: unknown; data?: unknown };
        waiting.resolve({
          kind: "error",
          error: {
            code: typeof error.code === "number" ? error.code : -32603,
            message: typeof error.message === "string" ? error.message : "error",
            ...(error.data === undefined ? {} : { data: error.data as never }),
          },
        });
      } else {
        waiting.resolve({ kind: "result", result: (m.result ?? {}) as never });
      }
    };
    const closed = transport.onclose;
    transport.onclose = () => {
      for (const [id] of this.#waiting) this.#fail(id, new Error("the connection closed"));
      closed?.();
    };
  }
}
