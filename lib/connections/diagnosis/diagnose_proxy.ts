/**
 * Why a server behind a proxy did not connect: the proxy unreachable, refusing the
 * tunnel, demanding credentials, or answering for a server it could not reach. Every
 * remedy ends with the way around the proxy (NO_PROXY).
 *
 * @module
 */

import type { HttpServerConfig } from "../../config/types.ts";
import { ServerConnectError } from "../../errors.ts";
import { perSurface, type RemedyText, ROWS } from "../../errors/failure_table.ts";
import { portOf, proxyName, type ProxySettings } from "../../proxy.ts";
import { type ConnectFailure, DIAGNOSIS_PROBE_MS } from "./diagnosis_context.ts";
import { type HttpAnswer, isJsonRpcAnswer, type NetFailure } from "./network_probe.ts";

/** HTTP statuses a proxy gives itself; the proxy diagnosis below explains them. */
export const PROXY_STATUSES = [407, 502, 503, 504];

/** A server entry reached through a proxy, with the names every proxy message uses. */
export interface ProxiedServer {
  server: HttpServerConfig;
  proxy: ProxySettings;
  /** The server's URL. */
  url: URL;
  /** "the proxy <name>". */
  named: string;
}

/** `server` as reached through `proxy`. */
export function proxiedServer(server: HttpServerConfig, proxy: ProxySettings): ProxiedServer {
  return { server, proxy, url: new URL(server.url), named: `the proxy ${proxyName(proxy)}` };
}

/** The remedy for every proxy problem, ending with the way around the proxy. */
function proxyRemedy(first: RemedyText, url: URL): RemedyText {
  return perSurface`${first}; to reach ${url.hostname} without the proxy, add it to NO_PROXY`;
}

/** No TCP connection to the proxy itself. */
export function proxyUnreachable(
  { server, proxy, url, named }: ProxiedServer,
  failure: NetFailure,
  context: ConnectFailure,
): ServerConnectError {
  const via = `through which patchbay reaches ${url.origin}`;
  const reason = failure.kind === "refused"
    ? `Connection refused: nothing is listening at ${named}, ${via}`
    : failure.kind === "dns"
    ? `the host name of ${named} does not resolve (DNS lookup failed)`
    : failure.kind === "timeout"
    ? `Connection timeout: no TCP connection to ${named} within ` +
      `${(context.probeTimeoutMs ?? DIAGNOSIS_PROBE_MS) / 1000} s`
    : `could not connect to ${named}: ${failure.message}`;
  return new ServerConnectError(server.name, {
    reason,
    remedy: proxyRemedy(
      `start the proxy, or correct ${proxy.variable} (in .env or the environment)`,
      url,
    ),
    cause: context.error,
  });
}

/** A request through the proxy that got no HTTP answer. */
export function proxiedFailure(
  { server, proxy, url, named }: ProxiedServer,
  failure: NetFailure,
  context: ConnectFailure,
): ServerConnectError {
  const address = `${url.hostname}:${portOf(url)}`;
  const info = (reason: string, remedy: RemedyText) =>
    new ServerConnectError(server.name, { reason, remedy, cause: context.error });
  if (/unsuccessful tunnel/i.test(failure.message)) {
    return info(
      `${named} refused to open a connection to ${address}`,
      proxyRemedy(
        `check that the proxy allows connections to ${address} and that its credentials ` +
          `(user:password@ in ${proxy.variable}) are right`,
        url,
      ),
    );
  }
  if (failure.kind === "timeout") {
    return info(
      `Connection timeout: the request to ${server.url} through ${named} got no answer ` +
        `within ${(context.probeTimeoutMs ?? DIAGNOSIS_PROBE_MS) / 1000} s`,
      proxyRemedy(ROWS.timeout.remedy, url),
    );
  }
  return info(
    `the request to ${server.url} through ${named} failed (${netDetail(failure.message)}): ` +
      "the proxy could not reach the server, or dropped the connection",
    proxyRemedy(
      `check that the server runs at ${address} and that the proxy can reach it`,
      url,
    ),
  );
}

/** Answers the proxy gives itself: a demand for credentials, or a server it could not reach. */
export function proxyAnswer(
  { server, proxy, url, named }: ProxiedServer,
  answer: HttpAnswer,
  context: ConnectFailure,
): ServerConnectError | undefined {
  const status = `HTTP ${answer.status}${answer.statusText ? ` ${answer.statusText}` : ""}`;
  if (answer.status === 407) {
    return new ServerConnectError(server.name, {
      reason: `${named} requires authentication (${status})`,
      remedy: proxyRemedy(
        `put the proxy's credentials in ${proxy.variable}: http://user:password@host:port`,
        url,
      ),
      cause: context.error,
    });
  }
  if ([502, 503, 504].includes(answer.status) && !isJsonRpcAnswer(answer)) {
    return new ServerConnectError(server.name, {
      reason: `${named} answered ${status}: it could not reach ${url.hostname}:${portOf(url)}`,
      remedy: proxyRemedy(
        perSurface`${ROWS.not_running.remedy}; check the address in "url" and that the proxy can reach it`,
        url,
      ),
      cause: context.error,
    });
  }
  return undefined;
}

/** The runtime's own words at the end of a fetch failure ("connection closed before …"). */
function netDetail(message: string): string {
  const last = message.split(" <- ").at(-1) ?? message;
  return /client error \([^)]*\): (.+)$/.exec(last)?.[1] ?? last.replace(/^\w*Error: /, "");
}
