/**
 * HTTPS proxy settings for model requests.
 *
 * Deno's fetch honours HTTPS_PROXY only from the process environment, but patchbay's
 * environment also includes the .env file, which never enters `Deno.env`. So the proxy is
 * resolved here from the merged environment (with NO_PROXY) and handed to fetch as an
 * explicit HTTP client.
 *
 * @module
 */

import type { Environment } from "../env.ts";

/** A proxy to send requests through. */
export interface ProxySettings {
  /** Proxy URL without credentials. */
  url: string;
  /** Credentials given as `user:password@` in the variable. */
  basicAuth?: { username: string; password: string };
  /** Which variable supplied it, for messages and the log. */
  variable: string;
}

/** Variables consulted, most specific first (lower-case wins, as in curl). */
const PROXY_VARIABLES = {
  "https:": ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"],
  "http:": ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"],
} as const;

/**
 * The proxy for requests to `target`, or `undefined` to connect directly (no variable set,
 * or the host matches NO_PROXY). Throws a `TypeError` naming the variable when its value is
 * not a URL.
 */
export function proxyFor(target: string, env: Environment): ProxySettings | undefined {
  const url = new URL(target);
  const names = PROXY_VARIABLES[url.protocol as keyof typeof PROXY_VARIABLES];
  if (!names) return undefined;
  const variable = names.find((name) => env.get(name)?.trim());
  if (!variable) return undefined;
  if (bypassesProxy(url, env.get("no_proxy") ?? env.get("NO_PROXY"))) return undefined;
  const raw = env.get(variable)!.trim();
  let proxy: URL;
  try {
    proxy = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`);
  } catch {
    throw new TypeError(`${variable} is not a URL: "${raw}"`);
  }
  const basicAuth = proxy.username
    ? {
      username: decodeURIComponent(proxy.username),
      password: decodeURIComponent(proxy.password),
    }
    : undefined;
  proxy.username = "";
  proxy.password = "";
  return { url: proxy.href.replace(/\/$/, ""), basicAuth, variable };
}

/**
 * NO_PROXY semantics as curl has them: comma- or space-separated host names, each matching
 * the host and its subdomains (a leading dot or `*.` is optional), optionally with
 * `:port`; IP literals match exactly; `*` alone disables the proxy.
 */
export function bypassesProxy(url: URL, noProxy: string | undefined): boolean {
  if (!noProxy) return false;
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  for (const raw of noProxy.split(/[\s,]+/)) {
    let entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry === "*") return true;
    let entryPort: string | undefined;
    const portMatch = /^(.*[^:\]]):(\d+)$/.exec(entry);
    if (portMatch && !entry.startsWith("[") && entry.split(":").length === 2) {
      entry = portMatch[1];
      entryPort = portMatch[2];
    }
    entry = entry.replace(/^\*?\./, "").replace(/^\[|\]$/g, "");
    if (entryPort && entryPort !== port) continue;
    if (host === entry || host.endsWith(`.${entry}`)) return true;
  }
  return false;
}
