/**
 * Each failure diagnosis, from the real situation: a closed port, a wrong path, an HTML
 * page, OAuth configured for a plain server, a missing command, an HTTP server
 * configured as stdio, and more. Every case asserts the contract's message, the cause
 * and the remedy, and that no raw runtime text reached them.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { ConnectionManager } from "../../../lib/connections/manager.ts";
import type { ServerConfig } from "../../../lib/config/types.ts";
import {
  BearerRejectedError,
  OAuthUnsupportedError,
  type PatchbayError,
} from "../../../lib/errors.ts";
import { ROWS } from "../../../lib/errors/failure_table.ts";
import { silentLog } from "../../../lib/log/log.ts";
import { createOAuthRuntime, FileTokenStore, type OAuthRuntime } from "../../../lib/oauth/mod.ts";
import { everythingEntry, NODE } from "../../support/deps.ts";
import { DENO } from "../../support/deps.ts";
import {
  assumingClosed,
  fixtureEntry,
  freePort,
  httpEntry,
  processesWith,
  silentListener,
  startEverythingHttp,
  stdioEntry,
} from "../../support/servers.ts";
import { tempDir } from "../../support/temp_dir.ts";

/** Connects one entry and returns its diagnosed error (asserting the common shape). */
async function diagnosed(entry: ServerConfig, oauth?: OAuthRuntime): Promise<PatchbayError> {
  await using manager = new ConnectionManager({ servers: [entry], oauth });
  const [status] = await manager.start();
  assert.equal(status.state, "failed", `expected a failure, got ${status.state}`);
  const error = status.error!;
  assert.equal(error.message, `Failed to connect to server '${entry.name}': Session terminated`);
  const shown = [error.reason, error.remedy, ...error.details].join("\n");
  assert.doesNotMatch(shown, /fetch failed|<html|<!doctype|<body/i, shown);
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

Deno.test("closed port: the server is not running there", async () => {
  const port = freePort();
  await assumingClosed(port, async () => {
    const error = await diagnosed(httpEntry("api", `http://127.0.0.1:${port}/mcp`));
    assert.equal(
      error.reason,
      `Connection refused: nothing is listening at 127.0.0.1:${port} (the server is not running at the configured address)`,
    );
    assert.ok(error.remedy.startsWith(ROWS.not_running.remedy.repl), error.remedy);
  });
});

Deno.test("DNS failure: the host name does not resolve", async () => {
  // A label longer than 63 characters cannot be looked up: the resolver refuses it
  // locally, so no query leaves the machine.
  const host = `${"a".repeat(70)}.invalid`;
  const error = await diagnosed(httpEntry("api", `http://${host}:8080/mcp`));
  assert.equal(error.reason, `the host name '${host}' does not resolve (DNS lookup failed)`);
  assert.equal(error.remedy, ROWS.wrong_address.remedy.repl);
});

Deno.test("wrong path: 404, and the right URL found by probing", async () => {
  await using server = await startEverythingHttp("streamableHttp");
  const error = await diagnosed(httpEntry("everything", `${server.origin}/wrong`));
  assert.match(
    error.reason,
    /^HTTP 404 Not Found at .*\/wrong: nothing serves MCP at the path '\/wrong'$/,
  );
  assert.equal(error.remedy, `set "url" to ${server.origin}/mcp (found by probing)`);
});

Deno.test("an HTML page: a web page, not an MCP endpoint", async () => {
  await using web = serve(() =>
    new Response(
      "<!DOCTYPE html><html><head><title>Welcome to nginx!</title></head><body>hi</body></html>",
      { headers: { "content-type": "text/html; charset=utf-8" } },
    )
  );
  const error = await diagnosed(httpEntry("site", `${web.origin}/`));
  assert.equal(
    error.reason,
    `${web.origin}/ answered with an HTML page ("Welcome to nginx!") (HTTP 200 OK) instead of MCP: this is a web page, not an MCP endpoint`,
  );
  assert.equal(error.remedy, ROWS.wrong_address.remedy.repl);
});

Deno.test("a JSON answer that is not MCP", async () => {
  await using api = serve(() => Response.json({ status: "ok", version: 3 }));
  const error = await diagnosed(httpEntry("api", `${api.origin}/health`));
  assert.match(
    error.reason,
    /answered HTTP 200 OK with application\/json that is not MCP \(JSON-RPC\)/,
  );
  assert.equal(error.remedy, ROWS.wrong_address.remedy.repl);
});

/**
 * The session's OAuth runtime, as start-up creates it, with its own token store; no
 * login may ever open a browser in these tests.
 */
async function oauthFor(entry: ServerConfig) {
  const folder = await tempDir("patchbay-diagnose-");
  const runtime = createOAuthRuntime([entry], {
    log: silentLog,
    store: new FileTokenStore({ dir: folder.path }),
    opener: (url) => Promise.reject(new Error(`no browser may open here (${url.href})`)),
  })!;
  return {
    runtime,
    async [Symbol.asyncDispose]() {
      await runtime.close();
      await folder[Symbol.asyncDispose]();
    },
  };
}

/**
 * Diagnoses the entry `name` at `url` with OAuth configured; the diagnosis must be that the
 * server does not support OAuth, and is returned.
 */
async function oauthUnsupported(name: string, url: string): Promise<OAuthUnsupportedError> {
  const entry = httpEntry(name, url, { auth: { method: "oauth" } });
  await using oauth = await oauthFor(entry);
  const error = await diagnosed(entry, oauth.runtime);
  assert.ok(error instanceof OAuthUnsupportedError, String(error));
  return error;
}

Deno.test("OAuth configured for a server that publishes no OAuth metadata", async () => {
  // A server that answers without asking for credentials: OAuth is not what it speaks.
  await using server = await startEverythingHttp("streamableHttp");
  const error = await oauthUnsupported("everything", `${server.origin}/mcp`);
  assert.equal(
    error.reason,
    `"auth": {"method": "oauth"} is set, but ${server.origin}/mcp answered initialize without ` +
      `asking for credentials and ${server.origin} publishes no OAuth metadata: no ` +
      `protected-resource metadata (RFC 9728) and no authorization-server metadata at ` +
      `${server.origin}/ (RFC 8414 / OpenID discovery), so it does not support OAuth`,
  );
  assert.equal(error.remedy, ROWS.oauth_unsupported.remedy.repl);

  // One that demands a token but publishes no OAuth metadata: the same answer.
  await using guarded = serve(() =>
    new Response("unauthorized", { status: 401, headers: { "www-authenticate": "Bearer" } })
  );
  const refused = await oauthUnsupported("api", `${guarded.origin}/mcp`);
  assert.match(
    refused.reason,
    /^"auth": \{"method": "oauth"\} is set, but http:\/\/127\.0\.0\.1:\d+ publishes no OAuth metadata/,
  );
  assert.equal(refused.remedy, ROWS.oauth_unsupported.remedy.repl);
});

Deno.test("an OAuth entry the server behind cannot serve is diagnosed like any entry", async () => {
  // The request OAuth sends before a login finds the problem; the diagnosis names it.
  const port = freePort();
  await assumingClosed(port, async () => {
    const offline = httpEntry("api", `http://127.0.0.1:${port}/mcp`, { auth: { method: "oauth" } });
    await using oauth = await oauthFor(offline);
    const refused = await diagnosed(offline, oauth.runtime);
    assert.equal(
      refused.reason,
      `Connection refused: nothing is listening at 127.0.0.1:${port} (the server is not running at the configured address)`,
    );
    assert.ok(refused.remedy.startsWith(ROWS.not_running.remedy.repl), refused.remedy);
  });

  await using server = await startEverythingHttp("streamableHttp");
  const typo = httpEntry("everything", `${server.origin}/wrong`, { auth: { method: "oauth" } });
  await using oauth2 = await oauthFor(typo);
  const wrongPath = await diagnosed(typo, oauth2.runtime);
  assert.match(wrongPath.reason, /^HTTP 404 Not Found at .*\/wrong: nothing serves MCP/);
  assert.equal(wrongPath.remedy, `set "url" to ${server.origin}/mcp (found by probing)`);
});

Deno.test("credentials required: without a token, and with a rejected one", async () => {
  await using guarded = serve(() =>
    new Response("unauthorized", { status: 401, headers: { "www-authenticate": "Bearer" } })
  );
  const bare = await diagnosed(httpEntry("api", `${guarded.origin}/mcp`));
  assert.equal(
    bare.reason,
    "the server requires credentials (HTTP 401 Unauthorized) and publishes no OAuth metadata",
  );
  assert.equal(
    bare.remedy,
    'send a token with "headers": {"Authorization": "Bearer <ACCESS_TOKEN>"}',
  );
  const withToken = await diagnosed(
    httpEntry("api", `${guarded.origin}/mcp`, {
      headers: { Authorization: "Bearer expired-token" },
    }),
  );
  assert.ok(withToken instanceof BearerRejectedError, String(withToken));
  assert.equal(
    withToken.reason,
    "the server refused the token in headers.Authorization (HTTP 401); it is wrong, expired " +
      "or revoked",
  );
  assert.match(withToken.remedy, /^put a current token in headers\.Authorization/);
});

Deno.test("a server error (HTTP 500)", async () => {
  await using broken = serve(() =>
    Response.json({ jsonrpc: "2.0", id: null, error: { code: -32603, message: "database down" } }, {
      status: 500,
    })
  );
  const error = await diagnosed(httpEntry("api", `${broken.origin}/mcp`));
  assert.equal(
    error.reason,
    'the server failed with HTTP 500 Internal Server Error ("database down")',
  );
});

Deno.test("wrong transport_type between the HTTP transports, both ways", async (t) => {
  await t.step("sse configured, streamable HTTP served", async () => {
    await using server = await startEverythingHttp("streamableHttp");
    const error = await diagnosed(
      httpEntry("everything", `${server.origin}/mcp`, { transport: "sse" }),
    );
    assert.match(error.reason, /^wrong transport_type: .*\/mcp speaks streamable HTTP, not sse/);
    assert.equal(
      error.remedy,
      `${ROWS.wrong_transport.remedy.repl}: set "transport_type": "streamable_http"`,
    );
  });
  await t.step("streamable_http configured, legacy SSE served", async () => {
    await using server = await startEverythingHttp("sse");
    const error = await diagnosed(httpEntry("everything", `${server.origin}/sse`));
    assert.match(
      error.reason,
      /^wrong transport_type: .*\/sse speaks the legacy SSE transport, not streamable_http/,
    );
    assert.equal(error.remedy, `${ROWS.wrong_transport.remedy.repl}: set "transport_type": "sse"`);
  });
});

Deno.test("an http entry pointing at a port that does not speak HTTP", async () => {
  // What a stdio-only program bridged to a TCP port looks like: JSON lines, no HTTP.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const serving = (async () => {
    for await (const connection of listener) {
      await connection.write(new TextEncoder().encode('{"jsonrpc":"2.0","method":"hello"}\n'))
        .catch(() => {});
      connection.close();
    }
  })();
  try {
    const error = await diagnosed(httpEntry("bridge", `http://127.0.0.1:${port}/mcp`));
    assert.equal(
      error.reason,
      `wrong transport_type: 127.0.0.1:${port} accepts connections but does not speak HTTP (it answered "{"jsonrpc":"2.0","method":"hello"}")`,
    );
    assert.match(error.remedy, /set "transport_type": "stdio" with its "command"/);
  } finally {
    listener.close();
    await serving.catch(() => {});
  }
});

