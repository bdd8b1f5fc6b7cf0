/**
 * Why a streamable HTTP or SSE server did not connect, found by looking at its address:
 * a TCP connection (to the proxy, when one is in the way), what answers HTTP there, the
 * other transport at the same URL, the usual MCP paths on the same origin, and OAuth
 * metadata behind a 401.
 *
 * @module
 */

import { SdkHttpError } from "@modelcontextprotocol/client";
import type { HttpServerConfig } from "../../config/types.ts";
import { OAuthFailedError, PatchbayError, ServerConnectError } from "../../errors.ts";
import { hostOf, portOf, PROCESS_NETWORK, type ProxySettings } from "../../proxy.ts";
import { abridge } from "../../text/text.ts";
import {
  netLabel,
  netReason,
  UNTRUSTED_CERTIFICATE_REMEDY,
  untrustedCertificate,
} from "../../errors/failure.ts";
import { type RemedyText, ROWS, STEPS } from "../../errors/failure_table.ts";
import { CONNECTION_STEPS } from "../../errors/connection_steps.ts";
import { type ConnectFailure, DIAGNOSIS_PROBE_MS, protocolText } from "./diagnosis_context.ts";
import {
  htmlTitle,
  type HttpAnswer,
  isJsonRpcAnswer,
  jsonRpcErrorMessage,
  type McpProbe,
  type NetFailure,
  probeOAuthMetadata,
  probeRawHttp,
  type ProbeRoute,
  probeSse,
  probeStreamable,
  probeTcp,
} from "./network_probe.ts";
import {
  proxiedFailure,
  proxiedServer,
  PROXY_STATUSES,
  proxyAnswer,
  proxyUnreachable,
} from "./diagnose_proxy.ts";

