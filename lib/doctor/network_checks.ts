/**
 * The way to the model provider: the proxy variables that apply to it (from the process
 * environment and .env, as the client reads them) and whether its host name resolves.
 *
 * @module
 */

import type { Config } from "../config/types.ts";
import type { Environment } from "../env.ts";
import { NetworkError } from "../errors.ts";
import { ROWS } from "../errors/failure_table.ts";
import { MODEL_STEPS } from "../errors/model_steps.ts";
import { denoPermissionFlag } from "../deno_permission/denial.ts";
import { resolveBaseUrl } from "../llm/base_url.ts";
import { bypassesProxy, hostOf, proxyFor, type ProxySettings } from "../proxy.ts";
import { type CheckResult, failure, pass, skip, timeoutSignal, warn } from "./check.ts";
import { DOCTOR_STEPS } from "../errors/doctor_steps.ts";

/** How long a DNS lookup may take. */
const DNS_TIMEOUT_MS = 5000;

/** Programs that download what they run on first use, and so need a proxy to reach npm/PyPI. */
const DOWNLOADERS = new Set(["npx", "uvx", "bunx", "pipx", "docker"]);

/**
 * Where model requests go: the provider's address (none when the configuration names
 * none) and the proxy that applies to it, or why the proxy variable cannot be used.
 */
function modelRoute(
  config: Config,
  env: Environment,
): { url?: URL; proxy?: ProxySettings; proxyError?: Error } {
  let url: URL;
  try {
    url = new URL(resolveBaseUrl(config.llm));
  } catch {
    return {};
  }
  try {
    return { url, proxy: proxyFor(url.href, env) };
  } catch (error) {
    return { url, proxyError: error as Error };
  }
}

/** The reason the network checks skip a configuration without a provider address. */
const NO_PROVIDER = "the configuration names no provider address";

/** The proxy variables that apply to model requests, and what they do. */
export function checkProxy(config: Config, env: Environment): CheckResult {
  const name = "proxy";
  const { url, proxy, proxyError } = modelRoute(config, env);
  if (!url) return skip(name, NO_PROVIDER);
  if (proxyError) {
    return failure(
      name,
      new NetworkError(
        "Network unreachable",
        proxyError.message,
        MODEL_STEPS.proxySetting,
      ),
    );
  }
  const noProxy = env.get("no_proxy") ?? env.get("NO_PROXY");
  const otherScheme = url.protocol === "https:"
    ? ["http_proxy", "HTTP_PROXY"]
    : ["https_proxy", "HTTPS_PROXY"];
  const strayVariable = otherScheme.find((v) => env.get(v)?.trim());
  const downloaders = config.servers.filter((s) =>
    !s.disabled && s.transport === "stdio" && DOWNLOADERS.has(s.command) &&
    !Object.keys(s.env).some((k) => /^(https?|all)_proxy$/i.test(k))
  ).map((s) => s.name);

  if (proxy) {
    const through = `model requests to ${url.host} go through the proxy ${proxy.url} ` +
      `(${proxy.variable}${proxy.basicAuth ? ", with credentials" : ""})`;
    if (downloaders.length > 0) {
      return warn(
        name,
        `${through}; stdio servers get a minimal environment without it, so ` +
          `${downloaders.map((s) => `'${s}'`).join(", ")} cannot download through the proxy`,
        DOCTOR_STEPS.proxyForServers(proxy.url),
      );
    }
    return pass(name, through);
  }
  const direct = noProxy && bypassesProxy(url, noProxy)
    ? `NO_PROXY covers ${url.hostname}: model requests go directly to ${url.host}`
    : `no proxy variable applies: model requests go directly to ${url.host}`;
  if (strayVariable) {
    return warn(
      name,
      `${direct}, although ${strayVariable} is set (it applies to ${
        url.protocol === "https:" ? "http" : "https"
      } addresses only)`,
      DOCTOR_STEPS.strayProxy(url.protocol === "https:" ? "HTTPS_PROXY" : "HTTP_PROXY"),
    );
  }
  return pass(name, direct);
}

/** Options of {@linkcode checkDns}. */
export interface DnsCheckOptions {
  offline?: boolean;
  signal?: AbortSignal;
}

/**
 * Resolves the host model requests connect to: the proxy's when one applies, else the
 * provider's. Loopback names and IP addresses need no lookup.
 */
export async function checkDns(
  config: Config,
  env: Environment,
  options: DnsCheckOptions = {},
): Promise<CheckResult> {
  const name = "dns";
  const { url, proxy, proxyError } = modelRoute(config, env);
  if (!url) return skip(name, NO_PROVIDER);
  if (proxyError) return skip(name, "not checked: the proxy variable is not a URL (see proxy)");
  const host = hostOf(proxy ? new URL(proxy.url) : url);
  const what = proxy ? `the proxy host ${host}` : host;
  if (isAddress(host)) return pass(name, `${what} is an IP address: nothing to resolve`);
  if (host === "localhost" || host.endsWith(".localhost")) {
    return pass(name, `${what} is this machine: nothing to resolve`);
  }
  const remedy = DOCTOR_STEPS.checkHost(proxy?.variable);
  const malformed = malformedHostName(host);
  if (malformed) {
    return failure(
      name,
      new NetworkError(
        "Network unreachable",
        `the host name ${host} cannot resolve: ${malformed}`,
        remedy,
      ),
    );
  }
  if (options.offline) return skip(name, `${what} not resolved (--offline)`);
  const signal = timeoutSignal(DNS_TIMEOUT_MS, options.signal);
  const lookups = await Promise.allSettled([
    Deno.resolveDns(host, "A", { signal }),
    Deno.resolveDns(host, "AAAA", { signal }),
  ]);
  const addresses = lookups.flatMap((l) => l.status === "fulfilled" ? l.value : []);
  if (addresses.length > 0) {
    return pass(name, `${what} resolves to ${addresses.slice(0, 3).join(", ")}`);
  }
  const errors = lookups.map((l) => l.status === "rejected" ? l.reason : undefined);
  const flag = errors.map(denoPermissionFlag).find(Boolean);
  if (flag) {
    return skip(
      name,
      `${what} not resolved: asking the DNS server directly needs ${flag}, which this ` +
        "process lacks (the provider check above tried the connection itself)",
    );
  }
  const notFound = errors.every((e) => e instanceof Deno.errors.NotFound);
  if (notFound) {
    return failure(
      name,
      new NetworkError(
        "Network unreachable",
        `the host name ${host} does not resolve (no DNS record)`,
        proxy ? remedy : DOCTOR_STEPS.unresolved(remedy),
      ),
    );
  }
  return warn(
    name,
    `${what} could not be resolved: ${(errors[0] as Error)?.message ?? "no answer"}`,
    // The doctor's findings are read on both surfaces; this row words them alike.
    ROWS.network.remedy.script,
  );
}

/**
 * Why no DNS server could ever answer for `host` (RFC 1035: labels of at most 63
 * characters, names of at most 253), or `undefined`. The resolver refuses such a name
 * with a bare protocol error; the user needs to hear what is wrong with it.
 */
function malformedHostName(host: string): string | undefined {
  const name = host.replace(/\.$/, "");
  const label = name.split(".").find((l) => l.length > 63);
  if (label) return `it has a label of ${label.length} characters (at most 63 are allowed)`;
  if (name.length > 253) return `it is ${name.length} characters long (at most 253 are allowed)`;
  return undefined;
}

function isAddress(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(":");
}
