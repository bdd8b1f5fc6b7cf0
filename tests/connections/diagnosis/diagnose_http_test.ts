/**
 * The diagnosis of a streamable HTTP entry on its own (`diagnoseHttp`), against real
 * loopback listeners: a closed port, something that is not HTTP, a server fault, a web
 * page, a refused token, credentials demanded without OAuth, an answer past the size
 * bound. Each case pins the cause and the remedy as both surfaces word it.
 *
 * @module
 */

import assert from "node:assert/strict";
import { diagnoseHttp } from "../../../lib/connections/diagnosis/diagnose_http.ts";
import { type PatchbayError, remedyFor } from "../../../lib/errors.ts";
import { ROWS, STEPS } from "../../../lib/errors/failure_table.ts";
import { assumingClosed, freePort, httpEntry, silentListener } from "../../support/servers.ts";

/** What the session's connection attempt threw: the diagnosis looks past it. */
const THROWN = new TypeError("fetch failed");

/** The diagnosis of the entry `name` at `url` (with `extra` settings). */
async function diagnosed(
  url: string,
  extra: Parameters<typeof httpEntry>[2] = {},
): Promise<PatchbayError> {
  const server = httpEntry("api", url, extra);
  const error = await diagnoseHttp(server, { server, error: THROWN, timedOut: false });
  assert.equal(error.message, "Failed to connect to server 'api': Session terminated");
  assert.doesNotMatch(remedyFor(error, "script"), /(?<![\w.:/])\/(?:refresh|debug|memory)\b/);
  return error;
}

/** A plain HTTP server answering every request with `respond`. */
function serve(respond: (request: Request) => Response) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, respond);
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

Deno.test("diagnoseHttp: a closed port is a server not running, worded per surface", async () => {
  const port = freePort();
  await assumingClosed(port, async () => {
    const error = await diagnosed(`http://127.0.0.1:${port}/mcp`);
    assert.equal(
      error.reason,
      `Connection refused: nothing is listening at 127.0.0.1:${port} (the server is not ` +
        "running at the configured address)",
    );
    const then = '; if it is running, check the port it listens on and fix "url"';
    assert.equal(remedyFor(error, "repl"), ROWS.not_running.remedy.repl + then);
    assert.equal(remedyFor(error, "script"), ROWS.not_running.remedy.script + then);
    assert.equal(error.remedy, `${ROWS.not_running.remedy.repl}${then}`);
  });
});

Deno.test("diagnoseHttp: a port that speaks another protocol is the wrong transport", async () => {
  await using listener = silentListener({ greeting: "SSH-2.0-OpenSSH_9.6\r\n" });
  const error = await diagnosed(`http://127.0.0.1:${listener.port}/mcp`);
  assert.equal(
    error.reason,
    `wrong transport_type: 127.0.0.1:${listener.port} accepts connections but does not speak ` +
      'HTTP (it answered "SSH-2.0-OpenSSH_9.6")',
  );
  assert.ok(error.remedy.startsWith(ROWS.wrong_transport.remedy.repl), error.remedy);
  assert.equal(remedyFor(error, "script"), error.remedy);
});

Deno.test("diagnoseHttp: a server fault quotes the server and says to retry", async () => {
  await using server = serve(() =>
    Response.json(
      { jsonrpc: "2.0", error: { code: -32603, message: "database down" }, id: null },
      { status: 500 },
    )
  );
  const error = await diagnosed(`${server.origin}/mcp`);
  assert.equal(
    error.reason,
    'the server failed with HTTP 500 Internal Server Error ("database down")',
  );
  assert.equal(remedyFor(error, "repl"), "check the server's own logs, then retry with /refresh");
  assert.equal(
    remedyFor(error, "script"),
    "check the server's own logs, then run the command again",
  );
  assert.deepEqual(error.remedies, STEPS.serverFault);
});

Deno.test("diagnoseHttp: a web page is not an MCP endpoint", async () => {
  await using server = serve(() =>
    new Response("<html><head><title>Welcome</title></head><body>hi</body></html>", {
      headers: { "content-type": "text/html" },
    })
  );
  const error = await diagnosed(`${server.origin}/mcp`);
  assert.match(
    error.reason,
    /^http:\/\/127\.0\.0\.1:\d+\/mcp answered with an HTML page \("Welcome"\) \(HTTP 200[^)]*\) instead of MCP: this is a web page, not an MCP endpoint$/,
  );
  assert.equal(error.remedy, ROWS.wrong_address.remedy.repl);
});

Deno.test("diagnoseHttp: a 401 names the token sent, or the credentials wanted", async () => {
  await using server = serve(() => new Response("no", { status: 401 }));
  const withToken = await diagnosed(`${server.origin}/mcp`, {
    headers: { Authorization: "Bearer expired" },
  });
  assert.equal(
    withToken.reason,
    'the server rejected the credentials sent in "headers" (HTTP 401 Unauthorized)',
  );
  assert.match(withToken.remedy, /^check the token in the Authorization header/);

  const without = await diagnosed(`${server.origin}/mcp`);
  assert.equal(
    without.reason,
    "the server requires credentials (HTTP 401 Unauthorized) and publishes no OAuth metadata",
  );
  assert.equal(
    without.remedy,
    'send a token with "headers": {"Authorization": "Bearer <ACCESS_TOKEN>"}',
  );
});

Deno.test("diagnoseHttp: an answer past the size bound is named without probing", async () => {
  // Nothing listens there: the transport's own finding is the evidence, no probe is sent.
  const server = httpEntry("api", `http://127.0.0.1:${freePort()}/mcp`);
  const detail = "the server sent a message of 9 MiB, more than the 8 MiB patchbay reads";
  const error = await diagnoseHttp(server, {
    server,
    error: THROWN,
    timedOut: false,
    httpClose: { kind: "oversize", limit: 8, seen: 9, detail },
  });
  assert.equal(error.reason, detail);
  assert.deepEqual(error.remedies, ROWS.answer_too_large.remedy);
});
