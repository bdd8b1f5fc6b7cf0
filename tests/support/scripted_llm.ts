/**
 * A scripted OpenAI-compatible model server for tests: answers `/v1/chat/completions`
 * (streamed or not) from a queue of replies, records every request it receives, and can
 * misbehave on cue (401, 429 with retry-after, a connection dropped mid-stream, a slow
 * stream). Listens on 127.0.0.1, port chosen by the system.
 *
 * @module
 */

/** A tool call the scripted model makes. */
export interface ScriptedToolCall {
  name: string;
  /** An object is sent as its JSON text; a string is sent as it is (for invalid JSON). */
  arguments: Record<string, unknown> | string;
  /** @default "call_<n>" */
  id?: string;
}

/** One scripted answer. */
export interface ScriptedReply {
  /** Answer text. */
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /** @default "tool_calls" with tool calls, else "stop" */
  finishReason?: string;
  /**
   * Usage reported (in the final stream chunk when the client asked for it, or in the
   * JSON answer); `null` reports none. @default DEFAULT_USAGE
   */
  usage?: {
    prompt_tokens: number;
    completion_tokens: number;
    /** OpenAI's cached prompt tokens (part of `prompt_tokens`). */
    prompt_tokens_details?: { cached_tokens: number };
  } | null;
  /** Answer with this HTTP status and an OpenAI-style error body instead. */
  status?: number;
  /** Error body message for `status`. */
  errorMessage?: string;
  /** Error body code for `status` (e.g. "insufficient_quota"). */
  errorCode?: string;
  /** Extra response headers (e.g. `retry-after`). */
  headers?: Record<string, string>;
  /** Characters of text per stream chunk. @default 4 */
  chunkChars?: number;
  /** Pause between stream chunks. @default 0 */
  chunkDelayMs?: number;
  /** Pause before the response headers. @default 0 */
  delayMs?: number;
  /** Break the connection after this many stream chunks (no [DONE]). */
  dropAfterChunks?: number;
  /** Model name reported. @default the requested model */
  model?: string;
}

/** Usage reported when a reply names none. */
export const DEFAULT_USAGE = { prompt_tokens: 100, completion_tokens: 10 } as const;

/**
 * Usage as patchbay reports it for a request the model server counted: `prompt` and
 * `completion` tokens, their sum, not estimated.
 */
export function reportedUsage(prompt: number, completion: number) {
  return {
    promptTokens: prompt,
    completionTokens: completion,
    totalTokens: prompt + completion,
    estimated: false,
  };
}

/** What the server saw of one request. */
export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  // deno-lint-ignore no-explicit-any
  body: any;
  /** performance.now() when it arrived. */
  receivedAt: number;
  /** Milliseconds from arrival to the last byte sent (or the drop); set when finished. */
  serviceMs?: number;
  /** The client went away before the answer was complete. */
  clientAborted: boolean;
}

/** Options of {@linkcode startScriptedLlm}. */
export interface ScriptedLlmOptions {
  replies?: ScriptedReply[];
  /** Answers when the queue is empty. @default a 400 saying no reply was queued */
  fallback?: (request: RecordedRequest) => ScriptedReply;
  /** Models listed by `/v1/models`. @default ["scripted-model"] */
  models?: string[];
  /**
   * Answers to `GET /v1/models`, in order (only `status`, `errorMessage`, `errorCode`,
   * `headers` and `delayMs` apply); when they run out, the list of `models`.
   */
  modelsReplies?: ScriptedReply[];
  /**
   * The only key accepted (`Authorization: Bearer <apiKey>`); every other request gets an
   * OpenAI-style 401. @default any key, or none
   */
  apiKey?: string;
}

