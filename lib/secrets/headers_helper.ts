/**
 * A server's `headers_helper` (docs/secrets.md; Claude Code's `headersHelper`): a program
 * whose stdout is one JSON object of header names to values, sent over the entry's static
 * `headers` on every request. It runs when a connection attempt starts, again when the
 * server answers 401 (once per refusal: the request is then sent again with the new
 * headers), and before a request once `headers_helper_ttl` seconds have passed.
 *
 * Every value it prints is registered with the redactor before it is sent or logged.
 *
 * @module
 */

import type { FetchLike } from "@modelcontextprotocol/client";
import type { HelperCommand, HttpServerConfig } from "../config/types.ts";
import { BearerRejectedError, type HelperRole } from "../errors.ts";
import { type Log, silentLog } from "../log/log.ts";
import type { Redactor } from "../redact/redact.ts";
import { describeHelper, fixThen, refusedOutput, runHelper } from "./helper.ts";

/** Most headers one helper may set. */
export const MAX_HELPER_HEADERS = 64;
/** Longest value of one header a helper may set. */
export const MAX_HEADER_VALUE_CHARS = 8192;

/** What an HTTP header name may be (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Headers the transport itself sets: a helper's value would break the protocol or the
 * request (the session id, the body's type and length), so it may not set them.
 */
const TRANSPORT_HEADERS: ReadonlySet<string> = new Set([
  "accept",
  "connection",
  "content-length",
  "content-type",
  "host",
  "last-event-id",
  "mcp-protocol-version",
  "mcp-session-id",
  "transfer-encoding",
]);

/** Headers one helper run gave, and which run it was. */
interface Held {
  values: Readonly<Record<string, string>>;
  generation: number;
  at: number;
}

/** Options of {@linkcode HelperHeaders}. */
export interface HelperHeadersOptions {
  parentEnv: (name: string) => string | undefined;
  redactor: Redactor;
  log?: Log;
  /** @default Date.now */
  now?: () => number;
  /** @default DEFAULTS.secrets.helperTimeoutSeconds × 1000 */
  timeoutMs?: number;
}

/** The headers of one server's `headers_helper`, for one connection attempt. */
export class HelperHeaders {
  readonly #server: HttpServerConfig;
  readonly #helper: HelperCommand;
  readonly #role: HelperRole;
  readonly #options: HelperHeadersOptions;
  readonly #log: Log;
  #held?: Held;
  #running?: Promise<Held>;
  #generation = 0;

  constructor(
    server: HttpServerConfig & { headersHelper: HelperCommand },
    options: HelperHeadersOptions,
  ) {
    this.#server = server;
    this.#helper = server.headersHelper;
    this.#role = { kind: "headers", server: server.name };
    this.#options = options;
    this.#log = options.log ?? silentLog;
  }

