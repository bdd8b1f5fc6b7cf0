/**
 * The HTTP side of an OpenAI-compatible API, as far as patchbay uses it: a chat completion
 * (whole, or streamed as server-sent events) and the list of models.
 *
 * patchbay's own client rather than the `openai` package (README, "Stack"): the package
 * builds a client for the whole API surface, and loading it cost the interactive session
 * about 16 MiB of resident memory for the three requests used here. What the package did
 * that matters is kept: the Azure deployment path, `api-version` and `api-key`; the error
 * body's `error` object; the `[DONE]` sentinel and error events inside a stream. Unlike it,
 * every answer is bounded ({@linkcode MAX_ANSWER_BYTES}), since the model's server is not
 * trusted with this machine's memory.
 *
 * Retrying, timeouts and wording stay with the caller (`openai_provider.ts`,
 * `request_failures.ts`): this module makes one exchange and says what came back.
 *
 * @module
 */

import { EventStreamScanner } from "../transports/event_stream.ts";
import { NAME, VERSION } from "../version.ts";

/** Largest answer read: a whole completion, all events of one stream, or a model list. */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/** Largest error body read; the message a person needs is in its first lines. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** A message of the conversation, as the API takes it. */
export type ChatMessageParam =
  | { role: "system"; content: string }
  | { role: "user"; content: string | UserContentPart[] }
  | {
    role: "assistant";
    content: string | null;
    tool_calls?: {
      id: string;
      type: "function";
      function: { name: string; arguments: string };
    }[];
  }
  | { role: "tool"; tool_call_id: string; content: string };

/** A part of a user message with images. */
export type UserContentPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string } };

/** A tool the model may call. */
export interface ChatToolParam {
  type: "function";
  function: { name: string; description?: string; parameters: Record<string, unknown> };
}

/** The body of `POST /chat/completions`, without `stream`. */
export interface ChatCompletionRequest {
  model: string;
  messages: ChatMessageParam[];
  tools?: ChatToolParam[];
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  stop?: string[];
}

/** Token counts as the API reports them (any field may be missing). */
export interface WireUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
}

/** A tool call as it arrives: every field may be missing or partial in a stream. */
export interface WireToolCall {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

/** One chunk of a streamed completion, as loosely as servers send it. */
export interface ChatCompletionChunk {
  id?: string;
  model?: string;
  choices?: {
    index?: number;
    delta?: { content?: string | null; tool_calls?: WireToolCall[] };
    finish_reason?: string | null;
  }[];
  usage?: WireUsage | null;
}

/** A whole (non-streamed) completion, as loosely as servers send it. */
export interface ChatCompletion {
  model?: string;
  choices?: {
    index?: number;
    message?: { content?: string | null; tool_calls?: WireToolCall[] };
    finish_reason?: string | null;
  }[];
  usage?: WireUsage | null;
}

/**
 * What the API answered when it was not the answer: an HTTP error status with its body, or
 * an error event inside a stream (`status` is then `undefined`: the answer had started).
 */
export class ModelApiError extends Error {
  /** The HTTP status, for an error answer. */
  readonly status: number | undefined;
  readonly headers: Headers | undefined;
  /** The body's `error` member (an object, or a string), else the whole parsed body. */
  readonly error: unknown;
  /** The provider's error code (`insufficient_quota`), when it gave one. */
  readonly code: string | undefined;
  /** The provider's own message ("" when the body said nothing). */
  readonly providerMessage: string;

  constructor(status: number | undefined, error: unknown, text: string, headers?: Headers) {
    const said = bodyMessage(error, text);
    super(
      status === undefined
        ? said || "(no status code or body)"
        : `${status} ${said || "status code (no body)"}`,
    );
    this.name = "ModelApiError";
    this.status = status;
    this.headers = headers;
    this.error = error;
    this.providerMessage = said;
    const code = isRecord(error) ? error.code : undefined;
    this.code = typeof code === "string" ? code : undefined;
  }
}

/** An answer that could not be read as the API's (not JSON, or past a bound). */
export class MalformedAnswerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MalformedAnswerError";
  }
}

