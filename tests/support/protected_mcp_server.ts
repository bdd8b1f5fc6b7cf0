/**
 * A real MCP server that requires a bearer token, built from `@modelcontextprotocol/server`
 * (McpServer, createMcpHandler, requireBearerAuth, requireScopes and the protected-resource
 * metadata builder) and served with Deno.serve on 127.0.0.1, random port, path `/mcp`.
 *
 * Tokens come from a test authorization server (OAuth mode) or a fixed list (bearer header
 * mode). Its tools: `echo`, `whoami` (the scopes of the presented token), `admin` (needs
 * an extra scope: the step-up case) and `token_echo` (returns the raw token, so tests can
 * prove it never reaches the log).
 *
 * @module
 */

import {
  type AuthInfo,
  buildOAuthProtectedResourceMetadata,
  createMcpHandler,
  McpServer,
  OAuthError,
  OAuthErrorCode,
  requireBearerAuth,
  requireScopes,
} from "./mcp_server_sdk.ts";
import { z } from "zod";
import { type DpopClaims, verifyDpopProof } from "./dpop_verify.ts";
import type { AuthorizationServer } from "./oauth_server.ts";

/** Options of {@linkcode startProtectedMcpServer}. */
export interface ProtectedServerOptions {
  /** The authorization server whose tokens are accepted (OAuth mode). */
  authorizationServer?: AuthorizationServer;
  /** Tokens accepted as they are (bearer header mode). */
  staticTokens?: string[];
  /**
   * Where the protected-resource metadata is found: only through the `resource_metadata`
   * hint in `WWW-Authenticate`, at the path-based well-known URL, or at the root one.
   * @default "hint"
   */
  metadataAt?: "hint" | "path" | "root";
  /** Scopes every request needs; they appear in the 401 challenge. */
  requiredScopes?: string[];
  /** `scopes_supported` of the protected-resource metadata. */
  scopesSupported?: string[];
  /** Scope the `admin` tool needs on top of the token's (step-up). */
  adminScope?: string;
  /** Publish this `resource` instead of the server's URL (mismatch tests). */
  resourceClaim?: string;
  /** Refuse tokens not issued for this server's URL (RFC 8707 audience). @default true */
  checkAudience?: boolean;
  /** Act as a server without OAuth: a bare 401 and no metadata. */
  noOAuth?: boolean;
  /** The port to listen on (a restart at the same address). @default a random free port */
  port?: number;
  /**
   * Take DPoP-bound tokens only (`Authorization: DPoP` with a valid proof, RFC 9449 §7),
   * and with `nonce` ask for a server nonce: `"once"` challenges a proof without the
   * current nonce; `"always"` challenges every proof with a new nonce (a nonce loop).
   */
  dpop?: { nonce?: "once" | "always" };
}

/** One request the server received. */
export interface SeenRequest {
  method: string;
  path: string;
  authorization: string | null;
  status: number;
}

