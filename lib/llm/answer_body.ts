/**
 * Reading a model answer's body, bounded: whole (JSON), or streamed (server-sent events,
 * or one JSON document from a server that ignored `stream`). What is read is checked for
 * what it is: an error object, a page that is not the API's, an answer past the cap.
 *
 * @module
 */

import { abridge } from "../text/text.ts";
import { EventStreamScanner } from "../transports/event_stream.ts";
import {
  type ChatCompletion,
  type ChatCompletionChunk,
  isRecord,
  MalformedAnswerError,
  ModelApiError,
} from "./chat_wire.ts";

/**
 * The chunks of a streamed answer, bounded in total size. The body decides what it is, not
 * its content type (servers mislabel streams): one JSON document (a server that ignored
 * `stream`) is the one chunk it amounts to; anything else is read as an event stream.
 */
export function answerChunks(
  response: Response,
  limit: number,
): AsyncGenerator<ChatCompletionChunk> {
  return streamedAnswer(response, limit, {
    event: (event) => event.data === "[DONE]" ? DONE : [streamedChunk(event)],
    whole: (body) => {
      refuseErrorBody(response, body);
      return asChunks(body as ChatCompletion);
    },
  });
}

/** Returned by {@linkcode AnswerShape.event} for the event that ends an answer. */
export const DONE = Symbol("the answer is complete");

/** How one API's streamed answer reads. */
export interface AnswerShape<T> {
  /** One event as the items it amounts to, or {@linkcode DONE} (nothing after it is read). */
  event: (event: { event: string; data: string }) => Iterable<T> | typeof DONE;
  /** A whole JSON document (a server that ignored `stream`, or an error body) as items. */
  whole: (body: unknown) => Iterable<T> | AsyncIterable<T>;
}

/**
 * A streamed answer's items, read as `shape` says, bounded in total size: the body is an
 * event stream, or one JSON document when it starts with `{`.
 */
export async function* streamedAnswer<T>(
  response: Response,
  limit: number,
  shape: AnswerShape<T>,
): AsyncGenerator<T> {
  if (!response.body) return;
  const reader = response.body.getReader();
  const pending: { event: string; data: string }[] = [];
  const scanner = new EventStreamScanner((event) => pending.push(event), limit);
  const decoder = new TextDecoder();
  let kind: "unknown" | "json" | "events" = "unknown";
  /** The bytes before the first character that is not blank decided the kind. */
  const early: Uint8Array[] = [];
  /** The start of the body (for messages), or all of it once it is JSON. */
  let text = "";
  let total = 0;
  let events = 0;
  const take = (bytes: Uint8Array) => {
    if (kind === "json") {
      text += decoder.decode(bytes, { stream: true });
    } else if (scanner.push(bytes) !== undefined) {
      throw overCap("the streamed answer", limit);
    }
  };
  /** The items of the events the scanner has finished; `true` at the last one. */
  function* drain(): Generator<T, boolean> {
    while (pending.length > 0) {
      const event = pending.shift()!;
      events++;
      const items = shape.event(event);
      if (items === DONE) return true;
      yield* items;
    }
    return false;
  }
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > limit) throw overCap("the streamed answer", limit);
      if (kind === "unknown") {
        early.push(value);
        text += decoder.decode(value, { stream: true });
        const start = text.trimStart();
        if (start === "") continue;
        kind = start.startsWith("{") ? "json" : "events";
        if (kind === "json") continue;
        text = start.slice(0, 200);
        early.forEach(take);
      } else {
        take(value);
      }
      if (yield* drain()) return;
    }
    if (kind === "json") {
      yield* shape.whole(parseAnswer(response, text + decoder.decode()));
      return;
    }
    scanner.end();
    if ((yield* drain()) || events > 0) return;
    // Nothing that could be an answer: a cut stream (worth a retry), or something else.
    const type = response.headers.get("content-type") ?? "";
    if (kind === "unknown" || /^text\/event-stream\b/i.test(type)) {
      throw new Error("the answer ended before its first event");
    }
    throw notTheApis(response, text);
  } finally {
    // Leaving early (an error, the last event, the caller's break) must not leave the body
    // open.
    await reader.cancel().catch(() => {});
  }
}