Deno.test("an address that accepts connections but never answers: Connection timeout", async () => {
  await using silent = silentListener();
  const error = await diagnosed(
    httpEntry("slow", `http://127.0.0.1:${silent.port}/mcp`, { timeoutSeconds: 1 }),
  );
  assert.match(
    error.reason,
    /^Connection timeout: 127\.0\.0\.1:\d+ accepted the connection but sent no HTTP answer/,
  );
  assert.equal(error.remedy, ROWS.timeout.remedy.repl);
});

Deno.test("command not found (ENOENT), and a missing working directory", async () => {
  const missing = await diagnosed(stdioEntry("tool", "patchbay-no-such-command", ["--stdio"]));
  assert.equal(missing.reason, "command 'patchbay-no-such-command' not found on PATH");
  assert.equal(
    missing.remedy,
    `install it, or give the full path to 'patchbay-no-such-command' in "command"`,
  );
  assert.match(missing.details[0], /^PATH: /);

  const nowhere = "/nonexistent/patchbay-test-dir";
  const cwd = await diagnosed(stdioEntry("tool", NODE, ["-e", "1"], { cwd: nowhere }));
  assert.equal(cwd.reason, `the working directory '${nowhere}' does not exist`);
});

Deno.test("a stdio entry whose process serves HTTP: wrong transport_type, the URL found", async () => {
  // PORT=0: the server takes a port no other program holds; the diagnosis finds it through
  // the process's listening sockets (/proc, readable under --allow-all).
  const entry = stdioEntry("everything", NODE, [everythingEntry(), "streamableHttp"], {
    env: { PORT: "0" },
    timeoutSeconds: 2,
  });
  const error = await diagnosed(entry);
  const found = /at http:\/\/127\.0\.0\.1:(\d+)\/mcp, found by probing$/.exec(error.reason);
  assert.ok(found, error.reason);
  const port = Number(found[1]);
  assert.equal(
    error.reason,
    `wrong transport_type: the process does not speak MCP on stdio; it serves MCP over HTTP (streamable_http) at http://127.0.0.1:${port}/mcp, found by probing`,
  );
  assert.ok(error.remedy.startsWith(ROWS.wrong_transport.remedy.repl));
  assert.match(error.remedy, new RegExp(`"url": "http://127.0.0.1:${port}/mcp"`));
  // The HTTP server the entry started is gone with it.
  assert.equal(
    (await fetch(`http://127.0.0.1:${port}/mcp`).catch(() => undefined))?.status,
    undefined,
  );
});