/** A running scripted server. */
export interface ScriptedLlm {
  /** OpenAI-compatible base URL, `http://127.0.0.1:<port>/v1`. */
  readonly baseUrl: string;
  readonly port: number;
  /** Every chat request received, in order. */
  readonly requests: RecordedRequest[];
  enqueue(...replies: ScriptedReply[]): void;
  /** Replies not yet used. */
  readonly pending: number;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const encoder = new TextEncoder();
const DROP = Symbol("scripted drop");

/** Starts the server. */
export function startScriptedLlm(options: ScriptedLlmOptions = {}): Promise<ScriptedLlm> {
  const queue: ScriptedReply[] = [...(options.replies ?? [])];
  const modelsQueue: ScriptedReply[] = [...(options.modelsReplies ?? [])];
  const requests: RecordedRequest[] = [];
  const controller = new AbortController();
  let completionCounter = 0;
  let callCounter = 0;

  const handle = async (req: Request, info: Deno.ServeHandlerInfo): Promise<Response> => {
    const url = new URL(req.url);
    if (
      options.apiKey !== undefined &&
      req.headers.get("authorization") !== `Bearer ${options.apiKey}`
    ) {
      await req.body?.cancel();
      return errorResponse({
        status: 401,
        errorMessage: "Incorrect API key provided.",
        errorCode: "invalid_api_key",
      });
    }
    if (req.method === "GET" && url.pathname.endsWith("/models")) {
      const scripted = modelsQueue.shift();
      if (scripted?.delayMs) await delay(scripted.delayMs, controller.signal);
      if (scripted?.status && scripted.status !== 200) return errorResponse(scripted);
      return Response.json({
        object: "list",
        data: (options.models ?? ["scripted-model"]).map((id) => ({
          id,
          object: "model",
          created: 0,
          owned_by: "scripted",
        })),
      });
    }
    if (req.method !== "POST" || !url.pathname.endsWith("/chat/completions")) {
      return Response.json({ error: { message: `no route ${req.method} ${url.pathname}` } }, {
        status: 404,
      });
    }
    const record: RecordedRequest = {
      method: req.method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: Object.fromEntries(req.headers),
      body: await req.json(),
      receivedAt: performance.now(),
      clientAborted: false,
    };
    requests.push(record);
    const reply = queue.shift() ?? options.fallback?.(record) ?? {
      status: 400,
      errorMessage: `scripted server: no reply queued for request ${requests.length}`,
    };
    // Stops the scripted pauses when the client goes away.
    const gone = new AbortController();
    let dropped = false;
    const finish = () => record.serviceMs ??= performance.now() - record.receivedAt;
    info.completed.then(finish, () => {
      if (!dropped && record.serviceMs === undefined) record.clientAborted = true;
      finish();
      gone.abort();
    });
    if (reply.delayMs) await delay(reply.delayMs, gone.signal);

    if (reply.status && reply.status !== 200) {
      finish();
      return errorResponse(reply);
    }

    const id = `chatcmpl-${++completionCounter}`;
    const model = reply.model ?? record.body.model ?? "scripted-model";
    const calls = (reply.toolCalls ?? []).map((call) => ({
      id: call.id ?? `call_${++callCounter}`,
      name: call.name,
      arguments: typeof call.arguments === "string"
        ? call.arguments
        : JSON.stringify(call.arguments),
    }));
    const finishReason = reply.finishReason ?? (calls.length > 0 ? "tool_calls" : "stop");
    const usage = reply.usage === null ? undefined : withTotal(reply.usage ?? DEFAULT_USAGE);

    if (!record.body.stream) {
      finish();
      return Response.json({
        id,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [{
          index: 0,
          message: {
            role: "assistant",
            content: reply.text ?? null,
            ...(calls.length > 0
              ? {
                tool_calls: calls.map((c) => ({
                  id: c.id,
                  type: "function",
                  function: { name: c.name, arguments: c.arguments },
                })),
              }
              : {}),
          },
          finish_reason: finishReason,
        }],
        ...(usage ? { usage } : {}),
      }, { headers: reply.headers });
    }

    const chunks = streamChunks(reply, calls, finishReason);
    const includeUsage = record.body.stream_options?.include_usage === true && usage;
    const base = { id, object: "chat.completion.chunk", created: 0, model };
    const body = new ReadableStream<Uint8Array>({
      async start(stream) {
        try {
          let sent = 0;
          const send = async (payload: unknown) => {
            if (reply.dropAfterChunks !== undefined && sent >= reply.dropAfterChunks) throw DROP;
            if (sent > 0 && reply.chunkDelayMs) await delay(reply.chunkDelayMs, gone.signal);
            stream.enqueue(encoder.encode(`data: ${JSON.stringify(payload)}\n\n`));
            sent++;
          };
          for (const chunk of chunks) await send({ ...base, choices: [chunk] });
          if (includeUsage) await send({ ...base, choices: [], usage });
          stream.enqueue(encoder.encode("data: [DONE]\n\n"));
          finish();
          stream.close();
        } catch (error) {
          if (gone.signal.aborted) return;
          dropped = true;
          finish();
          // Erroring the body makes Deno cut the connection without the final chunk: what
          // a client sees when a provider's connection drops mid-answer.
          stream.error(error === DROP ? new Error("scripted drop") : error);
        }
      },
      cancel() {
        if (record.serviceMs === undefined) record.clientAborted = true;
        finish();
        gone.abort();
      },
    });
    return new Response(body, {
      headers: { "content-type": "text/event-stream", ...reply.headers },
    });
  };

  return new Promise((resolve) => {
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      signal: controller.signal,
      onListen: () => {},
      // The deliberate drops surface here; anything else is a bug in a test.
      onError: (error) => {
        if (!(error instanceof Error && error.message === "scripted drop")) console.error(error);
        return new Response("scripted server error", { status: 500 });
      },
    }, handle);
    const port = server.addr.port;
    const close = async () => {
      controller.abort();
      await server.finished;
    };
    resolve({
      baseUrl: `http://127.0.0.1:${port}/v1`,
      port,
      requests,
      enqueue: (...replies) => queue.push(...replies),
      get pending() {
        return queue.length;
      },
      close,
      [Symbol.asyncDispose]: close,
    });
  });
}

