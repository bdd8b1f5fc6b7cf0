/**
 * What a failed OAuth connection is reported as, once the login itself succeeded: the
 * server's own answer to the authorized request, not the 401 a probe without the token
 * gets (which used to read "OAuth authorization did not complete … free port 3000").
 *
 * The servers are real: the official SDK's server behind a test authorization server,
 * reached through a front that answers every authorized MCP request with an HTTP 400 of
 * its own, as a server does that wants a header the client did not send.
 *
 * Port 3000: the login binds the contract's callback port (see oauth/oauth_session_test.ts);
 * another program holding it fails the file at once, naming that program.
 *
 * @module
 */

import assert from "node:assert/strict";
import { ConnectionManager } from "../../lib/connections/manager.ts";
import { OAuthFailedError, ServerConnectError } from "../../lib/errors.ts";
import { httpEntry, oauthHarness, requireFreeCallbackPort } from "../support/oauth_harness.ts";
import { startAuthorizationServer } from "../support/oauth_server.ts";
import { startProtectedMcpServer } from "../support/protected_mcp_server.ts";

await requireFreeCallbackPort();

const REFUSAL = {
  jsonrpc: "2.0",
  id: null,
  error: { code: -32600, message: "Bad Request: MCP-Protocol-Version header required" },
};

/**
 * A front for `origin` that answers authorized POSTs to /mcp with HTTP 400 and forwards
 * everything else (the 401 challenge, metadata).
 */
function refusingFront(origin: () => string) {
  const authorized: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (r) => {
    const url = new URL(r.url);
    if (r.method === "POST" && url.pathname === "/mcp" && r.headers.get("authorization")) {
      authorized.push(r.headers.get("mcp-method") ?? "?");
      await r.body?.cancel();
      return Response.json(REFUSAL, { status: 400 });
    }
    const forwarded = await fetch(`${origin()}${url.pathname}${url.search}`, {
      method: r.method,
      headers: r.headers,
      body: r.body,
    });
    return new Response(forwarded.body, {
      status: forwarded.status,
      statusText: forwarded.statusText,
      headers: forwarded.headers,
    });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/mcp`,
    authorized,
    close: () => server.shutdown(),
  };
}

Deno.test("after a successful login, an HTTP 400 from the server is reported as the server's answer", async () => {
  await using as = startAuthorizationServer({ scopesSupported: ["mcp"] });
  let origin = "";
  const front = refusingFront(() => origin);
  // The metadata names the front as the resource: it is the URL patchbay is configured with.
  await using rs = startProtectedMcpServer({
    authorizationServer: as,
    requiredScopes: ["mcp"],
    resourceClaim: front.url,
    checkAudience: false,
  });
  origin = rs.origin;
  try {
    await using h = await oauthHarness();
    const entry = httpEntry("strict", front.url);
    await using manager = new ConnectionManager({ servers: [entry], oauth: h.runtime([entry]) });
    const [status] = await manager.start();

    assert.equal(status.state, "failed");
    assert.equal(h.browser.opened.length, 1, "the login ran");
    assert.equal(as.log.token.length, 1, "and got a token");
    assert.ok(front.authorized.length > 0, "the token reached the server");
    const error = status.error!;
    assert.ok(error instanceof ServerConnectError, String(error));
    assert.ok(!(error instanceof OAuthFailedError), "not an OAuth failure: the login worked");
    assert.equal(error.message, "Failed to connect to server 'strict': Session terminated");
    assert.equal(
      error.reason,
      'the server answered HTTP 400 Bad Request ("Bad Request: MCP-Protocol-Version header ' +
        'required") to a request sent with the OAuth token: it accepted the login but ' +
        "refused the request itself",
    );
    assert.doesNotMatch(`${error.reason} ${error.remedy}`, /401|port 3000|did not complete/);
    assert.match(error.remedy, /"protocol": "legacy"/);
  } finally {
    await front.close();
  }
});
