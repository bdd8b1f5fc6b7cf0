/**
 * Asking an MCP server, without a token, whether and how it wants authorization: the
 * `WWW-Authenticate` challenge of its 401 carries the protected-resource metadata URL and
 * the scopes to request, which discovery needs before any login. Answers that are not
 * about authorization (no endpoint at the URL, a server error) are reported as what they
 * are, so a typo in the URL is never mistaken for an OAuth problem.
 *
 * @module
 */

import {
  extractWWWAuthenticateParams,
  type FetchLike,
  LATEST_PROTOCOL_VERSION,
} from "@modelcontextprotocol/client";
import type { HttpServerConfig } from "../config/types.ts";
import { PatchbayError, ServerProbeFailedError } from "../errors.ts";
import { ROWS, STEPS } from "../errors/failure_table.ts";
import { VERSION } from "../version.ts";

/** What the server answered an unauthenticated request. */
export type ProbeResult =
  /** It did not ask for authorization. */
  | { ok: true; status: number }
  /** It asked (401/403), with the challenge's hints. */
  | { ok: false; status: number; scope?: string; resourceMetadataUrl?: URL };

/** Sends the first request a client would send (initialize, or the SSE GET) with no token. */
export async function probeServer(
  entry: HttpServerConfig,
  fetchFn: FetchLike,
  signal?: AbortSignal,
): Promise<ProbeResult> {
  const url = new URL(entry.url);
  let response: Response;
  try {
    response = await fetchFn(url, probeRequest(entry, signal));
  } catch (error) {
    if (error instanceof DOMException && error.name === "AbortError") throw error;
    // Refused by patchbay itself (a redirect the endpoint policy does not allow).
    if (error instanceof PatchbayError) throw error;
    throw new ServerProbeFailedError(entry.name, {
      reason: `${url.href} could not be reached: ${describeFetchError(error)}`,
      remedy: ROWS.not_running.remedy,
      cause: error,
    });
  }
  await response.body?.cancel();
  const { status } = response;
  if (status === 404 || status === 410) {
    throw new ServerProbeFailedError(entry.name, {
      reason: `${url.href} answered HTTP ${status}: there is no MCP endpoint at this address`,
      remedy: ROWS.wrong_address.remedy,
    });
  }
  if (status >= 500) {
    throw new ServerProbeFailedError(entry.name, {
      reason: `${url.href} answered HTTP ${status} (a server error)`,
      remedy: STEPS.serverFault,
    });
  }
  if (status !== 401 && status !== 403) {
    // 2xx, or a 4xx about the request itself: either way not a demand for authorization.
    if (response.ok) await endSession(entry, fetchFn, response);
    return { ok: true, status };
  }
  const challenge = extractWWWAuthenticateParams(response);
  return {
    ok: false,
    status,
    scope: challenge.scope,
    resourceMetadataUrl: challenge.resourceMetadataUrl,
  };
}

function probeRequest(entry: HttpServerConfig, signal?: AbortSignal): RequestInit {
  const headers = new Headers(entry.headers);
  if (entry.transport === "sse") {
    headers.set("accept", "text/event-stream");
    return { method: "GET", headers, signal };
  }
  headers.set("accept", "application/json, text/event-stream");
  headers.set("content-type", "application/json");
  return {
    method: "POST",
    headers,
    signal,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: "patchbay", version: VERSION },
      },
    }),
  };
}

/** A server that opened a session for the probe gets it closed again. */
async function endSession(
  entry: HttpServerConfig,
  fetchFn: FetchLike,
  response: Response,
): Promise<void> {
  const session = response.headers.get("mcp-session-id");
  if (!session) return;
  await fetchFn(new URL(entry.url), {
    method: "DELETE",
    headers: { ...entry.headers, "mcp-session-id": session },
  }).then((r) => r.body?.cancel()).catch(() => {});
}

/** `TypeError: fetch failed` hides the reason in `cause`. */
export function describeFetchError(error: unknown): string {
  const cause = (error as { cause?: unknown })?.cause;
  const text = cause instanceof Error ? cause.message : (error as Error)?.message;
  return text ?? String(error);
}
