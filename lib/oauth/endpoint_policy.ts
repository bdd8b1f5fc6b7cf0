/**
 * Where a server's OAuth metadata may send patchbay: the one rule every OAuth request and
 * every page opened in the browser is checked against (SSRF through metadata).
 *
 * A remote MCP server controls its metadata, and through it the addresses patchbay POSTs
 * to (registration, tokens, revocation), fetches (protected-resource and authorization-
 * server metadata) and opens (the authorization page). Aimed at this machine or its
 * network, those requests would reach services that trust local callers. So:
 *
 * 1. **Scheme.** Only `https:` and `http:` are web addresses; anything else (`file:`,
 *    `javascript:`, `data:`) is refused at once. Plain `http:` is accepted only for an
 *    endpoint on a loopback address, or on the MCP server's own host when its configured
 *    URL is itself `http:`; and for the token and revocation endpoints, which carry
 *    credentials, only as the SDK accepts it (a loopback host name or literal).
 * 2. **Address.** An endpoint on a non-public address is accepted only when the MCP server
 *    itself is on such an address: a loopback endpoint needs a loopback server; a private
 *    one (RFC 1918, unique local, shared 100.64/10) a private or loopback server; a
 *    link-local one a link-local server. Cloud metadata addresses (169.254.169.254 and
 *    friends) and reserved or multicast ones are never accepted. The MCP server's own host
 *    (as configured) is always accepted, and so are the hosts the entry lists in
 *    `auth.allow_internal_hosts` (the configuration is trusted).
 * 3. **Resolution.** Host names are resolved (as the connection will resolve them:
 *    host_location.ts; an answer is reused for {@linkcode LOCATION_TTL_MS}) and every
 *    address counts: a public name resolving to 127.0.0.1 is a loopback endpoint.
 *    IPv4-mapped, NAT64, 6to4 and IPv4-compatible IPv6 forms count as the IPv4 address they
 *    carry. A name that does not resolve here (a proxy resolves it, or nobody can) is
 *    judged by its name: public unless it is `localhost` or a cloud metadata name.
 *
 * What remains: the check runs before each request, not inside the connection (Deno's
 * fetch cannot be told which address to connect to), so a DNS answer that changes between
 * the check and the connection (rebinding with a zero TTL) is not caught.
 *
 * @module
 */

import { assertSecureTokenEndpoint } from "@modelcontextprotocol/client";
import { OAuthEndpointRefusedError } from "../errors.ts";
import { OAUTH_STEPS } from "../errors/oauth_steps.ts";
import {
  ADDRESS_KIND_TEXT,
  type AddressKind,
  type HostLocation,
  locateHost,
  type Resolver,
  systemResolver,
} from "./host_location.ts";

/**
 * How long a host's location is reused by one policy. A login checks the same few hosts
 * a dozen times, and a slow resolver would be waited on each time; a DNS answer that
 * changes between check and connection is not caught either way (module documentation).
 */
export const LOCATION_TTL_MS = 30_000;

/** Which address kinds an endpoint may have, given the MCP server's own. */
function permitted(endpoint: AddressKind, server: AddressKind): boolean {
  if (endpoint === "public") return true;
  if (endpoint === "metadata" || endpoint === "reserved") return false;
  // A server on this machine may have its authorization server on the local network
  // (a development setup); a server on the network may not reach into this machine.
  return endpoint === server || (endpoint === "private" && server === "loopback");
}

/** What an endpoint is, for messages: `token_endpoint`, `resource_metadata`, … */
export interface EndpointRole {
  /** The field or origin of the address: `token_endpoint`, `a redirect`, … */
  name: string;
  /** Where it was named: `in the authorization server's metadata`, … */
  source?: string;
  /** Credentials go there (token, revocation): plain http only as the SDK allows it. */
  credentials?: boolean;
}

/** Options of {@linkcode EndpointPolicy}. */
export interface EndpointPolicyOptions {
  /** The entry's name, for messages. */
  server: string;
  /** The MCP server's URL as configured. */
  serverUrl: URL | string;
  /** `auth.allow_internal_hosts` of the entry: hosts exempt from the address rule. */
  allowInternalHosts?: readonly string[];
  /** @default systemResolver */
  resolve?: Resolver;
}

/** The decision on one endpoint. */
export type EndpointVerdict =
  | { allowed: true; url: URL }
  | {
    allowed: false;
    url?: URL;
    /** Which part of the rule refused it. */
    rule: "not_a_url" | "scheme" | "plain_http" | "address";
    reason: string;
    remedy: string;
    addresses: string[];
  };

/**
 * The rule (module documentation) for one MCP server: {@linkcode check} before every
 * request to, and every page opened at, an address its metadata supplied.
 */
export class EndpointPolicy {
  readonly server: string;
  readonly serverUrl: URL;
  readonly #allowed: ReadonlySet<string>;
  readonly #resolve: Resolver;
  readonly #locations = new Map<string, { at: number; location: Promise<HostLocation> }>();

  constructor(options: EndpointPolicyOptions) {
    this.server = options.server;
    this.serverUrl = new URL(options.serverUrl);
    this.#allowed = new Set((options.allowInternalHosts ?? []).map(normalizeHost));
    this.#resolve = options.resolve ?? systemResolver;
  }

  /** `url` as a URL if the rule accepts it; else an `OAuthEndpointRefusedError`. */
  async check(url: string | URL, role: EndpointRole, signal?: AbortSignal): Promise<URL> {
    const verdict = await this.verdict(url, role, signal);
    if (verdict.allowed) return verdict.url;
    throw new OAuthEndpointRefusedError(this.server, {
      endpoint: role.name,
      url: String(url),
      addresses: verdict.addresses,
      reason: verdict.reason,
      remedy: verdict.remedy,
    });
  }