/** The diagnosis of a streamable HTTP or SSE entry. */
export async function diagnoseHttp(
  server: HttpServerConfig,
  context: ConnectFailure,
): Promise<PatchbayError> {
  const probeMs = context.probeTimeoutMs ?? DIAGNOSIS_PROBE_MS;
  const network = context.network ?? PROCESS_NETWORK;
  const url = new URL(server.url);
  const fail = (reason: string, remedy: RemedyText) =>
    new ServerConnectError(server.name, { reason, remedy, cause: context.error });
  const address = `${url.hostname}:${portOf(url)}`;
  if (context.httpClose?.kind === "oversize") {
    return fail(context.httpClose.detail, ROWS.answer_too_large.remedy);
  }

  let proxy: ProxySettings | undefined;
  try {
    proxy = network.route(url);
  } catch (error) {
    return fail(
      `${(error as Error).message}: patchbay cannot send requests for ${url.origin} through it`,
      CONNECTION_STEPS.badProxy,
    );
  }
  if (proxy) {
    // Requests go to the proxy, not the server: a proxy that is down must be named as
    // such, never mistaken for the server not running.
    const proxyUrl = new URL(proxy.url);
    const reach = await probeTcp(hostOf(proxyUrl), portOf(proxyUrl), probeMs);
    if (!reach.ok) return proxyUnreachable(proxiedServer(server, proxy), reach, context);
  } else {
    const tcp = await probeTcp(hostOf(url), portOf(url), probeMs);
    if (!tcp.ok) return networkFailure(server, tcp, address, context);
  }

  // An OAuth entry's requests carry a token the probes below cannot send: when the server
  // answered the session's own request, that answer is the evidence, not the 401 a probe
  // without the token would get.
  const answered = answerToSession(server, context.error, proxy !== undefined);
  if (answered) return answered;

  const route: ProbeRoute = { headers: server.headers, timeoutMs: probeMs, fetchFn: network.fetch };
  const primary = server.transport === "sse"
    ? await probeSse(url, route)
    : await probeStreamable(url, route);
  if (primary.kind === "failure" && proxy) {
    return proxiedFailure(proxiedServer(server, proxy), primary.failure, context);
  }
  if (primary.kind === "http" && proxy) {
    const fromProxy = proxyAnswer(proxiedServer(server, proxy), primary.answer, context);
    if (fromProxy) return fromProxy;
  }
  if (primary.kind === "failure") {
    const failure = primary.failure;
    if (failure.kind === "timeout") {
      return fail(
        `Connection timeout: ${address} accepted the connection but sent no HTTP answer ` +
          waitedFor(server, context, probeMs),
        ROWS.timeout.remedy,
      );
    }
    if (failure.kind === "tls" && untrustedCertificate(failure.message)) {
      return fail(
        `the TLS certificate of ${address} is not trusted (${abridge(failure.message, 160)}): ` +
          "a TLS-inspecting proxy re-signs traffic with its own CA, or the server's " +
          "certificate is self-signed",
        UNTRUSTED_CERTIFICATE_REMEDY,
      );
    }
    if (failure.kind === "tls") {
      return fail(
        `the TLS handshake with ${address} failed (${failure.message}); the server may not ` +
          "speak HTTPS",
        url.protocol === "https:"
          ? `use http:// in "url" if the server speaks plain HTTP`
          : ROWS.wrong_address.remedy,
      );
    }
    const raw = await probeRawHttp(url.hostname, portOf(url), probeMs);
    if ("speaksHttp" in raw && !raw.speaksHttp) {
      const said = raw.firstBytes.trim()
        ? `it answered "${abridge(printable(raw.firstBytes).trim(), 60)}"`
        : "it sent nothing back";
      return fail(
        `wrong transport_type: ${address} accepts connections but does not speak HTTP (${said})`,
        CONNECTION_STEPS.notHttp,
      );
    }
    return fail(
      `the HTTP request to ${server.url} failed: ${failure.message}`,
      ROWS.wrong_address.remedy,
    );
  }

  if (primary.kind === "streamable" || primary.kind === "sse") {
    // The address speaks the configured transport: the failure was in the session.
    if (context.timedOut) {
      return fail(
        `Connection timeout: ${server.url} answers MCP probes but the handshake did not ` +
          `complete within ${server.timeoutSeconds} s`,
        ROWS.timeout.remedy,
      );
    }
    return fail(
      `the MCP session with ${server.url} failed: ${protocolText(context.error)}`,
      STEPS.sessionFailed,
    );
  }

  return await diagnoseAnswer(server, primary.answer, context, route);
}

/**
 * What an OAuth server answered the session's authorized request, when it answered with
 * something other than a refusal of the token (401/403, which OAuth handles itself).
 */
function answerToSession(
  server: HttpServerConfig,
  error: unknown,
  proxied: boolean,
): ServerConnectError | undefined {
  if (server.auth?.method !== "oauth") return undefined;
  const http = findHttpError(error);
  if (!http || http.status === 401 || http.status === 403) return undefined;
  if (proxied && PROXY_STATUSES.includes(http.status)) return undefined;
  const status = `HTTP ${http.status}${http.statusText ? ` ${http.statusText}` : ""}`;
  const body = typeof http.data.text === "string" ? http.data.text : "";
  const said = jsonRpcMessageIn(body) ?? printable(body).trim();
  const quoted = said ? ` ("${abridge(said, 160)}")` : "";
  return new ServerConnectError(server.name, {
    reason: http.status >= 500
      ? `the server failed with ${status}${quoted} after the OAuth login succeeded`
      : `the server answered ${status}${quoted} to a request sent with the OAuth token: it ` +
        "accepted the login but refused the request itself",
    remedy: http.status >= 500
      ? STEPS.serverFault
      : "check what the server expects (its documentation, or the exchange logged with " +
        '--debug); if it names the protocol version, try "protocol": "legacy" or a ' +
        "revision it supports in the server entry",
    cause: error,
  });
}

/** The SDK's HTTP error in an error's cause chain. */
function findHttpError(error: unknown): SdkHttpError | undefined {
  let current = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof SdkHttpError) return current;
    current = current.cause;
  }
  return undefined;
}

