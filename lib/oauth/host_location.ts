/**
 * Where a host is, as far as can be told from here: the kind of network of an IP address
 * (public, private, loopback, link-local, cloud metadata, reserved), of a host name that
 * says it by itself (`localhost`, metadata service names), or of the addresses a name
 * resolves to through the system resolver. The endpoint policy (endpoint_policy.ts) judges
 * OAuth addresses by it.
 *
 * IPv4-mapped, NAT64, 6to4 and IPv4-compatible IPv6 forms count as the IPv4 address they
 * carry.
 *
 * @module
 */

import { lookup } from "node:dns/promises";

/** What kind of network an address belongs to. */
export type AddressKind =
  /** Anywhere on the internet. */
  | "public"
  /** RFC 1918, unique local (fc00::/7), shared address space (100.64/10), benchmarking. */
  | "private"
  /** This machine: 127/8, ::1, and the unspecified 0.0.0.0/8 and :: (which reach it). */
  | "loopback"
  /** 169.254/16 and fe80::/10, outside the metadata addresses. */
  | "link_local"
  /** Cloud instance metadata services: 169.254.169.254, fd00:ec2::254, 100.100.100.200 … */
  | "metadata"
  /** Multicast, broadcast, 240/4 and other addresses no endpoint is on. */
  | "reserved";

/** The kinds, in words, for messages. */
export const ADDRESS_KIND_TEXT: Readonly<Record<AddressKind, string>> = {
  public: "a public address",
  private: "a private-network address",
  loopback: "a loopback address",
  link_local: "a link-local address",
  metadata: "a cloud metadata address",
  reserved: "a reserved or multicast address",
};

/** Resolves a host name to its addresses (IPv4 and IPv6, as text). */
export type Resolver = (host: string, signal?: AbortSignal) => Promise<string[]>;

/**
 * How long a lookup may take before the name is judged by itself (behind a proxy the
 * local resolver may never answer). Long enough for the resolver's own retries (5 s per
 * try by default): a slow answer cut short would be judged public, which would let a
 * server that delays its DNS replies pass a name that then resolves to 127.0.0.1.
 */
export const RESOLVE_TIMEOUT_MS = 10_000;

/**
 * The system resolver (`getaddrinfo`, hosts file included): the same answer the
 * connection itself will get, which `Deno.resolveDns` (DNS servers only) would not give.
 */
export const systemResolver: Resolver = async (host, signal) => {
  const timeout = AbortSignal.timeout(RESOLVE_TIMEOUT_MS);
  const stop = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const answer = lookup(host, { all: true, verbatim: true });
  const stopped = new Promise<never>((_, reject) => {
    const fail = () => reject(stop.reason);
    if (stop.aborted) fail();
    stop.addEventListener("abort", fail, { once: true });
  });
  answer.catch(() => {}); // settled after a timeout: nobody listens any more
  return (await Promise.race([answer, stopped])).map((entry) => entry.address);
};

/** Host names of cloud metadata services, recognised without a lookup. */
const METADATA_HOST_NAMES = new Set([
  "metadata.google.internal",
  "metadata.goog",
  "instance-data.ec2.internal",
]);

/** Addresses of cloud metadata services inside otherwise private or link-local ranges. */
const METADATA_ADDRESSES = new Set([
  "169.254.169.254", // AWS, GCP, Azure, Oracle, DigitalOcean, OpenStack
  "169.254.170.2", // AWS ECS task metadata
  "100.100.100.200", // Alibaba Cloud
  "fd00:ec2:0:0:0:0:0:254", // AWS over IPv6
]);

/** The kind of an IP address given as text (brackets allowed); `undefined` if not one. */
export function classifyAddress(text: string): AddressKind | undefined {
  const address = text.replace(/^\[|\]$/g, "");
  const v4 = parseIPv4(address);
  if (v4) return classifyIPv4(v4);
  const v6 = parseIPv6(address);
  return v6 ? classifyIPv6(v6) : undefined;
}

/**
 * The kind of a URL's host without a lookup: IP literals, `localhost` and its subdomains
 * (RFC 6761), metadata service names. `undefined` for a name that needs resolving.
 */
export function classifyHostName(hostname: string): AddressKind | undefined {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  const literal = classifyAddress(host);
  if (literal) return literal;
  if (host === "localhost" || host.endsWith(".localhost")) return "loopback";
  if (METADATA_HOST_NAMES.has(host)) return "metadata";
  return undefined;
}

/** Where a host is, as far as can be told from here. */
export interface HostLocation {
  /** The host as in the URL (IPv6 without brackets, lower case). */
  host: string;
  /** Addresses it resolved to (the literal itself for an address; none when unresolved). */
  addresses: string[];
  /** One kind per address, or the one kind told from the name alone. */
  kinds: AddressKind[];
  /** How the kinds were found. */
  by: "literal" | "name" | "resolved" | "unresolved";
}

