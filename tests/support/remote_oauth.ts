/**
 * A "remote" OAuth-protected MCP server for tests that must not be on loopback in
 * patchbay's view: an https server on 127.0.0.1 answering for made-up `*.example.test`
 * names (RFC 6761: they never resolve), with a certificate from a test-only CA
 * (tests/fixtures/tls), reached through the loopback test proxy, which routes those names
 * to it. To patchbay the server is `https://mcp.example.test/mcp`, its authorization
 * server `https://auth.example.test`: public names (they do not resolve here, or the
 * test's resolver says where they are).
 *
 * The authorization server's metadata is whatever the test makes it: a hostile one names
 * loopback endpoints. Every request is recorded as `METHOD host/path`, so a test can show
 * which were sent. `/authorize` consents at once and redirects to the callback with a
 * code, so a login can reach the token request. {@linkcode startLoopbackListener} is the
 * plain-HTTP service on this machine such metadata aims at, counting what reaches it.
 *
 * @module
 */

import type { FetchLike } from "@modelcontextprotocol/client";
import { join } from "node:path";
import { startTestProxy, type TestProxy } from "./proxy.ts";

const TLS = new URL("../fixtures/tls/", import.meta.url).pathname;

/** The test CA's certificate (PEM). */
export const TEST_CA = Deno.readTextFileSync(join(TLS, "ca.pem"));

/** The MCP server's URL as patchbay is configured with it. */
export const REMOTE_MCP_URL = "https://mcp.example.test/mcp";
/** The authorization server (issuer) its protected-resource metadata names. */
export const REMOTE_ISSUER = "https://auth.example.test";

/** Names the proxy routes to the test server (any other name is refused by the proxy). */
const NAMES = [
  "mcp.example.test",
  "auth.example.test",
  "rebind.example.test",
  "intranet.example.test",
];

/** Options of {@linkcode startRemoteOAuth}. */
export interface RemoteOAuthOptions {
  /** Fields replacing or added to the authorization server's metadata. */
  metadata?: Record<string, unknown>;
  /** The `resource_metadata` of the 401 challenge. @default the server's own, path-based */
  resourceMetadata?: string;
  /** Answers the MCP endpoint instead of the 401 challenge (redirect tests). */
  mcpAnswer?: () => Response;
  /**
   * The MCP server publishes no OAuth metadata at all (a 2025-03-26 server): its
   * well-known addresses answer 404 and its challenge names none. @default false
   */
  noMetadata?: boolean;
}

/** A running remote stand-in. */
export interface RemoteOAuth {
  /** `METHOD host/path` of every request it received, in order. */
  requests: string[];
  proxy: TestProxy;
  /**
   * A fetch for in-process runtimes, as `HTTPS_PROXY` makes it: https through the proxy,
   * trusting the test CA; plain http directly.
   */
  fetch: FetchLike;
  /**
   * Variables for a patchbay process (and the browser it starts): the proxy, and the
   * test CA added to Deno's trust (`DENO_CERT`, with the machine's own file kept).
   */
  env: Record<string, string>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Starts the https stand-in and the proxy in front of it. */
export async function startRemoteOAuth(options: RemoteOAuthOptions = {}): Promise<RemoteOAuth> {
  const requests: string[] = [];
  const cert = await Deno.readTextFile(join(TLS, "server.pem"));
  const key = await Deno.readTextFile(join(TLS, "server.key"));
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert, key, onListen: () => {} },
    (request) => {
      const url = new URL(request.url);
      const host = (request.headers.get("host") ?? url.host).replace(/:443$/, "");
      requests.push(`${request.method} ${host}${url.pathname}`);
      return answer(host, request, url, options);
    },
  );
  const routes = Object.fromEntries(NAMES.map((name) => [`${name}:443`, server.addr.port]));
  const proxy = startTestProxy({ routes });
  const client = Deno.createHttpClient({ proxy: { url: proxy.url }, caCerts: [TEST_CA] });
  const dir = await Deno.makeTempDir({ prefix: "patchbay-remote-" });
  const bundle = join(dir, "ca-bundle.pem");
  const machineCa = Deno.env.get("DENO_CERT");
  await Deno.writeTextFile(
    bundle,
    (machineCa ? await Deno.readTextFile(machineCa) + "\n" : "") + TEST_CA,
  );
  const close = async () => {
    client.close();
    await proxy.close();
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  };
  return {
    requests,
    proxy,
    fetch: (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      return url.protocol === "https:" ? fetch(input, { ...init, client }) : fetch(input, init);
    },
    env: { HTTPS_PROXY: proxy.url, DENO_CERT: bundle },
    close,
    [Symbol.asyncDispose]: close,
  };
}

