/**
 * Small, bounded network probes that find out what really answers at an address: used
 * to diagnose a failed connection (never to guess) and, for `auth.method: oauth`, to
 * check that the server publishes OAuth metadata at all.
 *
 * Every probe has a deadline, consumes or cancels every response body, and ends any MCP
 * session it opened.
 *
 * @module
 */

import { type FetchLike, LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/client";
import { denoPermissionFlag } from "../../deno_permission/denial.ts";
import { errorChain, type NetProblem, netProblem } from "../../errors/failure.ts";
import { VERSION } from "../../version.ts";

/** Deadline of one probe. */
export const PROBE_TIMEOUT_MS = 3000;

/** Plain fetch: what probes use unless given the session's (proxy-aware) fetch. */
const plainFetch: FetchLike = (input, init) => fetch(input, init);

/** Bytes of a response body read for classification. */
const BODY_SAMPLE_BYTES = 16 * 1024;

/**
 * Why a network probe got no HTTP answer: a network problem of the one list
 * (lib/failure_table.ts; a proxy's refusal and a dropped connection count as `other`),
 * or a Deno permission denied.
 */
export type NetFailureKind =
  | Exclude<NetProblem, "tunnel" | "dropped">
  | "permission"
  | "other";

/** A probe that got no answer. */
export interface NetFailure {
  ok: false;
  kind: NetFailureKind;
  message: string;
  /** For `permission`: the Deno flag that would allow it. */
  flag?: string;
}

/** Classifies a failed `Deno.connect` or `fetch` (by the one classifier, lib/failure.ts). */
export function classifyNetError(error: unknown): NetFailure {
  const flag = denoPermissionFlag(error);
  if (flag) return { ok: false, kind: "permission", message: (error as Error).message, flag };
  const problem = netProblem(error);
  const kind: NetFailureKind = problem === undefined || problem === "tunnel" ||
      problem === "dropped"
    ? "other"
    : problem;
  return { ok: false, kind, message: firstLine(errorChain(error)) };
}

/** Whether a TCP connection to `hostname:port` opens. */
export async function probeTcp(
  hostname: string,
  port: number,
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<{ ok: true } | NetFailure> {
  try {
    const connection = await Deno.connect({
      hostname,
      port,
      signal: AbortSignal.timeout(timeoutMs),
    });
    connection.close();
    return { ok: true };
  } catch (error) {
    return classifyNetError(error);
  }
}

/**
 * Speaks bare HTTP/1.0 on a TCP connection and reports the first bytes: tells an HTTP
 * server from anything else listening on the port.
 */
export async function probeRawHttp(
  hostname: string,
  port: number,
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<{ speaksHttp: boolean; firstBytes: string } | NetFailure> {
  let connection: Deno.TcpConn;
  try {
    connection = await Deno.connect({ hostname, port, signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    return classifyNetError(error);
  }
  const timer = setTimeout(() => connection.close(), timeoutMs);
  try {
    await connection.write(
      new TextEncoder().encode(`GET / HTTP/1.0\r\nHost: ${hostname}:${port}\r\n\r\n`),
    );
    const buffer = new Uint8Array(256);
    const read = await connection.read(buffer);
    const firstBytes = new TextDecoder().decode(buffer.subarray(0, read ?? 0));
    return { speaksHttp: /^HTTP\/\d/.test(firstBytes), firstBytes };
  } catch {
    return { speaksHttp: false, firstBytes: "" };
  } finally {
    clearTimeout(timer);
    try {
      connection.close();
    } catch {
      // Closed by the timer.
    }
  }
}

/** What an HTTP probe received. */
export interface HttpAnswer {
  ok: true;
  status: number;
  statusText: string;
  contentType: string;
  headers: Headers;
  /** The first bytes of the body, as text. */
  body: string;
}

/**
 * Sends one request and samples the answer (the body is never read past the sample).
 * `fetchFn` is the way the session reaches servers (its proxy). @default plain fetch
 */
export async function probeHttp(
  url: string | URL,
  init: RequestInit,
  timeoutMs = PROBE_TIMEOUT_MS,
  fetchFn: FetchLike = plainFetch,
): Promise<HttpAnswer | NetFailure> {
  const signal = AbortSignal.timeout(timeoutMs);
  let response: Response;
  try {
    response = await fetchFn(url, { ...init, redirect: "manual", signal });
  } catch (error) {
    return classifyNetError(error);
  }
  const contentType = (response.headers.get("content-type") ?? "").toLowerCase();
  const body = await sampleBody(response, contentType.startsWith("text/event-stream"));
  return {
    ok: true,
    status: response.status,
    statusText: response.statusText,
    contentType,
    headers: response.headers,
    body,
  };
}

/** Reads up to the sample size (an event stream: up to its first event with data). */
async function sampleBody(response: Response, stream: boolean): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    while (text.length < BODY_SAMPLE_BYTES) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      // Streams may open with priming events (an id, empty data): read to the first
      // event that carries data.
      if (stream && /(?:^|\n)data:[ \t]*\S[^\n]*\r?\n\r?\n/.test(text)) break;
    }
  } catch {
    // Timed out or reset mid-body: the sample so far is what there is.
  } finally {
    await reader.cancel().catch(() => {});
  }
  return text;
}

/** What an MCP-aware probe of a URL found. */
export type McpProbe =
  /** Streamable HTTP answered `initialize`. */
  | { kind: "streamable"; serverName?: string }
  /** A legacy SSE stream announced its POST endpoint. */
  | { kind: "sse"; endpoint: string }
  /** An HTTP answer that is not MCP. */
  | { kind: "http"; answer: HttpAnswer }
  /** No HTTP answer. */
  | { kind: "failure"; failure: NetFailure };

const INITIALIZE_BODY = JSON.stringify({
  jsonrpc: "2.0",
  id: "patchbay-probe",
  method: "initialize",
  params: {
    protocolVersion: LATEST_PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: { name: "patchbay-probe", version: VERSION },
  },
});

/**
 * How an MCP probe reaches its URL: the entry's headers, the probe's deadline and the way
 * the session reaches servers (its proxy).
 */
export interface ProbeRoute {
  /** @default {} */
  headers?: Readonly<Record<string, string>>;
  /** @default PROBE_TIMEOUT_MS */
  timeoutMs?: number;
  /** @default plain fetch */
  fetchFn?: FetchLike;
}

/**
 * POSTs `initialize` as a streamable HTTP client would. A session the server opened for
 * the probe is ended with `DELETE` at once.
 */
export async function probeStreamable(
  url: string | URL,
  route: ProbeRoute = {},
): Promise<McpProbe> {
  const { headers = {}, timeoutMs, fetchFn } = route;
  const answer = await probeHttp(
    url,
    {
      method: "POST",
      headers: {
        ...headers,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: INITIALIZE_BODY,
    },
    timeoutMs,
    fetchFn,
  );
  if (!answer.ok) return { kind: "failure", failure: answer };
  const session = answer.headers.get("mcp-session-id");
  if (session) {
    await probeHttp(
      url,
      { method: "DELETE", headers: { ...headers, "mcp-session-id": session } },
      timeoutMs,
      fetchFn,
    );
  }
  const message = answer.status === 200 ? jsonRpcFrom(answer) : undefined;
  const result = message?.result as
    | { protocolVersion?: unknown; serverInfo?: { name?: string } }
    | undefined;
  if (typeof result?.protocolVersion === "string") {
    return { kind: "streamable", serverName: result.serverInfo?.name };
  }
  return { kind: "http", answer };
}

/** GETs the URL as the legacy SSE transport would and looks for its `endpoint` event. */
export async function probeSse(url: string | URL, route: ProbeRoute = {}): Promise<McpProbe> {
  const accept = { ...route.headers, accept: "text/event-stream" };
  const answer = await probeHttp(
    url,
    { method: "GET", headers: accept },
    route.timeoutMs,
    route.fetchFn,
  );
  if (!answer.ok) return { kind: "failure", failure: answer };
  if (answer.status === 200 && answer.contentType.startsWith("text/event-stream")) {
    const match = /(?:^|\n)event:\s*endpoint\r?\ndata:\s*(.+)/.exec(answer.body);
    if (match) return { kind: "sse", endpoint: match[1].trim() };
  }
  return { kind: "http", answer };
}

/** The JSON-RPC message in a JSON or event-stream answer, if there is one. */
function jsonRpcFrom(answer: HttpAnswer): Record<string, unknown> | undefined {
  const texts = answer.contentType.startsWith("text/event-stream")
    ? [...answer.body.matchAll(/(?:^|\n)data:[ \t]*(\S[^\n]*)/g)].map((m) => m[1])
    : [answer.body];
  for (const text of texts) {
    try {
      const value = JSON.parse(text);
      if (value && typeof value === "object" && value.jsonrpc === "2.0") return value;
    } catch {
      // Not this one.
    }
  }
  return undefined;
}

/** Whether an answer's body is JSON-RPC (an MCP server's error, for instance). */
export function isJsonRpcAnswer(answer: HttpAnswer): boolean {
  return jsonRpcFrom(answer) !== undefined;
}

/** The JSON-RPC error message in an answer, if it carries one. */
export function jsonRpcErrorMessage(answer: HttpAnswer): string | undefined {
  const error = jsonRpcFrom(answer)?.error as { message?: unknown } | undefined;
  return typeof error?.message === "string" ? error.message : undefined;
}

/** The `<title>` of an HTML page, if it has one. */
export function htmlTitle(body: string): string | undefined {
  const match = /<title[^>]*>([^<]*)<\/title>/i.exec(body);
  const title = match?.[1].replace(/\s+/g, " ").trim();
  return title || undefined;
}

/** What OAuth discovery found for a server URL. */
export interface OAuthMetadataProbe {
  /** Some OAuth metadata was found. */
  found: boolean;
  /** Where it was found. */
  where?: string;
}

/**
 * Looks for OAuth support the way the MCP authorization specification discovers it: a
 * `WWW-Authenticate` challenge naming `resource_metadata`, protected-resource metadata
 * (RFC 9728) at the path-aware and root well-known URLs, and authorization-server
 * metadata (RFC 8414, OpenID Connect discovery) on the same origin. The connection
 * diagnosis uses it to suggest `auth.method: oauth` for a server that demands a token.
 */
export async function probeOAuthMetadata(
  serverUrl: string | URL,
  timeoutMs = PROBE_TIMEOUT_MS,
  fetchFn: FetchLike = plainFetch,
): Promise<OAuthMetadataProbe> {
  const url = new URL(serverUrl);
  const challenge = await probeStreamable(url, { timeoutMs, fetchFn });
  if (challenge.kind === "failure") return { found: false };
  if (challenge.kind === "http") {
    const www = challenge.answer.headers.get("www-authenticate") ?? "";
    if (challenge.answer.status === 401 && /resource_metadata=/i.test(www)) {
      return { found: true, where: "WWW-Authenticate" };
    }
  }
  const path = url.pathname === "/" ? "" : url.pathname.replace(/\/$/, "");
  const candidates = [
    [`/.well-known/oauth-protected-resource${path}`, "resource"],
    ["/.well-known/oauth-protected-resource", "resource"],
    [`/.well-known/oauth-authorization-server${path}`, "issuer"],
    ["/.well-known/oauth-authorization-server", "issuer"],
    ["/.well-known/openid-configuration", "issuer"],
  ] as const;
  const seen = new Set<string>();
  for (const [path, field] of candidates) {
    const target = new URL(path, url.origin).href;
    if (seen.has(target)) continue;
    seen.add(target);
    const answer = await probeHttp(
      target,
      { headers: { accept: "application/json" } },
      timeoutMs,
      fetchFn,
    );
    if (!answer.ok || answer.status !== 200) continue;
    try {
      const document = JSON.parse(answer.body);
      if (document && typeof document === "object" && field in document) {
        return { found: true, where: target };
      }
    } catch {
      // Not JSON: an HTML catch-all page, not metadata.
    }
  }
  return { found: false };
}

function firstLine(text: string): string {
  return text.split("\n")[0].slice(0, 300);
}