/** Locates `hostname`: from the literal or name when that says enough, else by resolving. */
export async function locateHost(
  hostname: string,
  resolve: Resolver = systemResolver,
  signal?: AbortSignal,
): Promise<HostLocation> {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "").replace(/\.$/, "");
  const literal = classifyAddress(host);
  if (literal) return { host, addresses: [host], kinds: [literal], by: "literal" };
  const byName = classifyHostName(host);
  if (byName) return { host, addresses: [], kinds: [byName], by: "name" };
  let addresses: string[] = [];
  try {
    addresses = await resolve(host, signal);
  } catch (error) {
    if (signal?.aborted) throw error;
    // Not resolvable here: a proxy will resolve it (its network, not this one), or the
    // request fails. Judged by the name, which is not a local one.
  }
  const kinds = addresses.map((a) => classifyAddress(a) ?? "public");
  return kinds.length > 0
    ? { host, addresses, kinds, by: "resolved" }
    : { host, addresses: [], kinds: ["public"], by: "unresolved" };
}

/** A dotted-quad IPv4 address (the form URL parsing leaves), as four bytes. */
function parseIPv4(text: string): number[] | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const bytes = parts.map((part) => /^\d{1,3}$/.test(part) ? Number(part) : NaN);
  return bytes.every((b) => b >= 0 && b <= 255) ? bytes : undefined;
}

/** An IPv6 address (compressed, with or without a trailing IPv4), as eight 16-bit groups. */
function parseIPv6(text: string): number[] | undefined {
  if (!text.includes(":") || /[^0-9a-f:.]/i.test(text)) return undefined;
  let body = text;
  let tail: number[] = [];
  const lastColon = body.lastIndexOf(":");
  const last = body.slice(lastColon + 1);
  if (last.includes(".")) {
    const v4 = parseIPv4(last);
    if (!v4) return undefined;
    tail = [(v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]];
    body = body.slice(0, lastColon + 1);
    if (!body.endsWith("::")) body = body.slice(0, -1);
  }
  const halves = body.split("::");
  if (halves.length > 2) return undefined;
  const split = (part: string) => part === "" ? [] : part.split(":");
  const head = split(halves[0]);
  const rest = halves.length === 2 ? split(halves[1]) : [];
  const known = head.length + rest.length + tail.length;
  if (halves.length === 1 ? known !== 8 : known > 7) return undefined;
  const filler = Array<string>(halves.length === 2 ? 8 - known : 0).fill("0");
  const groups = [...head, ...filler, ...rest]
    .map((g) => /^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN);
  const all = [...groups, ...tail];
  return all.length === 8 && all.every((g) => g >= 0 && g <= 0xffff) ? all : undefined;
}

function classifyIPv4([a, b, c, d]: number[]): AddressKind {
  if (METADATA_ADDRESSES.has(`${a}.${b}.${c}.${d}`)) return "metadata";
  if (a === 0 || a === 127) return "loopback"; // 0.0.0.0/8 reaches this machine on Linux
  if (a === 10) return "private";
  if (a === 100 && b >= 64 && b <= 127) return "private"; // shared address space (CGNAT)
  if (a === 169 && b === 254) return "link_local";
  if (a === 172 && b >= 16 && b <= 31) return "private";
  if (a === 192 && b === 168) return "private";
  if (a === 192 && b === 0 && c === 0) return "reserved"; // IETF protocol assignments
  if (a === 198 && (b === 18 || b === 19)) return "private"; // benchmarking
  if (a >= 224) return "reserved"; // multicast, 240/4, broadcast
  return "public";
}

function classifyIPv6(g: number[]): AddressKind {
  const text = g.map((x) => x.toString(16)).join(":");
  if (METADATA_ADDRESSES.has(text)) return "metadata";
  const embedded = (hi: number, lo: number) =>
    classifyIPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 8)) return "loopback"; // :: (unspecified)
  if (zeros(0, 7) && g[7] === 1) return "loopback"; // ::1
  if (zeros(0, 5) && g[5] === 0xffff) return embedded(g[6], g[7]); // IPv4-mapped
  if (zeros(0, 6)) return embedded(g[6], g[7]); // IPv4-compatible (deprecated)
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return embedded(g[6], g[7]); // NAT64
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return embedded(g[6], g[7]); // local NAT64
  if (g[0] === 0x2002) return embedded(g[1], g[2]); // 6to4
  if ((g[0] & 0xffc0) === 0xfe80) return "link_local";
  if ((g[0] & 0xfe00) === 0xfc00) return "private"; // unique local
  if ((g[0] & 0xffc0) === 0xfec0) return "private"; // site-local (deprecated)
  if ((g[0] & 0xff00) === 0xff00) return "reserved"; // multicast
  if (g[0] === 0x100 && zeros(1, 4)) return "reserved"; // discard prefix
  return "public";
}
