/**
 * The HTTP side of Anthropic's Messages API, as far as patchbay uses it: a message (whole,
 * or streamed as server-sent events) and the list of models, with the key in `x-api-key`
 * and `anthropic-version` on every request. Answers are read by the same bounded reader as
 * the OpenAI-compatible API's (`answer_body.ts`, {@linkcode MAX_ANSWER_BYTES}); an error
 * answer's `{"type": "error", "error": {"type", "message"}}` becomes a `ModelApiError`, so
 * retrying and wording are the same for both APIs.
 *
 * Retrying, timeouts and wording stay with the caller (`anthropic_provider.ts`,
 * `request_loop.ts`): this module makes one exchange and says what came back.
 *
 * @module
 */

import {
  DONE,
  notTheApis,
  QUOTED_CHARS,
  readJson,
  readText,
  safeJson,
  streamedAnswer,
} from "./answer_body.ts";
import { MAX_ANSWER_BYTES, MAX_ERROR_BODY_BYTES } from "./chat_api.ts";
import { isRecord, MalformedAnswerError, ModelApiError } from "./chat_wire.ts";
import {
  ANTHROPIC_VERSION,
  ERROR_TYPE_STATUS,
  type MessagesAnswer,
  type MessagesEvent,
  type MessagesRequest,
} from "./messages_wire.ts";
import { abridge } from "../text/text.ts";
import { NAME, VERSION } from "../version.ts";

/** Most models one list request asks for (the API's own maximum page). */
const MODEL_PAGE = 1000;

/** Options of {@linkcode MessagesApi}. */
export interface MessagesApiOptions {
  /**
   * The API's address: `https://api.anthropic.com/v1` (or a gateway's address ending in
   * `/v1`); a bare origin (`https://api.anthropic.com`, as Anthropic's own SDKs take it)
   * gets `/v1` added.
   */
  baseUrl: string;
  /** Sent as `x-api-key`. */
  apiKey?: string;
  /** Performs the request (redirects, proxy client). @default fetch */
  fetch?: typeof fetch;
  /** Deno's HTTP client for a proxy, passed with every request. */
  client?: Deno.HttpClient;
  /** Largest answer read (tests lower it). @default MAX_ANSWER_BYTES */
  maxAnswerBytes?: number;
}

/** One request's options. */
export interface MessagesExchangeOptions {
  signal?: AbortSignal;
  /** The key of this request, over the constructor's. */
  apiKey?: string;
  /** Called when a success status and its headers arrive, before the body is read. */
  onResponse?: () => void;
}

/** The exchanges patchbay has with the Messages API. */
export class MessagesApi {
  #options: MessagesApiOptions;
  #fetch: typeof fetch;
  #maxAnswer: number;

  constructor(options: MessagesApiOptions) {
    this.#options = options;
    this.#fetch = options.fetch ?? fetch;
    this.#maxAnswer = options.maxAnswerBytes ?? MAX_ANSWER_BYTES;
  }

  /** `POST /v1/messages` without streaming: the whole message. */
  async create(
    body: MessagesRequest,
    options: MessagesExchangeOptions = {},
  ): Promise<MessagesAnswer> {
    const response = await this.#request("POST", "/messages", { ...body, stream: false }, options);
    const answer = await readJson(response, this.#maxAnswer);
    refuseError(response, answer);
    if (!isRecord(answer) || !Array.isArray(answer.content)) {
      throw new MalformedAnswerError(
        `the answer is not a message: ${abridge(JSON.stringify(answer), QUOTED_CHARS)}`,
      );
    }
    return answer as MessagesAnswer;
  }

  /**
   * `POST /v1/messages` with `stream: true`: resolves when the headers arrive, then yields
   * each event until `message_stop` or the end of the body. An `error` event is thrown as
   * the API's error, with the status its type stands for (`overloaded_error`: 529).
   */
  async stream(
    body: MessagesRequest,
    options: MessagesExchangeOptions = {},
  ): Promise<AsyncIterable<MessagesEvent>> {
    const response = await this.#request("POST", "/messages", { ...body, stream: true }, options);
    return streamedAnswer<MessagesEvent>(response, this.#maxAnswer, {
      event: ({ event, data }) => {
        const parsed = safeJson(data);
        if (event === "error" || (isRecord(parsed) && parsed.type === "error")) {
          throw apiError(undefined, parsed, data);
        }
        if (!isRecord(parsed)) {
          throw new Error(
            `a streamed event was not JSON: ${JSON.stringify(abridge(data, QUOTED_CHARS))}`,
          );
        }
        return parsed.type === "message_stop" ? DONE : [parsed as MessagesEvent];
      },
      // A server that ignored `stream` sent the whole message: its events, in order.
      whole: (whole) => {
        refuseError(response, whole);
        return isRecord(whole) ? wholeAsEvents(whole as MessagesAnswer) : [];
      },
    });
  }

