/**
 * A server's `headers_helper` against a real MCP server that checks the bearer token
 * (tests/support/protected_mcp_server.ts), with the helper a real sh script reading the
 * current token from a file: the token rotated on the server mid-session (a 401, the helper
 * run again, the request sent again), its lifetime passing, requests refused at once
 * sharing one run, and a helper that can only print the refused headers again.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { HelperCommand, HttpServerConfig } from "../../lib/config/types.ts";
import { BearerRejectedError } from "../../lib/errors.ts";
import { Redactor } from "../../lib/redact/redact.ts";
import { HelperHeaders } from "../../lib/secrets/headers_helper.ts";
import { startProtectedMcpServer } from "../support/protected_mcp_server.ts";
import { tempDir } from "../support/temp_dir.ts";

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "headers-helper-test", version: "1" },
  },
});

/** A helper printing `Authorization: Bearer <token.txt>`, counting its runs in runs.txt. */
async function tokenHelper(dir: string): Promise<HelperCommand> {
  const path = join(dir, "headers.sh");
  await Deno.writeTextFile(
    path,
    "#!/bin/sh\necho run >> runs.txt\n" +
      'printf \'{"Authorization": "Bearer %s"}\' "$(cat token.txt)"\n',
    { mode: 0o755 },
  );
  return { command: path, args: [], env: {}, cwd: dir };
}

async function runs(dir: string): Promise<number> {
  return (await Deno.readTextFile(join(dir, "runs.txt"))).trim().split("\n").length;
}

function entry(url: string, helper: HelperCommand, ttl?: number) {
  const server: HttpServerConfig & { headersHelper: HelperCommand } = {
    name: "remote",
    transport: "streamable_http",
    url,
    headers: {},
    timeoutSeconds: 30,
    trusted: false,
    sampling: "ask",
    disabled: false,
    transportInferred: false,
    sseReadTimeoutSeconds: 300,
    headersHelper: helper,
    headersHelperTtlSeconds: ttl,
  };
  return server;
}

function post(fetch: ReturnType<HelperHeaders["wrapFetch"]>, url: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: INITIALIZE,
  });
}

Deno.test("a token rotated on the server: 401, the helper runs again, the request goes again", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "token.txt"), "token-one-aaaa");
  const tokens = ["token-one-aaaa"];
  await using server = startProtectedMcpServer({ staticTokens: tokens, noOAuth: false });
  const redactor = new Redactor();
  const helper = new HelperHeaders(entry(server.url, await tokenHelper(dir.path)), {
    parentEnv: (name) => Deno.env.get(name),
    redactor,
  });
  const fetch = helper.wrapFetch((input, init) => globalThis.fetch(input, init));
  const first = await post(fetch, server.url);
  await first.body?.cancel();
  assert.notEqual(first.status, 401);
  // The server now takes only a new token, which the helper will print.
  tokens.splice(0, 1, "token-two-bbbb");
  await Deno.writeTextFile(join(dir.path, "token.txt"), "token-two-bbbb");
  const second = await post(fetch, server.url);
  await second.body?.cancel();
  assert.notEqual(second.status, 401);
  assert.deepEqual(
    server.requests.map((r) => [r.authorization, r.status === 401]),
    [
      ["Bearer token-one-aaaa", false],
      ["Bearer token-one-aaaa", true],
      ["Bearer token-two-bbbb", false],
    ],
  );
  assert.equal(await runs(dir.path), 2);
  // Both tokens were registered as secrets before they were sent.
  assert.equal(redactor.redact("token-one-aaaa token-two-bbbb"), "[REDACTED] [REDACTED]");
});

Deno.test("requests refused at once share one run of the helper", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "token.txt"), "token-old-cccc");
  const tokens = ["token-old-cccc"];
  await using server = startProtectedMcpServer({ staticTokens: tokens });
  const helper = new HelperHeaders(entry(server.url, await tokenHelper(dir.path)), {
    parentEnv: (name) => Deno.env.get(name),
    redactor: new Redactor(),
  });
  const fetch = helper.wrapFetch((input, init) => globalThis.fetch(input, init));
  await (await post(fetch, server.url)).body?.cancel();
  tokens.splice(0, 1, "token-new-dddd");
  await Deno.writeTextFile(join(dir.path, "token.txt"), "token-new-dddd");
  const answers = await Promise.all([1, 2, 3].map(() => post(fetch, server.url)));
  for (const answer of answers) {
    await answer.body?.cancel();
    assert.notEqual(answer.status, 401);
  }
  assert.equal(await runs(dir.path), 2);
});

Deno.test("headers_helper_ttl: once it has passed, the helper runs before the next request", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "token.txt"), "token-ttl-eeee");
  await using server = startProtectedMcpServer({ staticTokens: ["token-ttl-eeee"] });
  let now = 1_000_000;
  const helper = new HelperHeaders(entry(server.url, await tokenHelper(dir.path), 60), {
    parentEnv: (name) => Deno.env.get(name),
    redactor: new Redactor(),
    now: () => now,
  });
  const fetch = helper.wrapFetch((input, init) => globalThis.fetch(input, init));
  await (await post(fetch, server.url)).body?.cancel();
  now += 59_000;
  await (await post(fetch, server.url)).body?.cancel();
  assert.equal(await runs(dir.path), 1);
  now += 2_000;
  await (await post(fetch, server.url)).body?.cancel();
  assert.equal(await runs(dir.path), 2);
  assert.ok(server.requests.every((r) => r.status !== 401));
});

Deno.test("a helper that prints the refused headers again: the refusal, worded for the helper", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "token.txt"), "token-revoked-ffff");
  await using server = startProtectedMcpServer({ staticTokens: ["another-token"] });
  const helper = new HelperHeaders(entry(server.url, await tokenHelper(dir.path)), {
    parentEnv: (name) => Deno.env.get(name),
    redactor: new Redactor(),
  });
  const fetch = helper.wrapFetch((input, init) => globalThis.fetch(input, init));
  const error = await post(fetch, server.url).then(() => undefined, (error) => error);
  assert.ok(error instanceof BearerRejectedError, String(error));
  assert.equal(error.message, "Failed to connect to server 'remote': Session terminated");
  assert.match(error.reason, /refused the headers the helper .*headers\.sh printed \(HTTP 401\)/);
  assert.match(error.reason, /it printed the same headers again/);
  assert.match(error.remedies.script, /check what it prints by hand/);
  assert.equal(await runs(dir.path), 2);
});
