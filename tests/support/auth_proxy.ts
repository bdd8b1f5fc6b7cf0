/**
 * OAuth in front of a server that has none: server-everything in its SSE mode (the SDK v2
 * server package has no SSE transport), behind a loopback proxy that demands a bearer token
 * from the test authorization server (the SDK's `requireBearerAuth`), publishes
 * protected-resource metadata at the path-based well-known URL, and forwards everything
 * else, event streams included.
 *
 * @module
 */

import { requireBearerAuth } from "./mcp_server_sdk.ts";
import type { AuthorizationServer } from "./oauth_server.ts";
import { startEverythingHttp } from "./servers.ts";

/** A running proxy and the server behind it. */
export interface AuthProxy {
  /** The SSE endpoint, through the proxy. */
  url: string;
  /** Status of every request the proxy answered, as `METHOD path status`. */
  requests: string[];
  [Symbol.asyncDispose](): Promise<void>;
}

/** Starts server-everything (SSE) on a random port and the proxy in front of it. */
export async function startSseAuthProxy(as: AuthorizationServer): Promise<AuthProxy> {
  const everything = await startEverythingHttp("sse");
  const target = everything.origin;

  const requests: string[] = [];
  const state = { origin: "" };
  const proxy = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const response = await route(req);
    requests.push(`${req.method} ${new URL(req.url).pathname} ${response.status}`);
    return response;
  });
  state.origin = `http://127.0.0.1:${proxy.addr.port}`;
  const url = `${state.origin}/sse`;
  const metadataPath = "/.well-known/oauth-protected-resource/sse";
  const gate = requireBearerAuth({
    verifier: as,
    expectedResource: new URL(url),
    resourceMetadataUrl: state.origin + metadataPath,
  });

  async function route(request: Request): Promise<Response> {
    const incoming = new URL(request.url);
    if (incoming.pathname === metadataPath) {
      return Response.json({ resource: url, authorization_servers: [as.issuer] });
    }
    const auth = await gate(request);
    if (auth instanceof Response) return auth;
    const headers = new Headers(request.headers);
    headers.delete("authorization");
    headers.delete("host");
    const upstream = await fetch(target + incoming.pathname + incoming.search, {
      method: request.method,
      headers,
      body: request.body,
      redirect: "manual",
    });
    return new Response(upstream.body, { status: upstream.status, headers: upstream.headers });
  }

  return {
    url,
    requests,
    async [Symbol.asyncDispose]() {
      await proxy.shutdown();
      await everything[Symbol.asyncDispose]();
    },
  };
}
