/**
 * The legacy SSE fallback of an entry that does not say its transport: a `url` is tried
 * as streamable HTTP first, and a server that refuses that POST with a 4xx status but
 * answers a GET with the legacy transport's `endpoint` event is reached over SSE instead,
 * as the MCP specification's backwards-compatibility section and VS Code do. An entry that
 * writes `transport_type` gets exactly that transport.
 *
 * @module
 */

import { SdkHttpError } from "@modelcontextprotocol/client";
import type { HttpServerConfig, ServerConfig } from "../config/types.ts";
import { type Network, PROCESS_NETWORK } from "../proxy.ts";
import { isModernRevision } from "../revisions.ts";
import { DIAGNOSIS_PROBE_MS } from "./diagnosis/diagnosis_context.ts";
import { probeSse } from "./diagnosis/network_probe.ts";

/** Statuses that refuse the request's credentials: OAuth's or the headers' business. */
const CREDENTIAL_STATUSES: readonly number[] = [401, 403];

/** How deep the thrown error's causes are searched for the HTTP answer. */
const MAX_CAUSE_DEPTH = 5;

/** How the fallback's probe reaches the server. */
export interface FallbackRoute {
  /** @default PROCESS_NETWORK */
  network?: Network;
  /** @default DIAGNOSIS_PROBE_MS */
  probeTimeoutMs?: number;
}

/**
 * The entry to try again over SSE, when `config` (its transport inferred as streamable
 * HTTP) failed with `error` the way a legacy SSE server fails: a 4xx answer to the POST,
 * then an `endpoint` event to a GET of the same URL. `undefined` otherwise.
 */
export async function legacySseEntry(
  config: ServerConfig,
  error: unknown,
  route: FallbackRoute = {},
): Promise<HttpServerConfig | undefined> {
  if (config.transport !== "streamable_http" || !config.transportInferred) return undefined;
  // A revision of the stateless era was asked for, which has no SSE transport.
  if (config.protocol !== undefined && isModernRevision(config.protocol)) return undefined;
  const status = httpStatusIn(error);
  if (status === undefined || status < 400 || status >= 500) return undefined;
  if (CREDENTIAL_STATUSES.includes(status)) return undefined;
  const probe = await probeSse(config.url, {
    headers: config.headers,
    timeoutMs: route.probeTimeoutMs ?? DIAGNOSIS_PROBE_MS,
    fetchFn: (route.network ?? PROCESS_NETWORK).fetch,
  });
  if (probe.kind !== "sse") return undefined;
  return {
    ...config,
    transport: "sse",
    transportReason: `the server answered streamable HTTP the legacy way, HTTP ${status} to ` +
      `the POST and an "endpoint" event to the GET, so SSE, as VS Code falls back`,
  };
}

/** The status of the HTTP answer behind `error`, if one is in its causes. */
function httpStatusIn(error: unknown): number | undefined {
  let current = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current instanceof Error; depth++) {
    if (current instanceof SdkHttpError) return current.status;
    current = current.cause;
  }
  return undefined;
}