  /** The decision on `url`, with the reason and remedy of a refusal. */
  async verdict(
    url: string | URL,
    role: EndpointRole,
    signal?: AbortSignal,
  ): Promise<EndpointVerdict> {
    const what = `the ${role.name}${role.source ? ` ${role.source}` : ""}`;
    const hostile = "the server's OAuth metadata is misconfigured or hostile: do not log in, " +
      "and report it to the server's operator";
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return {
        allowed: false,
        rule: "not_a_url",
        reason: `${what}, ${JSON.stringify(String(url).slice(0, 200))}, is not a URL`,
        remedy: hostile,
        addresses: [],
      };
    }
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
      return {
        allowed: false,
        url: parsed,
        rule: "scheme",
        reason: `${what}, ${shorten(parsed.href)}, uses the scheme ${parsed.protocol} ` +
          "where only https (or http on this machine) is an OAuth endpoint; patchbay " +
          "neither opens nor requests it",
        remedy: hostile,
        addresses: [],
      };
    }
    const host = normalizeHost(parsed.hostname);
    const serverHost = normalizeHost(this.serverUrl.hostname);
    const ownHost = host === serverHost;
    const exempt = ownHost || this.#allowed.has(host);
    // The server's own https host needs no lookup; everything else is located.
    if (exempt && parsed.protocol === "https:") return { allowed: true, url: parsed };
    const endpoint = await this.#locate(host, signal);
    const where = describeLocation(endpoint);

    if (parsed.protocol === "http:") {
      const loopback = endpoint.kinds.every((kind) => kind === "loopback");
      const ownPlainHost = ownHost && this.serverUrl.protocol === "http:";
      let acceptable = loopback || ownPlainHost;
      if (acceptable && role.credentials) {
        // The SDK refuses these after the login: refuse them before it.
        try {
          assertSecureTokenEndpoint(parsed);
        } catch {
          acceptable = false;
        }
      }
      if (!acceptable) {
        return {
          allowed: false,
          url: parsed,
          rule: "plain_http",
          reason: `${what}, ${shorten(parsed.href)}, is plain http on ${where}; OAuth ` +
            "endpoints must use https (plain http only on this machine" +
            (role.credentials ? ", named localhost, 127.0.0.1 or [::1]" : "") +
            "), so patchbay would not send credentials there",
          remedy: OAUTH_STEPS.httpsEndpoint,
          addresses: endpoint.addresses,
        };
      }
    }

    if (exempt) return { allowed: true, url: parsed };
    const server = await this.#locate(serverHost, signal);
    const refused = endpoint.kinds.find((kind) =>
      !server.kinds.every((serverKind) => permitted(kind, serverKind))
    );
    if (refused === undefined) return { allowed: true, url: parsed };
    const never = refused === "metadata" || refused === "reserved";
    return {
      allowed: false,
      url: parsed,
      rule: "address",
      reason: `${what}, ${shorten(parsed.href)}, is on ${where}` +
        (never
          ? ", where no OAuth endpoint is"
          : `, but the MCP server ${this.serverUrl.href} is on ${describeLocation(server)}`) +
        "; patchbay sends no request that a server's metadata aims at this machine or its " +
        "network",
      remedy: never ? hostile : `${hostile}. If you run that authorization server yourself, ` +
        `on this machine or your network, add "${host}" to auth.allow_internal_hosts in the ` +
        `entry for '${this.server}'`,
      addresses: endpoint.addresses,
    };
  }

  /** Where `host` is, reused for {@linkcode LOCATION_TTL_MS}. */
  #locate(host: string, signal?: AbortSignal): Promise<HostLocation> {
    const now = Date.now();
    const cached = this.#locations.get(host);
    if (cached && now - cached.at < LOCATION_TTL_MS) return cached.location;
    for (const [name, entry] of this.#locations) {
      if (now - entry.at >= LOCATION_TTL_MS) this.#locations.delete(name);
    }
    const location = locateHost(host, this.#resolve, signal);
    const entry = { at: now, location };
    this.#locations.set(host, entry);
    // A lookup cut short by the caller's signal is not kept for the next caller.
    location.catch(() => {
      if (this.#locations.get(host) === entry) this.#locations.delete(host);
    });
    return location;
  }
}

/** `host` as a URL gives it: lower case, IPv6 without brackets, no trailing dot. */
function normalizeHost(host: string): string {
  let name = host.trim().toLowerCase().replace(/\.$/, "");
  try {
    name = new URL(`http://${name.includes(":") && !name.startsWith("[") ? `[${name}]` : name}`)
      .hostname;
  } catch { /* not a host name: compared as written */ }
  return name.replace(/^\[|\]$/g, "");
}

/** `a loopback address (127.0.0.1)`, `… (x.example resolves to 127.0.0.1)` */
function describeLocation(location: HostLocation): string {
  const kinds = [...new Set(location.kinds)];
  const text = kinds.map((kind) => ADDRESS_KIND_TEXT[kind]).join(" and ");
  switch (location.by) {
    case "literal":
    case "name":
      return `${text} (${location.host})`;
    case "resolved":
      return `${text} (${location.host} resolves to ${location.addresses.slice(0, 4).join(", ")})`;
    case "unresolved":
      return `${text} (${location.host} does not resolve here; judged by its name)`;
  }
}

function shorten(href: string): string {
  return href.length > 200 ? `${href.slice(0, 200)}…` : href;
}
