/**
 * The HTTP side of an OpenAI-compatible API, as far as patchbay uses it: a chat completion
 * (whole, or streamed as server-sent events) and the list of models.
 *
 * patchbay's own client rather than the `openai` package (docs/design.md, "Stack changes"): the
 * package builds a client for the whole API surface, and loading it cost the interactive
 * session about 16 MiB of resident memory for the three requests used here. What the package did
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

import {
  type ChatCompletion,
  type ChatCompletionChunk,
  type ChatCompletionRequest,
  isRecord,
  MalformedAnswerError,
  ModelApiError,
} from "./chat_wire.ts";
import {
  answerChunks,
  QUOTED_CHARS,
  readJson,
  readText,
  refuseErrorBody,
  safeJson,
} from "./answer_body.ts";
import { abridge } from "../text/text.ts";
import { NAME, VERSION } from "../version.ts";

/** Largest answer read: a whole completion, all events of one stream, or a model list. */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/** Largest error body read; the message a person needs is in its first lines. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

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
  /** The key of this request, over the constructor's. */
  apiKey?: string;
  /** Called when a success status and its headers arrive, before the body is read. */
  onResponse?: () => void;
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
      throw new MalformedAnswerError(
        `the completion was ${abridge(JSON.stringify(completion), QUOTED_CHARS)}`,
      );
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
    return answerChunks(response, this.#maxAnswer);
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
    const { azure, client } = this.#options;
    const apiKey = options.apiKey ?? this.#options.apiKey;
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
    if (response.ok) {
      options.onResponse?.();
      return response;
    }
    const text = await readText(response, MAX_ERROR_BODY_BYTES, true).catch((error) =>
      String(error?.message ?? error)
    );
    const parsed = safeJson(text);
    // OpenAI's shape is {"error": {...}}; a body without it is kept whole.
    const error = isRecord(parsed) && parsed.error != null ? parsed.error : parsed;
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

function hasDeploymentSegment(baseUrl: string): boolean {
  try {
    return new URL(baseUrl).pathname.split("/").includes("deployments");
  } catch {
    return false;
  }
}