/** The message of a JSON-RPC error body. */
function jsonRpcMessageIn(body: string): string | undefined {
  try {
    const message = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message;
    return typeof message === "string" ? message : undefined;
  } catch {
    return undefined;
  }
}

function networkFailure(
  server: HttpServerConfig,
  failure: NetFailure,
  address: string,
  context: ConnectFailure,
): ServerConnectError {
  const info = (reason: string, remedy: RemedyText) =>
    new ServerConnectError(server.name, { reason, remedy, cause: context.error });
  const target = { address, host: new URL(server.url).hostname };
  switch (failure.kind) {
    case "refused":
      return info(
        `${netLabel("refused")}: ${netReason("refused", target)} (the server is not running ` +
          "at the configured address)",
        CONNECTION_STEPS.refused,
      );
    case "dns":
      return info(
        netReason("dns", target),
        ROWS.wrong_address.remedy,
      );
    case "timeout":
      return info(
        `Connection timeout: no TCP connection to ${address} ` +
          waitedFor(server, context, context.probeTimeoutMs ?? DIAGNOSIS_PROBE_MS) +
          " (a host that is down, or a firewall dropping packets)",
        ROWS.timeout.remedy,
      );
    case "unreachable":
      return info(`Network unreachable: ${failure.message}`, ROWS.network.remedy);
    default:
      return info(`could not connect to ${address}: ${failure.message}`, ROWS.wrong_address.remedy);
  }
}

async function diagnoseAnswer(
  server: HttpServerConfig,
  answer: HttpAnswer,
  context: ConnectFailure,
  route: ProbeRoute,
): Promise<PatchbayError> {
  const fail = (reason: string, remedy: RemedyText) =>
    new ServerConnectError(server.name, { reason, remedy, cause: context.error });
  const url = new URL(server.url);
  const status = `HTTP ${answer.status}${answer.statusText ? ` ${answer.statusText}` : ""}`;

  if (answer.status === 401 || answer.status === 403) {
    return await authFailure(server, status, context.error, route);
  }
  const location = answer.status >= 300 && answer.status < 400
    ? answer.headers.get("location")
    : null;
  if (location !== null && URL.canParse(location, url)) {
    const next = new URL(location, url);
    if (next.origin !== url.origin) {
      // The SDK's transports follow redirects within the origin only (its redirectPolicy
      // 'same-origin'): the entry's headers, a headers_helper's and the session id would
      // go with the request. Said as such, not as a wrong address.
      return fail(
        `${server.url} redirects (${status}) to ${abridge(printable(next.href), 200)}, ` +
          "another origin; patchbay follows a server's redirects only within its origin, as " +
          "the entry's headers would go with them",
        CONNECTION_STEPS.crossOriginRedirect,
      );
    }
  }

  // The other transport at this very URL?
  const other = server.transport === "sse"
    ? await probeStreamable(url, route)
    : await probeSse(url, route);
  if (other.kind === "streamable" || other.kind === "sse") {
    const speaks = other.kind === "sse" ? "sse" : "streamable_http";
    return fail(
      `wrong transport_type: ${server.url} speaks ${
        speaks === "sse" ? "the legacy SSE transport" : "streamable HTTP"
      }, not ${server.transport} (${status} to the ${server.transport} request)`,
      CONNECTION_STEPS.otherTransport(speaks),
    );
  }

  const elsewhere = await findEndpoint(url, server, route);
  const moveTo = elsewhere
    ? `set "url" to ${elsewhere.url}` +
      (elsewhere.transport !== server.transport
        ? ` and "transport_type" to "${elsewhere.transport}"`
        : "") +
      " (found by probing)"
    : undefined;

  if (answer.status === 404) {
    return fail(
      `${status} at ${server.url}: nothing serves MCP at the path '${url.pathname}'`,
      moveTo ?? CONNECTION_STEPS.wrongPath,
    );
  }
  if (answer.contentType.includes("text/html")) {
    const title = htmlTitle(answer.body);
    return fail(
      `${server.url} answered with an HTML page${title ? ` ("${abridge(title, 80)}")` : ""} ` +
        `(${status}) instead of MCP: this is a web page, not an MCP endpoint`,
      moveTo ?? ROWS.wrong_address.remedy,
    );
  }
  if (answer.status >= 500) {
    const said = jsonRpcErrorMessage(answer) ?? printable(answer.body).trim();
    return fail(
      `the server failed with ${status}${said ? ` ("${abridge(said, 120)}")` : ""}`,
      STEPS.serverFault,
    );
  }
  if (isJsonRpcAnswer(answer)) {
    const message = jsonRpcErrorMessage(answer);
    return fail(
      `the server refused the MCP handshake (${status}${
        message ? `: ${abridge(message, 160)}` : ""
      })`,
      moveTo ?? "check the server's documentation for the headers or URL it expects",
    );
  }
  const type = answer.contentType.split(";")[0] || "no content type";
  return fail(
    `${server.url} answered ${status} with ${type} that is not MCP (JSON-RPC)`,
    moveTo ?? ROWS.wrong_address.remedy,
  );
}