/**
 * One event of a streamed answer as its chunk. An error event or an error chunk is the
 * API's error; an event that is not JSON is a broken stream (a plain error: the answer is
 * taken as cut off, and tried again).
 */
function streamedChunk({ event, data }: { event: string; data: string }): ChatCompletionChunk {
  if (event === "error") {
    // An error event's data is shown as it came when it is not JSON.
    const said = safeJson(data);
    throw new ModelApiError(undefined, isRecord(said) && said.error ? said.error : said, data);
  }
  const chunk = safeJson(data);
  if (chunk === undefined) {
    throw new Error(
      `a streamed event was not JSON: ${JSON.stringify(abridge(data, QUOTED_CHARS))}`,
    );
  }
  if (isRecord(chunk) && chunk.error) throw new ModelApiError(undefined, chunk.error, "");
  return isRecord(chunk) ? chunk as ChatCompletionChunk : {};
}

/**
 * A success status whose body is an error object and no completion (some gateways answer
 * so): the API's error, with the status it came with.
 */
export function refuseErrorBody(response: Response, body: unknown): void {
  if (isRecord(body) && body.error && !Array.isArray(body.choices)) {
    // Gateways (OpenRouter) put the upstream's status in the code: it decides retrying.
    const code = isRecord(body.error) ? body.error.code : undefined;
    const status = typeof code === "number" && code >= 400 && code < 600 ? code : response.status;
    throw new ModelApiError(status, body.error, "", response.headers);
  }
}

/** A whole completion as the one chunk a stream of it would amount to. */
async function* asChunks(completion: ChatCompletion): AsyncGenerator<ChatCompletionChunk> {
  if (typeof completion !== "object" || completion === null) return;
  yield {
    model: completion.model,
    usage: completion.usage,
    choices: (Array.isArray(completion.choices) ? completion.choices : []).map((choice) => ({
      index: choice?.index,
      delta: choice?.message,
      finish_reason: choice?.finish_reason,
    })),
  };
}

/**
 * The body as text, at most `limit` bytes: past it the read stops (`truncate`: the text
 * so far is the answer, for an error body) or fails.
 */
export async function readText(
  response: Response,
  limit: number,
  truncate = false,
): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let total = 0;
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) return text + decoder.decode();
      total += value.length;
      if (total > limit) {
        if (truncate) {
          return text + decoder.decode(value.subarray(0, value.length - (total - limit)));
        }
        throw overCap("the answer", limit);
      }
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** `what` grew past `limit` bytes ("32 MiB"; "1000 bytes" under a MiB, as tests set it). */
export function overCap(what: string, limit: number): MalformedAnswerError {
  const size = limit >= 1024 * 1024 ? `${Math.round(limit / 1024 / 1024)} MiB` : `${limit} bytes`;
  return new MalformedAnswerError(`${what} grew past ${size}, patchbay's cap`);
}

/** How much of an unreadable answer a message quotes. */
export const QUOTED_CHARS = 121;

/** A whole answer's JSON; a body that is not JSON is {@linkcode notTheApis}. */
export async function readJson(response: Response, limit: number): Promise<unknown> {
  return parseAnswer(response, await readText(response, limit));
}

function parseAnswer(response: Response, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw notTheApis(response, text);
  }
}

/**
 * A body that is neither JSON nor an event stream (a web page at a wrong address, a
 * gateway's notice), worded alike whichever request met it.
 */
export function notTheApis(response: Response, text: string): MalformedAnswerError {
  const type = response.headers.get("content-type")?.split(";")[0].trim() || "no content type";
  return new MalformedAnswerError(
    `the answer is not the API's (${type}): ${JSON.stringify(abridge(text.trim(), QUOTED_CHARS))}`,
  );
}

/** `text` as JSON, or `undefined` when it is not. */
export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
