/**
 * The fetch every OAuth request of a server goes through (discovery, registration, tokens,
 * revocation, the probe of the server itself): each address, and each redirect followed,
 * is checked against the server's {@linkcode EndpointPolicy} before the request is sent,
 * resolving its host at that moment.
 *
 * Redirects: a caller that handles them itself (`redirect: "manual"`, as the SDK does,
 * following only same-origin ones and calling this fetch again for each) gets them as they
 * are; otherwise they are followed here, at most {@linkcode MAX_OAUTH_REDIRECTS}, each
 * target checked first, with the method and body rewritten as browsers do and credentials
 * dropped across origins.
 *
 * Every answer is read up to `MAX_OAUTH_ANSWER_BYTES` (`answer_limits.ts`), so an
 * authorization server cannot make patchbay hold an answer of any size.
 *
 * Each answer is reported to `onResponse`, and a GET's JSON document added to the report
 * as its caller reads it (up to {@linkcode MAX_WITNESSED_BYTES}), so that one the SDK
 * finds invalid can be reported with its address, the field and the value it holds.
 *
 * @module
 */

import type { FetchLike } from "@modelcontextprotocol/client";
import type { EndpointPolicy, EndpointRole } from "./endpoint_policy.ts";
import { boundedAnswer } from "./answer_limits.ts";
import { watchedBody } from "./watched_body.ts";

/** Redirects followed for one OAuth request, as many as browsers allow in spirit. */
export const MAX_OAUTH_REDIRECTS = 5;

/** Metadata documents larger than this are not kept for error messages. */
export const MAX_WITNESSED_BYTES = 256 * 1024;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** An answer to an OAuth request, with the JSON of a GET (a metadata document). */
export interface FetchedDocument {
  url: string;
  method: string;
  status: number;
  /** The parsed JSON of a successful GET; `undefined` otherwise, or when it is not JSON. */
  json?: unknown;
}

/** Options of {@linkcode guardedFetch}. */
export interface GuardedFetchOptions {
  policy: EndpointPolicy;
  /** What an address is, for messages (`token_endpoint` …). @default an OAuth request */
  roleOf?: (url: URL) => EndpointRole | undefined;
  /**
   * Hears of each answer as it arrives; a successful GET's JSON is added to the object
   * heard of once its caller has read the body.
   */
  onResponse?: (document: FetchedDocument) => void;
}

/** `base`, with every address (and redirect) checked against `options.policy`. */
export function guardedFetch(base: FetchLike, options: GuardedFetchOptions): FetchLike {
  const roleOf = (url: URL): EndpointRole =>
    options.roleOf?.(url) ?? { name: "address", source: "requested during the OAuth flow" };
  const witness = (url: URL, method: string, response: Response): Response => {
    const seen: FetchedDocument = { url: url.href, method, status: response.status };
    options.onResponse?.(seen);
    const json = /\bjson\b/i.test(response.headers.get("content-type") ?? "");
    if (!options.onResponse || method !== "GET" || !response.ok || !json || !response.body) {
      return response;
    }
    // The document is kept as the caller reads it (at most MAX_WITNESSED_BYTES of it), so
    // an answer is never read ahead of its reader nor held back.
    const kept: Uint8Array[] = [];
    let size = 0;
    return watchedBody(response, {
      chunk(value) {
        size += value.byteLength;
        if (size <= MAX_WITNESSED_BYTES) kept.push(value);
        else kept.length = 0;
      },
      end() {
        if (size <= MAX_WITNESSED_BYTES) seen.json = parseJson(kept, size);
      },
    });
  };

  // The MCP server's own answers (the probe; an event stream may run for hours) are the
  // transports' to bound, message by message; everything else is the OAuth flow's.
  const server = options.policy.serverUrl;
  const bound = (url: URL, response: Response) =>
    url.origin === server.origin && url.pathname === server.pathname
      ? response
      : boundedAnswer(url, response);

  return async (input, init) => {
    const signal = init?.signal ?? undefined;
    if (input instanceof Request) {
      // Not followed here: a Request's body may be a stream that cannot be sent twice.
      const url = new URL(input.url);
      await options.policy.check(url, roleOf(url), signal);
      return bound(url, await base(input, { ...init, redirect: init?.redirect ?? "manual" }));
    }
    let url = new URL(String(input));
    await options.policy.check(url, roleOf(url), signal);
    const method = (init?.method ?? "GET").toUpperCase();
    if (init?.redirect === "manual" || init?.redirect === "error") {
      return witness(url, method, bound(url, await base(url, init)));
    }
    let request: RequestInit = { ...init, method, redirect: "manual" };
    for (let followed = 0;; followed++) {
      const response = await base(url, request);
      const location = REDIRECT_STATUSES.has(response.status)
        ? response.headers.get("location")
        : null;
      if (location === null || followed === MAX_OAUTH_REDIRECTS) {
        return witness(url, (request.method ?? "GET").toUpperCase(), bound(url, response));
      }
      let target: URL;
      try {
        target = new URL(location, url);
      } catch {
        return response;
      }
      const next = redirected(request, response.status, url, target);
      if (!next) return response;
      await options.policy.check(target, {
        name: "redirect",
        source: `from ${url.href} (HTTP ${response.status})`,
        credentials: roleOf(url).credentials,
      }, signal);
      await response.body?.cancel();
      url = target;
      request = next;
    }
  };
}

/**
 * The request a redirect calls for, as the Fetch standard makes it: 303 (and 301/302
 * after a POST) become a GET without a body; credentials stay within the origin. `undefined`
 * when the body cannot be sent again.
 */
function redirected(
  request: RequestInit,
  status: number,
  from: URL,
  to: URL,
): RequestInit | undefined {
  const method = (request.method ?? "GET").toUpperCase();
  const headers = new Headers(request.headers);
  let next: RequestInit = { ...request };
  if (
    status === 303 ? method !== "HEAD" : (status === 301 || status === 302) && method === "POST"
  ) {
    next = { ...next, method: "GET", body: undefined };
    for (const name of ["content-type", "content-length", "content-encoding"]) {
      headers.delete(name);
    }
  } else if (next.body !== undefined && next.body !== null) {
    const body = next.body;
    if (!(typeof body === "string" || body instanceof URLSearchParams)) return undefined;
  }
  if (from.origin !== to.origin) {
    headers.delete("authorization");
    headers.delete("cookie");
    headers.delete("proxy-authorization");
  }
  return { ...next, headers };
}

/** The JSON of the bytes kept, or `undefined` when they are not JSON. */
function parseJson(chunks: Uint8Array[], size: number): unknown {
  const all = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.byteLength;
  }
  try {
    return JSON.parse(new TextDecoder().decode(all));
  } catch {
    return undefined; // not JSON after all: the caller says so
  }
}