async function authFailure(
  server: HttpServerConfig,
  status: string,
  cause: unknown,
  route: ProbeRoute,
): Promise<PatchbayError> {
  const info = (reason: string, remedy: string) =>
    new ServerConnectError(server.name, { reason, remedy, cause });
  if (server.auth?.method === "oauth") {
    return new OAuthFailedError(server.name, {
      reason: `the server refused access (${status}) and the OAuth authorization did not ` +
        "complete",
      cause,
    });
  }
  const hasToken = Object.keys(server.headers).some((h) => h.toLowerCase() === "authorization");
  if (hasToken) {
    return info(
      `the server rejected the credentials sent in "headers" (${status})`,
      CONNECTION_STEPS.tokenRejected,
    );
  }
  const oauth = await probeOAuthMetadata(server.url, route.timeoutMs, route.fetchFn);
  if (oauth.found) {
    return info(
      `the server requires OAuth authorization (${status}; metadata at ${oauth.where})`,
      CONNECTION_STEPS.addOAuth,
    );
  }
  return info(
    `the server requires credentials (${status}) and publishes no OAuth metadata`,
    CONNECTION_STEPS.sendToken,
  );
}

/** Looks for the MCP endpoint elsewhere on the same origin (the common paths). */
async function findEndpoint(
  url: URL,
  server: HttpServerConfig,
  route: ProbeRoute,
): Promise<{ url: string; transport: "streamable_http" | "sse" } | undefined> {
  const candidates: [string, "streamable_http" | "sse"][] = [
    ["/mcp", "streamable_http"],
    ["/sse", "sse"],
    ["/", "streamable_http"],
  ];
  for (const [path, transport] of candidates) {
    const target = new URL(path, url.origin);
    if (target.href === url.href && transport === server.transport) continue;
    const probe: McpProbe = transport === "sse"
      ? await probeSse(target, route)
      : await probeStreamable(target, route);
    if (probe.kind === "streamable" || probe.kind === "sse") return { url: target.href, transport };
  }
  return undefined;
}

// -------------------------------------------------------------------------- helpers

/**
 * How long patchbay waited, as the person configured it: the server's own `timeout` when
 * the connection attempt ran out of it, else the diagnosis probe's bound.
 */
function waitedFor(server: HttpServerConfig, context: ConnectFailure, probeMs: number): string {
  return context.timedOut
    ? `within ${server.timeoutSeconds} s (its "timeout")`
    : `within ${probeMs / 1000} s`;
}

function printable(text: string): string {
  // deno-lint-ignore no-control-regex -- replacing control characters is the point
  return text.replace(/[\u0000-\u001f\u007f]+/g, " ");
}
