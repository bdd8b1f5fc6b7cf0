/**
 * Bearer tokens in `headers`: sent on every request to a real MCP server that requires
 * them, a refused token explained, and the token never written to the log, even at
 * debug level where every request's headers are logged.
 *
 * @module
 */

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import assert from "node:assert/strict";
import { join } from "node:path";
import type { HttpServerConfig } from "../../lib/config/types.ts";
import { BearerRejectedError, ServerConnectError } from "../../lib/errors.ts";
import type { Log } from "../../lib/log/log.ts";
import { bearerFetch } from "../../lib/oauth/bearer.ts";
import { startUp } from "../../lib/cli/startup.ts";
import { httpEntry } from "../support/oauth_harness.ts";
import { startAuthorizationServer } from "../support/oauth_server.ts";
import { startProtectedMcpServer } from "../support/protected_mcp_server.ts";
import { tempDir } from "../support/temp_dir.ts";

const TOKEN = "acme-live-7Qx9Lm2Vd8Kp4Rt6Wz";

async function connect(entry: HttpServerConfig, log?: Log) {
  const transport = new StreamableHTTPClientTransport(new URL(entry.url), {
    requestInit: { headers: entry.headers },
    fetch: bearerFetch(entry, { log }),
  });
  const client = new Client({ name: "patchbay-test", version: "0.0.0" });
  await client.connect(transport);
  return {
    client,
    async [Symbol.asyncDispose]() {
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

Deno.test("the bearer header goes with every request: POSTs and the GET event stream", async () => {
  await using rs = startProtectedMcpServer({ staticTokens: [TOKEN] });
  const entry = httpEntry("acme", rs.url, null, { Authorization: `Bearer ${TOKEN}` });
  {
    await using connection = await connect(entry);
    const result = await connection.client.callTool({ name: "echo", arguments: { text: "hi" } });
    assert.deepEqual(result.content, [{ type: "text", text: "hi" }]);
  }
  const methods = new Set(rs.requests.map((r) => r.method));
  assert.deepEqual([...methods].sort(), ["GET", "POST"]);
  assert.ok(rs.requests.length >= 4);
  for (const request of rs.requests) assert.equal(request.authorization, `Bearer ${TOKEN}`);
});

Deno.test("a refused bearer token: Session terminated, with the cause and what to fix", async () => {
  await using rs = startProtectedMcpServer({ staticTokens: [TOKEN] });
  const entry = httpEntry("acme", rs.url, null, { Authorization: "Bearer expired-token-0000" });
  const error = await connect(entry).then(() => undefined, (e) => e);
  assert.ok(error instanceof BearerRejectedError, String(error));
  assert.ok(error instanceof ServerConnectError);
  assert.equal(error.message, "Failed to connect to server 'acme': Session terminated");
  assert.match(
    error.reason,
    /refused the token in headers\.Authorization \(HTTP 401 invalid_token/,
  );
  assert.match(error.remedy, /\.env/);

  // A server that also speaks OAuth: the remedy offers letting patchbay log in instead.
  await using as = startAuthorizationServer();
  await using oauthServer = startProtectedMcpServer({ authorizationServer: as });
  const other = httpEntry("oauthy", oauthServer.url, null, { Authorization: "Bearer stale-1234" });
  const suggestion = await connect(other).then(() => undefined, (e) => e);
  assert.ok(suggestion instanceof BearerRejectedError, String(suggestion));
  assert.match(suggestion.remedy, /"auth": \{"method": "oauth"\}/);
});

Deno.test("a bearer token from .env never reaches the log file, even at debug level", async () => {
  await using rs = startProtectedMcpServer({ staticTokens: [TOKEN] });
  await using tmp = await tempDir("patchbay-bearer-");
  const dir = tmp.path;
  const configPath = join(dir, "servers_config.json");
  const envFile = join(dir, ".env");
  const logFile = join(dir, "patchbay.log");
  // A variable name that does not look secret: only the header registration hides it.
  await Deno.writeTextFile(envFile, `ACME_BEARER=${TOKEN}\n`);
  await Deno.writeTextFile(
    configPath,
    JSON.stringify({
      LLM: { provider: "openai", model: "gpt-4o-mini" },
      mcpServers: {
        acme: { url: rs.url, headers: { Authorization: "Bearer ${ACME_BEARER}" } },
      },
    }),
  );
  const runtime = await startUp({ config: configPath, envFile, logFile });
  // What /debug does, minus the mirror to stderr (test output stays clean).
  runtime.logger.setDebug(true);
  runtime.logger.setMirror(false);
  const entry = runtime.config.servers[0] as HttpServerConfig;
  assert.equal(entry.headers.Authorization, `Bearer ${TOKEN}`, "expanded from .env");
  const log = runtime.logger.child("conn:acme");
  {
    await using connection = await connect(entry, log);
    // The server hands the raw token back; the result is logged as a tool result would be.
    const result = await connection.client.callTool({ name: "token_echo", arguments: {} });
    log.debug("tool result", { result });
    log.debug(`server said ${JSON.stringify(result.content)}`);
  }
  runtime.logger.close();
  const text = await Deno.readTextFile(logFile);
  assert.match(text, /DEBUG \[conn:acme\] HTTP POST http:\/\/127\.0\.0\.1:\d+\/mcp/);
  assert.match(text, /"authorization":"Bearer \[REDACTED\]"/);
  assert.match(text, /server said \[\{"type":"text","text":"\[REDACTED\]"\}\]/);
  assert.ok(!text.includes(TOKEN), "the token appears in the log");
});
