/**
 * A scripted Anthropic Messages endpoint for tests, the sibling of `scripted_llm.ts`:
 * answers `POST /v1/messages` (streamed as the API's events, or whole) from a queue of
 * replies and `GET /v1/models`; checks every request as the real API does
 * (`messages_checks.ts`: a request that breaks a rule gets the API's 400 and no reply is
 * used); keeps a prompt cache (`prompt_cache_sim.ts`) and reports its reads and writes in
 * the usage; records every request; and misbehaves on cue (an error status with the API's
 * error body, an `error` event mid-stream, a connection dropped mid-answer). Listens on
 * 127.0.0.1, port chosen by the system.
 *
 * @module
 */

import { bodyProblems, headerProblems } from "./messages_checks.ts";
import { PromptCacheSim, type SimulatedUsage } from "./prompt_cache_sim.ts";

/** A tool call the scripted model makes. */
export interface ScriptedToolUse {
  name: string;
  input: Record<string, unknown>;
  /** @default "toolu_<n>" */
  id?: string;
}

/** One scripted answer. */
export interface ScriptedMessage {
  text?: string;
  toolUses?: ScriptedToolUse[];
  /** @default "tool_use" with tool calls, else "end_turn" */
  stopReason?: string;
  /** Answer tokens reported. @default 10 */
  outputTokens?: number;
  /** Answer with this HTTP status and the API's error body instead. */
  status?: number;
  /** The error body's `error.type` (e.g. `overloaded_error`). @default "api_error" */
  errorType?: string;
  errorMessage?: string;
  /** Extra response headers (e.g. `retry-after`). */
  headers?: Record<string, string>;
  /** Send an `error` event of this type after `errorAfterEvents` events, then stop. */
  streamError?: { type: string; message: string };
  /** @default 2 */
  errorAfterEvents?: number;
  /** Break the connection after this many events. */
  dropAfterEvents?: number;
  /** Characters of text per delta. @default 4 */
  chunkChars?: number;
  /** Answer a streamed request with the whole message, as a server that ignores `stream`. */
  ignoreStream?: boolean;
}

/** What the endpoint saw of one request. */
export interface RecordedMessages {
  path: string;
  headers: Record<string, string>;
  // deno-lint-ignore no-explicit-any
  body: any;
  /** The rules it broke (answered with a 400); empty for a valid request. */
  problems: string[];
  /** The cache's usage for it (valid requests only). */
  usage?: SimulatedUsage;
}

/** Options of {@linkcode startScriptedMessages}. */
export interface ScriptedMessagesOptions {
  replies?: ScriptedMessage[];
  /** The only key accepted in `x-api-key`; others get the API's 401. @default any */
  apiKey?: string;
  /** Models listed by `/v1/models`. @default ["claude-test-4-5-20250929"] */
  models?: string[];
  /** The shortest prefix the cache keeps. @default 1024 */
  minCacheTokens?: number;
}

/** A running endpoint. */
export interface ScriptedMessagesServer {
  /** `http://127.0.0.1:<port>/v1`, what `LLM.base_url` takes. */
  readonly baseUrl: string;
  readonly requests: RecordedMessages[];
  enqueue(...replies: ScriptedMessage[]): void;
  readonly pending: number;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const encoder = new TextEncoder();

/** Starts the endpoint. */
export function startScriptedMessages(
  options: ScriptedMessagesOptions = {},
): Promise<ScriptedMessagesServer> {
  const queue = [...(options.replies ?? [])];
  const requests: RecordedMessages[] = [];
  const cache = new PromptCacheSim(options.minCacheTokens);
  const controller = new AbortController();
  let toolIds = 0;

  const handle = async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    const key = req.headers.get("x-api-key");
    if (!key || (options.apiKey !== undefined && key !== options.apiKey)) {
      await req.body?.cancel();
      return apiError(401, "authentication_error", "invalid x-api-key");
    }
    if (req.method === "GET" && url.pathname === "/v1/models") {
      return Response.json({
        data: (options.models ?? ["claude-test-4-5-20250929"]).map((id) => ({
          type: "model",
          id,
          display_name: id,
        })),
        has_more: false,
      });
    }
    if (req.method !== "POST" || url.pathname !== "/v1/messages") {
      await req.body?.cancel();
      return apiError(404, "not_found_error", `no route ${req.method} ${url.pathname}`);
    }
    const text = await req.text();
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    const problems = [...headerProblems(req.headers), ...bodyProblems(body)];
    const record: RecordedMessages = {
      path: url.pathname,
      headers: Object.fromEntries(req.headers),
      body,
      problems,
    };
    requests.push(record);
    if (problems.length > 0) {
      return apiError(400, "invalid_request_error", problems.join("; "));
    }
    const reply = queue.shift() ?? {
      status: 400,
      errorType: "invalid_request_error",
      errorMessage: `scripted endpoint: no reply queued for request ${requests.length}`,
    };
    if (reply.status && reply.status !== 200) {
      return apiError(
        reply.status,
        reply.errorType ?? "api_error",
        reply.errorMessage ?? "scripted",
        reply.headers,
      );
    }
    record.usage = cache.use(body);
    const events = answerEvents(reply, body.model, record.usage, () => `toolu_${++toolIds}`);
    if (!body.stream || reply.ignoreStream) {
      return Response.json(wholeMessage(events), { headers: reply.headers });
    }
    const stream = new ReadableStream<Uint8Array>({
      start(out) {
        events.forEach((event, i) => {
          if (reply.dropAfterEvents !== undefined && i >= reply.dropAfterEvents) return;
          if (reply.streamError && i === (reply.errorAfterEvents ?? 2)) {
            send(out, { type: "error", error: reply.streamError });
          }
          if (reply.streamError && i >= (reply.errorAfterEvents ?? 2)) return;
          send(out, event);
        });
        if (reply.dropAfterEvents !== undefined) out.error(new Error("scripted drop"));
        else out.close();
      },
    });
    return new Response(stream, {
      headers: { "content-type": "text/event-stream", ...reply.headers },
    });
  };