type Call = { id: string; name: string; arguments: string };

/** Choice deltas: role, text in pieces, each tool call (name, then arguments in halves). */
function streamChunks(reply: ScriptedReply, calls: Call[], finishReason: string) {
  const chunks: Record<string, unknown>[] = [];
  chunks.push({ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null });
  const size = reply.chunkChars ?? 4;
  const text = reply.text ?? "";
  for (let i = 0; i < text.length; i += size) {
    chunks.push({ index: 0, delta: { content: text.slice(i, i + size) }, finish_reason: null });
  }
  calls.forEach((call, index) => {
    chunks.push({
      index: 0,
      delta: {
        tool_calls: [{
          index,
          id: call.id,
          type: "function",
          function: { name: call.name, arguments: "" },
        }],
      },
      finish_reason: null,
    });
    const half = Math.ceil(call.arguments.length / 2);
    for (const piece of [call.arguments.slice(0, half), call.arguments.slice(half)]) {
      if (piece === "") continue;
      chunks.push({
        index: 0,
        delta: { tool_calls: [{ index, function: { arguments: piece } }] },
        finish_reason: null,
      });
    }
  });
  chunks.push({ index: 0, delta: {}, finish_reason: finishReason });
  return chunks;
}

/** An OpenAI-style error answer. */
function errorResponse(reply: ScriptedReply): Response {
  return Response.json({
    error: {
      message: reply.errorMessage ?? `scripted error ${reply.status}`,
      type: "scripted_error",
      code: reply.errorCode ?? null,
    },
  }, { status: reply.status, headers: reply.headers });
}

function withTotal(usage: NonNullable<ScriptedReply["usage"]>) {
  return { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}