  /** `GET /v1/models`: the ids the API lists. */
  async listModels(options: MessagesExchangeOptions = {}): Promise<string[]> {
    const response = await this.#request("GET", `/models?limit=${MODEL_PAGE}`, undefined, options);
    const list = await readJson(response, this.#maxAnswer);
    refuseError(response, list);
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
    options: MessagesExchangeOptions,
  ): Promise<Response> {
    const headers = new Headers({
      "Accept": "application/json",
      "User-Agent": `${NAME}/${VERSION}`,
      "anthropic-version": ANTHROPIC_VERSION,
    });
    const { client } = this.#options;
    const apiKey = options.apiKey ?? this.#options.apiKey;
    if (apiKey !== undefined) headers.set("x-api-key", apiKey);
    if (body !== undefined) headers.set("Content-Type", "application/json");
    const init: RequestInit & { client?: Deno.HttpClient } = {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: options.signal,
    };
    if (client) init.client = client;
    const response = await this.#fetch(messagesUrl(this.#options.baseUrl, path), init);
    if (response.ok) {
      options.onResponse?.();
      return response;
    }
    const text = await readText(response, MAX_ERROR_BODY_BYTES, true).catch((error) =>
      String(error?.message ?? error)
    );
    const parsed = safeJson(text);
    throw apiError(response.status, parsed, parsed === undefined ? text : "", response.headers);
  }
}

/**
 * The address of `path` under `baseUrl`: after its own path (a gateway's prefix kept),
 * with `/v1` added to a bare origin.
 */
export function messagesUrl(baseUrl: string, path: string): URL {
  const [pathname, query] = path.split("?");
  const url = new URL(baseUrl);
  const base = url.pathname.replace(/\/+$/, "");
  url.pathname = `${base === "" ? "/v1" : base}${pathname}`;
  if (query) url.search = query;
  return url;
}

/**
 * The API's error (`{"type": "error", "error": {"type", "message"}}`) as a
 * {@linkcode ModelApiError}; `status` undefined inside a stream, where the error's type
 * says what it stands for.
 */
function apiError(
  status: number | undefined,
  parsed: unknown,
  text: string,
  headers?: Headers,
): ModelApiError {
  const error = isRecord(parsed) && parsed.error != null ? parsed.error : parsed;
  const type = isRecord(error) && typeof error.type === "string" ? error.type : undefined;
  return new ModelApiError(
    status ?? (type === undefined ? undefined : ERROR_TYPE_STATUS[type] ?? 500),
    error,
    text,
    headers,
  );
}

/** A success status whose body is an error (a gateway's way): the API's error. */
function refuseError(response: Response, body: unknown): void {
  if (isRecord(body) && body.type === "error") {
    const failure = apiError(undefined, body, "", response.headers);
    throw new ModelApiError(
      failure.status ?? response.status,
      failure.error,
      "",
      response.headers,
    );
  }
  if (isRecord(body) && body.type !== undefined && body.type !== "message" && !("data" in body)) {
    throw notTheApis(response, JSON.stringify(body));
  }
}

/** A whole message as the events a stream of it would carry. */
function wholeAsEvents(answer: MessagesAnswer): MessagesEvent[] {
  const content = Array.isArray(answer.content) ? answer.content : [];
  return [
    { type: "message_start", message: { model: answer.model, usage: answer.usage } },
    ...content.flatMap((block, index): MessagesEvent[] => [
      {
        type: "content_block_start",
        index,
        content_block: isRecord(block) && block.type === "text"
          ? { type: "text", text: "" }
          : block,
      },
      ...(isRecord(block) && block.type === "text" && typeof block.text === "string"
        ? [{ type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } }]
        : []),
    ]),
    { type: "message_delta", delta: { stop_reason: answer.stop_reason ?? null } },
  ];
}
