/**
 * The typed error for a model request whose connection could not be made
 * ({@linkcode networkError}): refused, a name that does not resolve, a proxy that refuses
 * the tunnel, an untrusted TLS certificate; and, through a proxy, the proxy's own failure
 * to be reached. Also where local model servers are told apart ({@linkcode isLoopback}),
 * since "start it" is the remedy for one of those.
 *
 * @module
 */

import { NetworkError, type PatchbayError } from "../errors.ts";
import { perSurface, ROWS } from "../errors/failure_table.ts";
import { MODEL_STEPS } from "../errors/model_steps.ts";
import { abridge } from "../text/text.ts";
import { netReason, UNTRUSTED_CERTIFICATE_REMEDY } from "../errors/failure.ts";
import { hostOf, proxyName, type ProxySettings } from "../proxy.ts";
import type { AttemptFailure, FailureContext } from "./attempt_failure.ts";

/**
 * The error for a connection that could not be made; `host` is where the request went and
 * `tries` says what retrying was done.
 */
export function networkError(
  failure: Extract<AttemptFailure, { kind: "network" }>,
  context: FailureContext,
  host: string,
  tries: string,
): PatchbayError {
  const { label } = context;
  if (context.proxy && failure.problem !== "tunnel" && failure.problem !== "tls") {
    return proxyUnreachable(failure, context.proxy, label, host, tries);
  }
  const via = context.proxy
    ? ` through the proxy ${context.proxy.url} (${context.proxy.variable})`
    : "";
  const target = { address: host, host: new URL(context.baseUrl).hostname };
  const local = isLoopback(context.baseUrl);
  const remedy = local
    ? `start ${label} so that it listens at ${context.baseUrl}, or fix LLM.base_url`
    : perSurface`${ROWS.network.remedy}${
      context.proxy ? ` (now ${context.proxy.variable}=${context.proxy.url}; check it)` : ""
    }`;
  switch (failure.problem) {
    case "refused":
      return new NetworkError(
        "Connection refused",
        `${netReason("refused", target)}: ${label} is not running there${via} (${tries})`,
        remedy,
        failure.message,
      );
    case "dns":
      return new NetworkError(
        "Network unreachable",
        `${netReason("dns", target)}${via}`,
        remedy,
        failure.message,
      );
    case "tunnel":
      return new NetworkError(
        "Connection refused",
        `the proxy${via ? via.replace(" through the proxy", "") : ""} refused to open a ` +
          `connection to ${host}`,
        MODEL_STEPS.tunnelRefused(host, context.proxy?.variable ?? "HTTPS_PROXY"),
        failure.message,
      );
    case "tls":
      return new NetworkError(
        "Network unreachable",
        `the TLS certificate of ${host} is not trusted${via}; a corporate proxy that ` +
          `re-signs traffic does this (${abridge(failure.message, 160)})`,
        UNTRUSTED_CERTIFICATE_REMEDY,
        failure.message,
      );
    default:
      return new NetworkError(
        "Network unreachable",
        `${label} at ${host} could not be reached${via}: ${abridge(failure.message, 200)}`,
        remedy,
        failure.message,
      );
  }
}

/**
 * With a proxy, the only connection patchbay makes itself is the one to the proxy (the
 * proxy connects onwards and reports its own failures as HTTP answers), so a connection
 * that cannot be made is the proxy's, whatever the model server is doing.
 */
function proxyUnreachable(
  failure: Extract<AttemptFailure, { kind: "network" }>,
  proxy: ProxySettings,
  label: string,
  host: string,
  tries: string,
): PatchbayError {
  const name = proxyName(proxy);
  const carries = `; requests to ${label} at ${host} go through it`;
  const remedy = proxyRemedy(proxy, host);
  switch (failure.problem) {
    case "refused":
      return new NetworkError(
        "Connection refused",
        `nothing accepted the connection to the proxy ${name} (${tries})${carries}`,
        remedy,
        failure.message,
      );
    case "dns":
      return new NetworkError(
        "Network unreachable",
        `the proxy's host name ${hostnameOf(proxy.url)} (from ${proxy.variable}) could not be ` +
          `resolved${carries}`,
        remedy,
        failure.message,
      );
    default:
      return new NetworkError(
        "Network unreachable",
        `the proxy ${name} could not be reached (${tries}): ${abridge(failure.message, 200)}` +
          carries,
        remedy,
        failure.message,
      );
  }
}

/** How to make the proxy reachable, or to go around it for `host`. */
export function proxyRemedy(proxy: ProxySettings, host: string): string {
  return `start the proxy at ${proxy.url}, or correct ${proxy.variable} (in .env or the ` +
    `environment); if ${hostnameOf(`http://${host}`)} should be reached directly, add it to ` +
    `NO_PROXY (or unset ${proxy.variable}); then restart patchbay`;
}

function hostnameOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

/** A note naming the proxy requests go through, or nothing without one. */
export function proxyHint(context: FailureContext): string {
  return context.proxy
    ? ` (requests go through the proxy ${context.proxy.url} from ${context.proxy.variable})`
    : "";
}

/** Whether the URL points at this machine (a local model server). */
export function isLoopback(url: string): boolean {
  try {
    const host = hostOf(new URL(url));
    return host === "localhost" || host === "::1" || /^127\./.test(host);
  } catch {
    return false;
  }
}