/** Options of {@linkcode ChatApi}. */
export interface ChatApiOptions {
  /** The API's base address (`https://api.openai.com/v1`; Azure: `<endpoint>/openai`). */
  baseUrl: string;
  /** `Authorization: Bearer <key>` (or Azure's `api-key`); none for a keyless local server. */
  apiKey?: string;
  /** Azure: deployment-scoped paths, `api-version` and the `api-key` header. */
  azure?: { apiVersion: string; deployment: string };
  /** Performs the request (redirects, proxy client). @default fetch */
  fetch?: typeof fetch;
  /** Deno's HTTP client for a proxy, passed with every request. */
  client?: Deno.HttpClient;
  /** Largest answer read (tests lower it). @default MAX_ANSWER_BYTES */
  maxAnswerBytes?: number;
}

/** One request's options. */
export interface ExchangeOptions {
  signal?: AbortSignal;
}

/** The three exchanges patchbay has with an OpenAI-compatible API. */
export class ChatApi {
  #options: ChatApiOptions;
  #fetch: typeof fetch;
  #maxAnswer: number;

  constructor(options: ChatApiOptions) {
    this.#options = options;
    this.#fetch = options.fetch ?? fetch;
    this.#maxAnswer = options.maxAnswerBytes ?? MAX_ANSWER_BYTES;
  }

  /** `POST /chat/completions` without streaming: the whole completion. */
  async complete(
    body: ChatCompletionRequest,
    options: ExchangeOptions = {},
  ): Promise<ChatCompletion> {
    const response = await this.#request(
      "POST",
      "/chat/completions",
      { ...body, stream: false },
      options,
    );
    const completion = await readJson(response, this.#maxAnswer);
    refuseErrorBody(response, completion);
    if (!isRecord(completion)) {
      throw new MalformedAnswerError(`the completion was ${abridged(JSON.stringify(completion))}`);
    }
    return completion as ChatCompletion;
  }

  /**
   * `POST /chat/completions` with `stream: true`: resolves when the headers arrive, then
   * yields each chunk until `[DONE]` or the end of the body.
   */
  async stream(
    body: ChatCompletionRequest & { stream_options?: { include_usage: boolean } },
    options: ExchangeOptions = {},
  ): Promise<AsyncIterable<ChatCompletionChunk>> {
    const response = await this.#request(
      "POST",
      "/chat/completions",
      { ...body, stream: true },
      options,
    );
    // A server that ignores `stream` answers with the whole completion: taken as one chunk.
    if (/\bjson\b/i.test(response.headers.get("content-type") ?? "")) {
      const whole = await readJson(response, this.#maxAnswer);
      refuseErrorBody(response, whole);
      return asChunks(whole as ChatCompletion);
    }
    return chunks(response, this.#maxAnswer);
  }

  /** `GET /models`: the ids the API lists. */
  async listModels(options: ExchangeOptions = {}): Promise<string[]> {
    const response = await this.#request("GET", "/models", undefined, options);
    const list = await readJson(response, this.#maxAnswer);
    const data = isRecord(list) && Array.isArray(list.data) ? list.data : [];
    return data.flatMap((model) =>
      isRecord(model) && typeof model.id === "string" ? [model.id] : []
    );
  }

  /** One request; an error status becomes a {@linkcode ModelApiError}. */
  async #request(
    method: "GET" | "POST",
    path: string,
    body: unknown,
    options: ExchangeOptions,
  ): Promise<Response> {
    const headers = new Headers({
      "Accept": "application/json",
      "User-Agent": `${NAME}/${VERSION}`,
    });
    const { apiKey, azure, client } = this.#options;
    if (apiKey !== undefined) {
      if (azure) headers.set("api-key", apiKey);
      else headers.set("Authorization", `Bearer ${apiKey}`);
    }
    if (body !== undefined) headers.set("Content-Type", "application/json");
    const init: RequestInit & { client?: Deno.HttpClient } = {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: options.signal,
    };
    if (client) init.client = client;
    const response = await this.#fetch(this.#url(path), init);
    if (response.ok) return response;
    const text = await readText(response, MAX_ERROR_BODY_BYTES, true).catch((error) =>
      String(error?.message ?? error)
    );
    const parsed = safeJson(text);
    // OpenAI's shape is {"error": {...}}; a body without it is kept whole.
    const error = isRecord(parsed) && "error" in parsed ? parsed.error : parsed;
    throw new ModelApiError(
      response.status,
      error,
      parsed === undefined ? text : "",
      response.headers,
    );
  }

  #url(path: string): URL {
    const { baseUrl, azure } = this.#options;
    let full = path;
    // Azure serves completions under the deployment, unless base_url already names one.
    if (azure && path === "/chat/completions" && !hasDeploymentSegment(baseUrl)) {
      full = `/deployments/${encodeURIComponent(azure.deployment)}${path}`;
    }
    // The path goes after base_url's own; a query in base_url (a gateway's) is kept.
    const url = new URL(baseUrl);
    url.pathname = url.pathname.replace(/\/+$/, "") + full;
    if (azure) url.searchParams.set("api-version", azure.apiVersion);
    return url;
  }
}