  /** The headers to send now: the helper runs when none are held or their time has passed. */
  async current(signal?: AbortSignal): Promise<Held> {
    const held = this.#held;
    const ttl = this.#server.headersHelperTtlSeconds;
    const now = (this.#options.now ?? Date.now)();
    if (held && (ttl === undefined || now - held.at < ttl * 1000)) return held;
    if (held) this.#log.info(`headers_helper's headers are ${ttl} s old; running it again`);
    return await this.#run(signal);
  }

  /**
   * The server refused the headers of run `generation`: runs the helper again, unless a
   * newer run already replaced them. True when there are other headers to try.
   */
  async renew(generation: number, signal?: AbortSignal): Promise<boolean> {
    const before = this.#held;
    if (before && before.generation !== generation) return true;
    const after = await this.#run(signal);
    return JSON.stringify(after.values) !== JSON.stringify(before?.values);
  }

  /**
   * `fetch` with the helper's headers set over the entry's on each request, and one more
   * try with new headers when the server answers 401.
   */
  wrapFetch(fetch: FetchLike): FetchLike {
    const origin = new URL(this.#server.url).origin;
    return async (input, init) => {
      const held = await this.current(init?.signal ?? undefined);
      const response = await fetch(input, withHeaders(init, held.values));
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (response.status !== 401 || url.origin !== origin) return response;
      await response.body?.cancel();
      this.#log.info("the server answered 401; running headers_helper again");
      if (!(await this.renew(held.generation, init?.signal ?? undefined))) {
        throw this.#rejected("it printed the same headers again");
      }
      const renewed = await this.current(init?.signal ?? undefined);
      const again = await fetch(input, withHeaders(init, renewed.values));
      if (again.status !== 401) return again;
      await again.body?.cancel();
      throw this.#rejected("also the headers it printed when run again");
    };
  }

  #run(signal?: AbortSignal): Promise<Held> {
    // Requests waiting at once share one run.
    this.#running ??= this.#runOnce(signal).finally(() => this.#running = undefined);
    return this.#running;
  }

  async #runOnce(signal?: AbortSignal): Promise<Held> {
    const { redactor } = this.#options;
    const output = await runHelper(this.#helper, {
      role: this.#role,
      parentEnv: this.#options.parentEnv,
      facts: {
        PATCHBAY_MCP_SERVER_NAME: this.#server.name,
        PATCHBAY_MCP_SERVER_URL: this.#server.url,
        // Claude Code's names, so its headersHelper scripts work unchanged.
        CLAUDE_CODE_MCP_SERVER_NAME: this.#server.name,
        CLAUDE_CODE_MCP_SERVER_URL: this.#server.url,
      },
      redactor,
      signal,
      timeoutMs: this.#options.timeoutMs,
    });
    const parsed = parseHelperHeaders(output);
    if ("problem" in parsed) {
      throw refusedOutput(this.#role, this.#helper, output, parsed.problem, redactor);
    }
    for (const value of Object.values(parsed.headers)) {
      redactor.addSecret(value);
      redactor.addSecret(value.replace(/^(Bearer|Basic|Token)\s+/i, ""));
    }
    this.#log.debug("headers_helper gave headers", { names: Object.keys(parsed.headers) });
    this.#held = {
      values: parsed.headers,
      generation: ++this.#generation,
      at: (this.#options.now ?? Date.now)(),
    };
    return this.#held;
  }

  #rejected(what: string): BearerRejectedError {
    return new BearerRejectedError(
      this.#server.name,
      401,
      `the server refused the headers ${describeHelper(this.#helper)} printed (HTTP 401), ` +
        what,
      fixThen(
        this.#role,
        "check what it prints by hand: the credential in it is wrong, expired or revoked",
      ),
    );
  }
}

/**
 * The headers in a helper's output: one JSON object of header names to text values. The
 * problem, when it is not, never quotes the output (it may be a credential).
 */
export function parseHelperHeaders(
  output: string,
): { headers: Record<string, string> } | { problem: string } {
  const text = output.trim();
  if (text === "") return { problem: "its output is empty" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: "its output is not JSON" };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return {
      problem: `its output is JSON ${
        Array.isArray(value) ? "an array" : value === null ? "null" : `a ${typeof value}`
      }, not an object`,
    };
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_HELPER_HEADERS) {
    return { problem: `it sets ${entries.length} headers; at most ${MAX_HELPER_HEADERS}` };
  }
  const headers: Record<string, string> = {};
  for (const [index, [name, headerValue]] of entries.entries()) {
    if (!HEADER_NAME.test(name)) {
      return { problem: `name ${index + 1} of its object is not a valid HTTP header name` };
    }
    if (TRANSPORT_HEADERS.has(name.toLowerCase())) {
      return { problem: `it sets ${name}, which the MCP transport sets itself` };
    }
    if (typeof headerValue !== "string") {
      return { problem: `the value of ${name} is ${typeof headerValue}, not text` };
    }
    if (/[\r\n\0]/.test(headerValue)) {
      return { problem: `the value of ${name} holds a line break or NUL` };
    }
    if (headerValue.length > MAX_HEADER_VALUE_CHARS) {
      return {
        problem: `the value of ${name} is longer than ${MAX_HEADER_VALUE_CHARS} characters`,
      };
    }
    headers[name] = headerValue;
  }
  return { headers };
}

/** `init` with `values` set over its headers (a helper's win over the entry's). */
function withHeaders(
  init: RequestInit | undefined,
  values: Readonly<Record<string, string>>,
): RequestInit {
  const headers = new Headers(init?.headers);
  for (const [name, value] of Object.entries(values)) headers.set(name, value);
  return { ...init, headers };
}