Deno.test("a stdio entry whose process prints a banner instead of JSON-RPC", async () => {
  const tag = `patchbay-test-${crypto.randomUUID()}`;
  const error = await diagnosed(
    fixtureEntry("banner", ["--banner", `--tag=${tag}`], { timeoutSeconds: 1 }),
  );
  assert.equal(
    error.reason,
    "the process printed text that is not MCP JSON-RPC on stdout (\"Welcome to Fixture Server v1.0 (type 'help' for commands)\") and never answered initialize within 1 s",
  );
  assert.ok(error.remedy.startsWith(ROWS.wrong_transport.remedy.repl));
  assert.deepEqual(processesWith(tag), []);
});

Deno.test("a Deno permission denial names the flag to add", async () => {
  // The manager runs in a Deno without --allow-run: starting the server is refused.
  const script = fileURLToPath(new URL("../../fixtures/connect_one.ts", import.meta.url));
  const output = await new Deno.Command(DENO, {
    args: [
      "run",
      "--no-prompt",
      "--config",
      fileURLToPath(new URL("../../../deno.json", import.meta.url)),
      "--allow-read",
      "--allow-env",
      script,
      "node",
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(output.stderr);
  assert.equal(output.code, 0, stderr);
  const error = JSON.parse(new TextDecoder().decode(output.stdout));
  assert.equal(error.message, "Failed to connect to server 'denied': Session terminated");
  assert.equal(
    error.reason,
    "Permission denied: patchbay runs under explicit Deno permissions and --allow-run=node was not granted",
  );
  // The one remedy of a Deno denial, as every other refusal of a direct run words it.
  assert.equal(
    error.remedy,
    "add --allow-run=node to the deno run / deno install command (`patchbay permissions` " +
      "prints the full set for your configuration)",
  );
});

Deno.test("a server that requires OAuth: suggested when absent, reported when it fails", async () => {
  await using protectedServer = serve((request) => {
    const url = new URL(request.url);
    if (url.pathname.startsWith("/.well-known/oauth-protected-resource")) {
      return Response.json({
        resource: `${url.origin}/mcp`,
        authorization_servers: [`${url.origin}/auth`],
      });
    }
    return new Response("login required", {
      status: 401,
      headers: {
        "www-authenticate":
          `Bearer resource_metadata="${url.origin}/.well-known/oauth-protected-resource/mcp"`,
      },
    });
  });
  const url = `${protectedServer.origin}/mcp`;

  const withoutAuth = await diagnosed(httpEntry("guarded", url));
  assert.equal(
    withoutAuth.reason,
    "the server requires OAuth authorization (HTTP 401 Unauthorized; metadata at WWW-Authenticate)",
  );
  assert.equal(withoutAuth.remedy, 'add "auth": {"method": "oauth"} to the server entry');

  // OAuth configured, but this session has no way to log in (no provider): the
  // contract's OAuth failure, not a connection diagnosis.
  await using manager = new ConnectionManager({
    servers: [httpEntry("guarded", url, { auth: { method: "oauth" } })],
  });
  const [status] = await manager.start();
  assert.equal(status.state, "failed");
  assert.equal(status.error!.message, "OAuth authentication failed for server 'guarded'");
  assert.equal(
    status.error!.reason,
    "the server refused access (HTTP 401 Unauthorized) and the OAuth authorization did not complete",
  );
  assert.equal(status.error!.remedy, ROWS.oauth.remedy.repl);
});