/** A running protected MCP server. */
export interface ProtectedServer {
  url: string;
  origin: string;
  requests: SeenRequest[];
  /** With `dpop`: each proof received, its claims or why it was refused, and the answer. */
  dpopProofs: Array<{ claims?: DpopClaims; error?: string; status: number }>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const PATH = "/mcp";

/** Starts the server on 127.0.0.1, on a random port unless `options.port` names one. */
export function startProtectedMcpServer(options: ProtectedServerOptions): ProtectedServer {
  const requests: SeenRequest[] = [];
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: "protected-test-server", version: "1.0.0" });
    server.registerTool("echo", {
      description: "Echoes its text",
      inputSchema: { text: z.string() },
    }, ({ text }) => ({ content: [{ type: "text", text }] }));
    server.registerTool("whoami", {
      description: "The scopes of the token presented",
      inputSchema: {},
    }, (_args, ctx) => ({
      content: [{ type: "text", text: (ctx.http?.authInfo?.scopes ?? []).join(" ") }],
    }));
    server.registerTool("token_echo", {
      description: "Returns the raw token presented",
      inputSchema: {},
    }, (_args, ctx) => ({ content: [{ type: "text", text: ctx.http?.authInfo?.token ?? "" }] }));
    server.registerTool("admin", {
      description: "Needs the admin scope",
      inputSchema: {},
      scopeChallenge: options.adminScope ? requireScopes(options.adminScope) : undefined,
    }, () => ({ content: [{ type: "text" as const, text: "admin done" }] }));
    return server;
  });

  const state = { origin: "" };
  const metadataPaths = {
    hint: "/metadata/protected-resource",
    path: `/.well-known/oauth-protected-resource${PATH}`,
    root: "/.well-known/oauth-protected-resource",
  };
  const at = options.metadataAt ?? "hint";

  const verifier = {
    verifyAccessToken(token: string): Promise<AuthInfo> {
      if (options.authorizationServer) return options.authorizationServer.verifyAccessToken(token);
      if (options.staticTokens?.includes(token)) {
        return Promise.resolve({
          token,
          clientId: "static",
          scopes: options.requiredScopes ?? [],
          expiresAt: Math.floor(Date.now() / 1000) + 3600,
        });
      }
      return Promise.reject(new OAuthError(OAuthErrorCode.InvalidToken, "unknown token"));
    },
  };

  const server = Deno.serve(
    { hostname: "127.0.0.1", port: options.port ?? 0, onListen: () => {} },
    async (request) => {
      const response = await route(request);
      requests.push({
        method: request.method,
        path: new URL(request.url).pathname,
        authorization: request.headers.get("authorization"),
        status: response.status,
      });
      return response;
    },
  );
  state.origin = `http://127.0.0.1:${server.addr.port}`;
  const url = `${state.origin}${PATH}`;
  const gate = requireBearerAuth({
    verifier,
    requiredScopes: options.requiredScopes,
    resourceMetadataUrl: !options.noOAuth && at === "hint"
      ? state.origin + metadataPaths.hint
      : undefined,
    expectedResource: options.authorizationServer && (options.checkAudience ?? true)
      ? new URL(url)
      : undefined,
  });

  const dpopProofs: ProtectedServer["dpopProofs"] = [];
  let nonce = "";

  /** A DPoP-bound request as the bearer request the gate checks, or the refusal. */
  async function dpopGate(request: Request): Promise<Request | Response> {
    const authorization = request.headers.get("authorization") ?? "";
    const challenge = (error: string, status = 401, fresh = false) => {
      const headers = new Headers({ "www-authenticate": `DPoP error="${error}"` });
      if (fresh) {
        nonce = `n-${crypto.randomUUID()}`;
        headers.set("dpop-nonce", nonce);
      }
      dpopProofs.push({ error, status });
      return new Response(error, { status, headers });
    };
    if (!authorization.startsWith("DPoP ")) {
      // No token yet (or a Bearer one): the gate answers with its challenge.
      return request;
    }
    const token = authorization.slice(5);
    let claims: DpopClaims;
    try {
      claims = await verifyDpopProof(request.headers.get("dpop"), {
        htm: request.method,
        htu: request.url,
        accessToken: token,
      });
    } catch (error) {
      return challenge(`invalid_dpop_proof: ${(error as Error).message}`);
    }
    const mode = options.dpop?.nonce;
    if (mode === "always" || (mode === "once" && claims.nonce !== nonce)) {
      const refused = challenge("use_dpop_nonce", 401, true);
      dpopProofs[dpopProofs.length - 1].claims = claims;
      return refused;
    }
    dpopProofs.push({ claims, status: 200 });
    const headers = new Headers(request.headers);
    headers.set("authorization", `Bearer ${token}`);
    return new Request(request.url, {
      method: request.method,
      headers,
      body: request.body,
      duplex: "half",
    } as RequestInit);
  }

  async function route(original: Request): Promise<Response> {
    let request = original;
    const path = new URL(request.url).pathname;
    if (options.dpop && path === PATH) {
      const gated = await dpopGate(request);
      if (gated instanceof Response) return gated;
      request = gated;
    }
    if (path === metadataPaths[at] && request.method === "GET" && !options.noOAuth) {
      if (!options.authorizationServer) return new Response("not found", { status: 404 });
      const authorizationServer = options.authorizationServer;
      const document = buildOAuthProtectedResourceMetadata({
        oauthMetadata: {
          issuer: authorizationServer.issuer,
          authorization_endpoint: `${authorizationServer.issuer}/authorize`,
          token_endpoint: `${authorizationServer.issuer}/token`,
          response_types_supported: ["code"],
        },
        resourceServerUrl: new URL(url),
        scopesSupported: options.scopesSupported,
        resourceName: "protected test server",
      });
      if (options.resourceClaim) document.resource = options.resourceClaim;
      return Response.json(document);
    }
    if (path !== PATH) return new Response("not found", { status: 404 });
    if (options.noOAuth && !request.headers.get("x-api-key")) {
      return new Response("API key required", { status: 401 });
    }
    const auth = options.noOAuth ? undefined : await gate(request);
    if (auth instanceof Response) return auth;
    // A copy without Deno.serve's signal: the SDK reads request.signal, which makes Deno
    // print a notice about its legacy abort behaviour into every test's output.
    const copy = new Request(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      duplex: "half",
    } as RequestInit);
    return await handler.fetch(copy, { authInfo: auth });
  }

  const close = async () => {
    await handler.close();
    await server.shutdown();
  };
  return {
    url,
    origin: state.origin,
    requests,
    dpopProofs,
    close,
    [Symbol.asyncDispose]: close,
  };
}
