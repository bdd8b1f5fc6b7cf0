/**
 * Sizes of what an authorization server sends. Its answers (metadata, registration,
 * tokens) were read whole, and a token was stored and sent as it came: a token endpoint
 * answering with a 60 MB token had it accepted, stored, reloaded at every start (hundreds
 * of MB of memory) and sent in a header the MCP server refused (HTTP 431). Every OAuth
 * answer is now read up to {@linkcode MAX_OAUTH_ANSWER_BYTES}, a token longer than
 * {@linkcode MAX_TOKEN_CHARS} is refused when received and when loaded, and a stored
 * credentials document larger than {@linkcode MAX_STORED_CREDENTIALS_BYTES} is discarded
 * unread (docs/security-limits.md).
 *
 * @module
 */

import { watchedBody } from "./watched_body.ts";

/**
 * Bytes of one OAuth answer: metadata documents, registration and token answers run to a
 * few KB; 1 MiB leaves room for any real one.
 */
export const MAX_OAUTH_ANSWER_BYTES = 1024 * 1024;

/**
 * Characters of an access, refresh or ID token. A token travels in an HTTP header, which
 * servers cap at 8 to 16 KiB in all (Node's default: 16 KiB): a longer token could not be
 * used anyway.
 */
export const MAX_TOKEN_CHARS = 16 * 1024;

/** Bytes of one server's stored credentials document (tokens, client, discovery). */
export const MAX_STORED_CREDENTIALS_BYTES = 1024 * 1024;

/** An OAuth answer longer than {@linkcode MAX_OAUTH_ANSWER_BYTES}; `login_errors.ts` words it. */
export class OAuthAnswerTooLarge extends Error {
  constructor(
    /** The address that answered. */
    readonly url: string,
    /** Bytes announced (`content-length`) or read before stopping. */
    readonly bytes: number,
  ) {
    super(`the OAuth answer of ${url} is larger than ${MAX_OAUTH_ANSWER_BYTES} bytes`);
    this.name = "OAuthAnswerTooLarge";
  }
}

/**
 * `response`, its body cut off with an {@linkcode OAuthAnswerTooLarge} once it passes
 * {@linkcode MAX_OAUTH_ANSWER_BYTES}; thrown at once when its `content-length` says so.
 */
export function boundedAnswer(url: URL, response: Response): Response {
  const announced = Number(response.headers.get("content-length") ?? NaN);
  if (announced > MAX_OAUTH_ANSWER_BYTES) {
    response.body?.cancel().catch(() => {});
    throw new OAuthAnswerTooLarge(url.href, announced);
  }
  let size = 0;
  return watchedBody(response, {
    chunk(value) {
      size += value.byteLength;
      if (size > MAX_OAUTH_ANSWER_BYTES) return new OAuthAnswerTooLarge(url.href, size);
    },
  });
}

/** The first token of `tokens` longer than {@linkcode MAX_TOKEN_CHARS}, with its length. */
export function oversizedToken(
  tokens: { access_token?: unknown; refresh_token?: unknown; id_token?: unknown } | undefined,
): { field: string; length: number } | undefined {
  if (!tokens) return undefined;
  for (const field of ["access_token", "refresh_token", "id_token"] as const) {
    const value = tokens[field];
    if (typeof value === "string" && value.length > MAX_TOKEN_CHARS) {
      return { field, length: value.length };
    }
  }
  return undefined;
}
