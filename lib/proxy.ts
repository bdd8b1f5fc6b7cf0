/**
 * Proxies for every HTTP request patchbay makes: to the model, to MCP servers (streamable
 * HTTP and SSE) and to OAuth servers (discovery, registration, tokens, revocation).
 *
 * Deno's fetch honours HTTPS_PROXY / HTTP_PROXY / NO_PROXY only from the process
 * environment, but patchbay's environment also includes the .env file, which never enters
 * `Deno.env`. So the proxy is resolved here from the merged environment (with NO_PROXY)
 * and handed to fetch as an explicit HTTP client: {@linkcode proxyFor} resolves,
 * {@linkcode ProxyRouter} routes each request of a session accordingly.
 *
 * @module
 */

import type { FetchLike } from "@modelcontextprotocol/client";
import type { NeedsSink } from "./deno_permission/needs.ts";
import { type Log, silentLog } from "./log/log.ts";

/** Where variables are read: an `Environment` (process over .env), or `Deno.env`. */
export interface EnvLookup {
  get(name: string): string | undefined;
}

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
export function proxyFor(target: string | URL, env: EnvLookup): ProxySettings | undefined {
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
  const host = hostOf(url).toLowerCase();
  const port = String(portOf(url));
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

/** How a session reaches HTTP servers: a fetch, and the proxy it uses for a URL. */
export interface Network {
  /** Sends each request through the proxy {@linkcode Network.route} names, or directly. */
  readonly fetch: FetchLike;
  /**
   * The proxy requests to `url` go through, or `undefined` for a direct connection.
   * Throws a `TypeError` naming the variable when its value is not a URL.
   */
  route(url: string | URL): ProxySettings | undefined;
}

/** Deno's own fetch: only proxies of the process environment apply (as Deno applies them). */
export const PROCESS_NETWORK: Network = {
  fetch: (input, init) => fetch(input, init),
  route: (url) => proxyFor(url, Deno.env),
};

/** Options of {@linkcode ProxyRouter}. */
export interface ProxyRouterOptions {
  /** The session's environment (process over .env), read on every request. */
  env: EnvLookup;
  /**
   * The variables Deno's fetch reads by itself: a proxy there applies to a plain fetch
   * even when the session's NO_PROXY (from .env) exempts the host. @default Deno.env
   */
  processEnv?: EnvLookup;
  /** Says once per origin which way its requests go. @default silentLog */
  log?: Log;
}

/**
 * The {@linkcode Network} of a session: each request goes through the proxy the session's
 * environment names for its URL (one HTTP client per proxy, kept for the session), or
 * directly when none applies. Close it when the session ends: its clients hold
 * connections.
 */
export class ProxyRouter implements Network {
  readonly fetch: FetchLike;
  readonly #env: EnvLookup;
  readonly #processEnv: EnvLookup;
  readonly #log: Log;
  readonly #clients = new Map<string, Deno.HttpClient>();
  readonly #told = new Set<string>();
  #closed = false;

  constructor(options: ProxyRouterOptions) {
    this.#env = options.env;
    this.#processEnv = options.processEnv ?? Deno.env;
    this.#log = options.log ?? silentLog;
    this.fetch = (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      let client: Deno.HttpClient | undefined;
      try {
        client = this.#clientFor(url);
      } catch (error) {
        return Promise.reject(error);
      }
      return client ? fetch(input, { ...init, client }) : fetch(input, init);
    };
  }

  route(url: string | URL): ProxySettings | undefined {
    return proxyFor(url, this.#env);
  }

  /** Releases the HTTP clients; requests after this fail. Idempotent. */
  close(): void {
    this.#closed = true;
    for (const client of this.#clients.values()) client.close();
    this.#clients.clear();
  }

  [Symbol.dispose](): void {
    this.close();
  }

  #clientFor(url: URL): Deno.HttpClient | undefined {
    const proxy = this.route(url);
    if (proxy) {
      this.#tell(url, "info", `requests to ${url.origin} go through the proxy ${proxy.url}`, {
        variable: proxy.variable,
      });
      return this.#client(`${proxy.url} ${proxy.basicAuth?.username ?? ""}`, {
        proxy: { url: proxy.url, basicAuth: proxy.basicAuth },
      });
    }
    // Direct, for the session; but Deno's fetch applies a proxy of the process
    // environment by itself, unless the process's own NO_PROXY exempts the host.
    const processProxy = proxyFor(url, this.#processEnv);
    if (!processProxy) return undefined;
    if (url.protocol === "http:") {
      // A plain-HTTP client bound to the server's own address is a direct connection
      // that no environment proxy can take over.
      return this.#client(`direct ${url.host}`, {
        proxy: {
          transport: "tcp",
          hostname: hostOf(url),
          port: portOf(url),
        },
      });
    }
    this.#tell(
      url,
      "warn",
      `NO_PROXY exempts ${url.host}, but Deno sends HTTPS requests through the proxy of ` +
        `the process environment (${processProxy.variable}) regardless; set NO_PROXY in the ` +
        "environment, not only in .env, to reach it directly",
    );
    return undefined;
  }

  #client(key: string, options: Deno.CreateHttpClientOptions): Deno.HttpClient {
    if (this.#closed) throw new Error("patchbay's network access for this session is closed");
    let client = this.#clients.get(key);
    if (!client) {
      client = Deno.createHttpClient(options);
      this.#clients.set(key, client);
    }
    return client;
  }

  #tell(url: URL, level: "info" | "warn", message: string, fields?: Record<string, unknown>) {
    if (this.#told.has(url.origin)) return;
    this.#told.add(url.origin);
    this.#log[level](message, fields);
  }
}

/** A proxy as messages name it: its URL and the variable that set it. */
export function proxyName(proxy: ProxySettings): string {
  return `${proxy.url} (${proxy.variable})`;
}

/** The host name of `url` as a socket takes it (an IPv6 literal without brackets). */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, "");
}

/** The port of `url`, the scheme's default when it names none. */
export function portOf(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === "https:" ? 443 : 80;
}

/** Proxy variables consulted per scheme, for the model and HTTP servers (the plan's list). */
const PROXY_NEED_VARIABLES: Readonly<Record<string, readonly string[]>> = {
  "https:": [...PROXY_VARIABLES["https:"], "no_proxy", "NO_PROXY"],
  "http:": [...PROXY_VARIABLES["http:"], "no_proxy", "NO_PROXY"],
};

/** `host:port` of a URL as Deno's net permission names it (default ports filled in). */
export function hostPort(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${portOf(parsed)}`;
}

/**
 * What requests to `target` need of the permission plan (lib/permissions/plan.ts): the
 * proxy variables read for its scheme, and the proxy they name, if any.
 */
export function proxyNeeds(
  plan: NeedsSink,
  inputs: { env: EnvLookup },
  target: string,
  what: string,
): void {
  for (const name of PROXY_NEED_VARIABLES[new URL(target).protocol] ?? []) {
    plan.add("env", name, `proxy settings for ${what}`);
  }
  try {
    const proxy = proxyFor(target, inputs.env);
    if (proxy) plan.add("net", hostPort(proxy.url), `the proxy for ${what} (${proxy.variable})`);
  } catch {
    // An unusable proxy variable is the doctor's finding, not a permission.
  }
}