/** The chunks of an event-stream answer, bounded in total size. */
async function* chunks(response: Response, limit: number): AsyncGenerator<ChatCompletionChunk> {
  if (!response.body) return;
  const reader = response.body.getReader();
  const pending: { event: string; data: string }[] = [];
  const scanner = new EventStreamScanner((event) => pending.push(event), limit);
  let total = 0;
  let events = 0;
  // The start of the body, to show when it turns out not to be an event stream.
  let head = "";
  const decoder = new TextDecoder();
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) {
        // A body with no event in it is something else (a web page at the wrong address).
        if (events === 0 && head.trim() !== "") {
          throw notTheApis(response, head);
        }
        return;
      }
      if (head.length < 120) head += decoder.decode(value.subarray(0, 480), { stream: true });
      total += value.length;
      if (total > limit || scanner.push(value) !== undefined) {
        throw new MalformedAnswerError(
          `the streamed answer grew past ${size(limit)}, patchbay's cap`,
        );
      }
      while (pending.length > 0) {
        const { event, data } = pending.shift()!;
        events++;
        if (data === "[DONE]") return;
        if (event === "error") {
          // An error event's data is shown as it came when it is not JSON.
          const said = safeJson(data);
          throw new ModelApiError(
            undefined,
            isRecord(said) && said.error ? said.error : said,
            data,
          );
        }
        const chunk = parseJson(data, "a streamed event");
        if (isRecord(chunk) && chunk.error) throw new ModelApiError(undefined, chunk.error, "");
        if (isRecord(chunk)) yield chunk as ChatCompletionChunk;
      }
    }
  } finally {
    // Leaving early (an error, `[DONE]`, the caller's break) must not leave the body open.
    await reader.cancel().catch(() => {});
  }
}

/**
 * A success status whose body is an error object and no completion (some gateways answer
 * so): the API's error, with the status it came with.
 */
function refuseErrorBody(response: Response, body: unknown): void {
  if (isRecord(body) && body.error && !Array.isArray(body.choices)) {
    throw new ModelApiError(response.status, body.error, "", response.headers);
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
async function readText(response: Response, limit: number, truncate = false): Promise<string> {
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
        throw new MalformedAnswerError(`the answer grew past ${size(limit)}, patchbay's cap`);
      }
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** `33554432` → "32 MiB"; `1000` → "1000 bytes". */
function size(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / 1024 / 1024)} MiB` : `${bytes} bytes`;
}

/** The first 120 characters of `text`, with an ellipsis when there were more. */
function abridged(text: string): string {
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}

/** A whole answer's JSON; a body that is not JSON is {@linkcode notTheApis}. */
async function readJson(response: Response, limit: number): Promise<unknown> {
  const text = await readText(response, limit);
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
function notTheApis(response: Response, text: string): MalformedAnswerError {
  const type = response.headers.get("content-type")?.split(";")[0].trim() || "no content type";
  return new MalformedAnswerError(
    `the answer is not the API's (${type}): ${JSON.stringify(abridged(text.trim()))}`,
  );
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new MalformedAnswerError(`${what} was not JSON: ${JSON.stringify(abridged(text))}`);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The provider's message in an error body: `error.message`, a string, else the text. */
function bodyMessage(error: unknown, text: string): string {
  if (isRecord(error) && typeof error.message === "string") return error.message;
  if (typeof error === "string") return error;
  if (error !== undefined && error !== null) return JSON.stringify(error);
  return text.trim();
}

function hasDeploymentSegment(baseUrl: string): boolean {
  try {
    return new URL(baseUrl).pathname.split("/").includes("deployments");
  } catch {
    return false;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