  return new Promise((resolve) => {
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      signal: controller.signal,
      onListen: () => {},
      onError: (error) => {
        if (!(error instanceof Error && error.message === "scripted drop")) console.error(error);
        return new Response("scripted endpoint error", { status: 500 });
      },
    }, handle);
    const close = async () => {
      controller.abort();
      await server.finished;
    };
    resolve({
      baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
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

// deno-lint-ignore no-explicit-any
type Event = Record<string, any>;

/** The events of a streamed answer, as the API sends them. */
function answerEvents(
  reply: ScriptedMessage,
  model: string,
  usage: SimulatedUsage,
  nextId: () => string,
): Event[] {
  const events: Event[] = [{
    type: "message_start",
    message: {
      id: "msg_scripted",
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      usage: { ...usage, output_tokens: 1 },
    },
  }, { type: "ping" }];
  let index = 0;
  if (reply.text) {
    events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
    const size = reply.chunkChars ?? 4;
    for (let i = 0; i < reply.text.length; i += size) {
      events.push({
        type: "content_block_delta",
        index,
        delta: { type: "text_delta", text: reply.text.slice(i, i + size) },
      });
    }
    events.push({ type: "content_block_stop", index: index++ });
  }
  for (const use of reply.toolUses ?? []) {
    const json = JSON.stringify(use.input);
    const half = Math.ceil(json.length / 2);
    events.push({
      type: "content_block_start",
      index,
      content_block: { type: "tool_use", id: use.id ?? nextId(), name: use.name, input: {} },
    });
    for (const piece of [json.slice(0, half), json.slice(half)]) {
      events.push({
        type: "content_block_delta",
        index,
        delta: { type: "input_json_delta", partial_json: piece },
      });
    }
    events.push({ type: "content_block_stop", index: index++ });
  }
  events.push({
    type: "message_delta",
    delta: {
      stop_reason: reply.stopReason ?? (reply.toolUses?.length ? "tool_use" : "end_turn"),
      stop_sequence: null,
    },
    usage: { output_tokens: reply.outputTokens ?? 10 },
  });
  events.push({ type: "message_stop" });
  return events;
}

/** The same answer as one message (a request without `stream`). */
function wholeMessage(events: Event[]): Event {
  const message = { ...events[0].message };
  const content: Event[] = [];
  for (const event of events) {
    if (event.type === "content_block_start") content[event.index] = { ...event.content_block };
    if (event.type === "content_block_delta" && event.delta.type === "text_delta") {
      content[event.index].text += event.delta.text;
    }
    if (event.type === "content_block_delta" && event.delta.type === "input_json_delta") {
      const block = content[event.index];
      block.json = (block.json ?? "") + event.delta.partial_json;
    }
    if (event.type === "message_delta") {
      message.stop_reason = event.delta.stop_reason;
      message.usage = { ...message.usage, ...event.usage };
    }
  }
  message.content = content.map(({ json, ...block }) =>
    json === undefined ? block : { ...block, input: JSON.parse(json) }
  );
  return message;
}

function send(out: ReadableStreamDefaultController<Uint8Array>, event: Event): void {
  out.enqueue(encoder.encode(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`));
}

/** The API's error answer. */
function apiError(
  status: number,
  type: string,
  message: string,
  headers?: Record<string, string>,
): Response {
  return Response.json({ type: "error", error: { type, message } }, { status, headers });
}