async function answer(
  host: string,
  request: Request,
  url: URL,
  options: RemoteOAuthOptions,
): Promise<Response> {
  if (host === "mcp.example.test") {
    if (options.noMetadata && url.pathname.startsWith("/.well-known/")) {
      return new Response("not found", { status: 404 });
    }
    if (options.noMetadata && url.pathname === "/mcp") {
      await request.body?.cancel();
      return new Response("login required", {
        status: 401,
        headers: { "www-authenticate": "Bearer" },
      });
    }
    if (url.pathname === "/mcp") {
      await request.body?.cancel();
      if (options.mcpAnswer) return options.mcpAnswer();
      const metadata = options.resourceMetadata ??
        "https://mcp.example.test/.well-known/oauth-protected-resource/mcp";
      return new Response("login required", {
        status: 401,
        headers: { "www-authenticate": `Bearer resource_metadata="${metadata}", scope="mcp"` },
      });
    }
    if (url.pathname.startsWith("/.well-known/oauth-protected-resource")) {
      return Response.json({ resource: REMOTE_MCP_URL, authorization_servers: [REMOTE_ISSUER] });
    }
  }
  if (host === "auth.example.test") {
    if (url.pathname === "/.well-known/oauth-authorization-server") {
      return Response.json({
        issuer: REMOTE_ISSUER,
        authorization_endpoint: `${REMOTE_ISSUER}/authorize`,
        token_endpoint: `${REMOTE_ISSUER}/token`,
        registration_endpoint: `${REMOTE_ISSUER}/register`,
        response_types_supported: ["code"],
        code_challenge_methods_supported: ["S256"],
        authorization_response_iss_parameter_supported: true,
        ...options.metadata,
      });
    }
    if (url.pathname === "/authorize") {
      // Consents at once, as a person clicking "Allow" would.
      const target = new URL(url.searchParams.get("redirect_uri") ?? "http://localhost:3000/");
      target.searchParams.set("code", "code-from-the-remote-server");
      target.searchParams.set("state", url.searchParams.get("state") ?? "");
      target.searchParams.set("iss", REMOTE_ISSUER);
      return new Response(null, { status: 302, headers: { location: target.href } });
    }
  }
  // Any host: registration and tokens as an authorization server answers them.
  if (url.pathname.endsWith("/register")) return registered(request);
  if (url.pathname.endsWith("/token")) return tokens(request);
  await request.body?.cancel();
  return Response.json({ note: "an address a hostile server chose" });
}

/** What an authorization server answers a registration. */
async function registered(request: Request): Promise<Response> {
  const body = await request.json().catch(() => ({}));
  return Response.json({ ...body, client_id: `client-${crypto.randomUUID()}` }, { status: 201 });
}

/** What an authorization server answers a token request. */
async function tokens(request: Request): Promise<Response> {
  await request.body?.cancel();
  return Response.json({
    access_token: `at-${crypto.randomUUID()}`,
    token_type: "Bearer",
    expires_in: 3600,
  });
}

/** A plain-HTTP service on 127.0.0.1, as hostile metadata aims at; it counts what arrives. */
export interface LoopbackListener {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** `METHOD path` of every request that reached it. */
  requests: string[];
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Starts the listener. It answers registration and token requests as an authorization
 * server would, so that a client it reached would carry on as if nothing were wrong.
 */
export function startLoopbackListener(): LoopbackListener {
  const requests: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const path = new URL(request.url).pathname;
    requests.push(`${request.method} ${path}`);
    if (path.endsWith("/register")) return registered(request);
    if (path.endsWith("/token")) return tokens(request);
    return Response.json({ resource: REMOTE_MCP_URL, authorization_servers: [REMOTE_ISSUER] });
  });
  const close = () => server.shutdown();
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    requests,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * The resolver patchbay's endpoint policy gets in process: the made-up names resolve
 * where the test says (the MCP and authorization servers to public addresses); others
 * do not resolve at all.
 */
export function testResolver(
  answers: Record<string, string[]> = {},
): (host: string) => Promise<string[]> {
  const table: Record<string, string[]> = {
    "mcp.example.test": ["93.184.215.14"],
    "auth.example.test": ["93.184.215.15"],
    ...answers,
  };
  return (host) =>
    table[host]
      ? Promise.resolve(table[host])
      : Promise.reject(new Deno.errors.NotFound(`no address for ${host}`));
}
