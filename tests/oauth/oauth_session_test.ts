/**
 * OAuth and bearer headers through the connection layer: the connection manager with the
 * session's OAuth runtime (login before connecting, reconnects and `/refresh` on stored
 * tokens, login time not counted against `timeout`), and the real entry point
 * (`deno task start`, under the start task's permission flags) with a headless `$BROWSER`.
 * The servers are real: the official SDK's server behind a test authorization server.
 *
 * Port 3000: some tests here bind the contract's callback port, like
 * oauth/oauth_flow_test.ts. Deno runs test files one after another (the `test` task runs
 * `deno test` without `--parallel`), and the tests of a file in order, so no two logins
 * ever compete for the port. Never run this file with `--parallel`. Another program
 * holding the port fails the file at once, naming that program (`requireFreeCallbackPort`).
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { CallToolResult } from "@modelcontextprotocol/client";
import { ConnectionManager } from "../../lib/connections/manager.ts";
import { createEnvironment } from "../../lib/env.ts";
import { ServerConnectError } from "../../lib/errors.ts";
import { CALLBACK_PORT } from "../../lib/oauth/callback.ts";
import { journalFolder, resolveRedisSettings } from "../../lib/redis/settings.ts";
import { FileTokenStore, logout, type OAuthEvent } from "../../lib/oauth/mod.ts";
import { emptyCredentials } from "../../lib/oauth/token_store.ts";
import { startSseAuthProxy } from "../support/auth_proxy.ts";
import { configWith, runPatchbay, sandbox, spawnStartTask, writeConfig } from "../support/cli.ts";
import type { Sandbox } from "../support/cli.ts";
import { DENO } from "../support/deps.ts";
import {
  httpEntry,
  LOGIN_STEP_TIMEOUT_MS,
  oauthHarness,
  requireFreeCallbackPort,
} from "../support/oauth_harness.ts";
import { type AuthorizationServer, startAuthorizationServer } from "../support/oauth_server.ts";
import { startProtectedMcpServer } from "../support/protected_mcp_server.ts";
import { startTestProxy } from "../support/proxy.ts";
import { RedisServer } from "../support/redis.ts";
import { eventually, rebind, startEverythingHttp } from "../support/servers.ts";
import { bounded } from "../support/bounded.ts";

await requireFreeCallbackPort();

const FAKE_BROWSER_CLI = fileURLToPath(new URL("../support/fake_browser_cli.ts", import.meta.url));

/** Quick retries, so a reconnect test does not sit out the production backoff. */
const FAST_BACKOFF = { initialDelayMs: 100, factor: 1, maxDelayMs: 100, maxAttempts: 50 };

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function text(result: CallToolResult): string {
  return (result.content as Array<{ type: string; text?: string }>)[0]?.text ?? "";
}

function authorizationReasons(events: OAuthEvent[]): string[] {
  return events.flatMap((e) => e.type === "authorization_started" ? [e.reason] : []);
}

// ── the connection manager with the session's OAuth runtime ───────────────────────────

Deno.test("manager: logs in before connecting; /refresh and reconnects reuse the stored tokens", async () => {
  await using as = startAuthorizationServer({ scopesSupported: ["mcp"] });
  let rs = startProtectedMcpServer({ authorizationServer: as, requiredScopes: ["mcp"] });
  const port = Number(new URL(rs.url).port);
  try {
    await using h = await oauthHarness();
    const entry = httpEntry("prot", rs.url);
    await using manager = new ConnectionManager({
      servers: [entry],
      oauth: h.runtime([entry]),
      backoff: FAST_BACKOFF,
    });
    const [status] = await manager.start();
    assert.equal(status.state, "connected", status.error?.reason);
    assert.equal(text(await manager.callTool("prot__whoami", {})), "mcp");
    assert.equal(h.browser.opened.length, 1);
    assert.deepEqual(authorizationReasons(h.events), ["login"]);
    const tokenRequests = as.log.token.length;

    // /refresh, forced: a new session on the same provider, hence the same tokens.
    const [refreshed] = await manager.refresh("prot", { force: true });
    assert.equal(refreshed.state, "connected", refreshed.error?.reason);

    // The server goes away: the call fails naming it, and the manager reconnects alone.
    await rs.close();
    await assert.rejects(
      () => manager.callTool("prot__echo", { text: "down" }),
      (error) =>
        error instanceof ServerConnectError && error.server === "prot" &&
        /^Connection refused/.test(error.reason),
    );
    rs = rebind(
      port,
      () => startProtectedMcpServer({ authorizationServer: as, requiredScopes: ["mcp"], port }),
    );
    await eventually(() => manager.status("prot")?.state === "connected", "reconnected");
    assert.equal(text(await manager.callTool("prot__echo", { text: "back" })), "back");

    assert.equal(h.browser.opened.length, 1, "no second browser login");
    assert.equal(as.log.authorize.length, 1);
    assert.equal(as.log.token.length, tokenRequests, "the stored access token was used as it is");
  } finally {
    await rs.close();
  }
});

Deno.test("manager: time spent logging in never counts against the server's timeout", async () => {
  await using as = startAuthorizationServer();
  await using rs = startProtectedMcpServer({ authorizationServer: as });
  // The person is slower than the whole start-up bound (timeout 1 s + 2 s of grace) the
  // first time, and slower than the timeout when a reconnect needs a new login.
  const slowness = [3_200, 1_500];
  await using h = await oauthHarness({ browser: { before: () => delay(slowness.shift() ?? 0) } });
  const entry = { ...httpEntry("prot", rs.url), timeoutSeconds: 1 };
  await using manager = new ConnectionManager({ servers: [entry], oauth: h.runtime([entry]) });

  const [status] = await manager.start();
  assert.equal(status.state, "connected", status.error?.reason);

  // Every token revoked: the stored ones look valid, so the login now happens inside the
  // handshake (401 on initialize, the refresh refused, a browser login), within `timeout`
  // by the clock of the server, not of the person.
  as.revokeAll();
  const [again] = await manager.refresh("prot", { force: true });
  assert.equal(again.state, "connected", again.error?.reason);
  assert.deepEqual(authorizationReasons(h.events), ["login", "reauthorize"]);
  assert.equal(text(await manager.callTool("prot__echo", { text: "still here" })), "still here");
});

Deno.test("manager: an OAuth server over the legacy SSE transport", async () => {
  await using as = startAuthorizationServer();
  await using proxy = await startSseAuthProxy(as);
  await using h = await oauthHarness();
  const entry = { ...httpEntry("legacy", proxy.url), transport: "sse" as const };
  await using manager = new ConnectionManager({ servers: [entry], oauth: h.runtime([entry]) });
  const [status] = await manager.start();
  assert.equal(status.state, "connected", status.error?.reason);
  assert.equal(
    text(await manager.callTool("legacy__echo", { message: "over sse" })),
    "Echo: over sse",
  );
  assert.equal(proxy.requests[0], "GET /sse 401", "the event stream asked for a token first");
  assert.equal(h.browser.opened.length, 1);
});

Deno.test("manager: OAuth discovery, registration, tokens and revocation go through the proxy in .env", async () => {
  await using as = startAuthorizationServer();
  await using rs = startProtectedMcpServer({ authorizationServer: as });
  await using proxy = startTestProxy();
  // The proxy exists only in .env, never in the process environment Deno reads itself.
  const env = createEnvironment({}, new Map([["HTTP_PROXY", proxy.url]]));
  await using h = await oauthHarness({ getEnv: (name) => env.get(name) });
  const entry = httpEntry("prot", rs.url);
  {
    await using manager = new ConnectionManager({
      servers: [entry],
      oauth: h.runtime([entry]),
      env,
    });
    const [status] = await manager.start();
    assert.equal(status.state, "connected", status.error?.reason);
  }
  const through = (method: string, url: string) =>
    proxy.requestLines.some((line) => line.startsWith(`${method} ${url}`));
  const seen = proxy.requestLines.join("\n");
  const origin = new URL(rs.url).origin;
  // The protected-resource metadata its 401 names (resource_metadata).
  assert.ok(through("GET", `${origin}/metadata/protected-resource`), seen);
  assert.ok(through("GET", `${as.issuer}/.well-known/`), seen);
  assert.ok(through("POST", `${as.issuer}/register`), seen);
  assert.ok(through("POST", `${as.issuer}/token`), seen);
  assert.ok(through("POST", rs.url), seen);
  // The browser has its own network settings: the authorization page is not fetched here.
  assert.ok(!through("GET", `${as.issuer}/authorize`), seen);
  assert.equal(h.browser.opened.length, 1);

  const result = await logout(h.store, "prot", { getEnv: (name) => env.get(name) });
  assert.deepEqual(result.revoked, ["refresh_token", "access_token"]);
  assert.ok(through("POST", `${as.issuer}/revoke`), proxy.requestLines.join("\n"));
});

// ── the real entry point ──────────────────────────────────────────────────────────────

/** A sandbox whose `$BROWSER` is the fake browser, which follows the login page. */
function browserSandbox(env: Record<string, string> = {}): Promise<Sandbox> {
  return sandbox({ BROWSER: `${DENO} run --allow-net ${FAKE_BROWSER_CLI}`, ...env });
}

/** Writes a configuration with the OAuth server `prot` at `url`; returns its path. */
function writeProtConfig(
  box: Sandbox,
  url: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  return writeConfig(box, configWith({ prot: { url, auth: { method: "oauth" } } }, extra));
}

/**
 * Runs the entry point again after a browser login and asserts that it connected on the
 * stored login: no second browser login, no token request. Returns that run.
 */
async function runAgainOnStoredLogin(
  box: Sandbox,
  config: string,
  as: AuthorizationServer,
) {
  const tokenRequests = as.log.token.length;
  const second = await runPatchbay(box, ["--config", config]);
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stderr, /✓ prot\s+connected\s+streamable_http\s+4 tools/);
  assert.doesNotMatch(second.stderr, /Authorize patchbay|open this URL/);
  assert.equal(as.log.authorize.length, 1, "no second browser login");
  assert.equal(as.log.token.length, tokenRequests, "the stored access token was used as it is");
  return second;
}

Deno.test("entry point: an OAuth server logs in through $BROWSER; the next run reuses the tokens", async () => {
  await using as = startAuthorizationServer({ scopesSupported: ["mcp"] });
  await using rs = startProtectedMcpServer({ authorizationServer: as, requiredScopes: ["mcp"] });
  await using box = await browserSandbox();
  const config = await writeProtConfig(box, rs.url);

  const first = await runPatchbay(box, ["--config", config]);
  assert.equal(first.code, 0, first.stderr);
  // The URL is printed whether or not a browser opens (docs/authentication.md).
  assert.match(
    first.stderr,
    /Authorize patchbay for 'prot' in your browser to log in \(scope: mcp\)\.\nIf no browser opens, open this URL by hand:\n {2}http:\/\/127\.0\.0\.1:\d+\/authorize\?\S*state=/,
  );
  assert.match(first.stderr, /Logged in to 'prot' \(scope: mcp\)\./);
  assert.match(first.stderr, /Servers {2}1 of 1 server connected/);
  assert.match(first.stderr, /✓ prot\s+connected\s+streamable_http\s+4 tools/);
  assert.equal(as.log.authorize.length, 1);

  const second = await runAgainOnStoredLogin(box, config, as);

  const oauthDir = join(box.home, ".config", "patchbay", "oauth");
  const [file] = [...Deno.readDirSync(oauthDir)].map((entry) => join(oauthDir, entry.name));
  const tokens = JSON.parse(Deno.readTextFileSync(file)).issuers[as.issuer].tokens;
  const log = Deno.readTextFileSync(join(box.home, ".local", "state", "patchbay", "patchbay.log"));
  for (const output of [first.stderr, second.stderr, log]) {
    assert.ok(!output.includes(tokens.access_token) && !output.includes(tokens.refresh_token));
  }
});

Deno.test("entry point, Memory.backend redis: the login lands in Redis, is reused, listed and logged out of", async () => {
  await using as = startAuthorizationServer({ scopesSupported: ["mcp"] });
  await using rs = startProtectedMcpServer({ authorizationServer: as, requiredScopes: ["mcp"] });
  await using redis = await RedisServer.start();
  await using box = await browserSandbox(redis.env);
  const config = await writeProtConfig(box, rs.url, {
    Memory: { backend: "redis", key_prefix: "team" },
  });

  const first = await runPatchbay(box, ["--config", config]);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stderr, /Logged in to 'prot' \(scope: mcp\)\./);
  assert.match(first.stderr, /✓ prot\s+connected\s+streamable_http\s+4 tools/);
  const stored = JSON.parse(await redis.cli("GET", "team:oauth:prot"));
  const tokens = stored.issuers[as.issuer].tokens;
  assert.equal(stored.serverUrl, rs.url);
  assert.equal(await redis.cli("TTL", "team:oauth:prot"), "-1");
  const oauthDir = join(box.home, ".config", "patchbay", "oauth");
  assert.equal(await Deno.stat(oauthDir).catch(() => undefined), undefined, "no file written");

  // A restart reads the login back from Redis: no browser, no token request.
  const second = await runAgainOnStoredLogin(box, config, as);

  const list = await runPatchbay(box, ["auth", "list", "--config", config]);
  assert.equal(list.code, 0, list.stderr);
  assert.ok(
    list.stdout.includes(
      `OAuth logins (stored in Redis at 127.0.0.1:${redis.port} db 0, keys team:oauth:*)`,
    ),
    list.stdout,
  );
  assert.match(list.stdout, /prot\s+logged in\s+http:\/\/127\.0\.0\.1:\d+\S*\s+in \d+/);

  const logout = await runPatchbay(box, ["auth", "logout", "prot", "--config", config]);
  assert.equal(logout.code, 0, logout.stderr);
  assert.match(logout.stdout, /Logged out of 'prot': tokens revoked at the authorization server/);
  assert.equal(await redis.cli("EXISTS", "team:oauth:prot"), "0");
  const after = await runPatchbay(box, ["auth", "list", "--config", config]);
  assert.match(after.stdout, /prot\s+not logged in/);

  const log = Deno.readTextFileSync(join(box.home, ".local", "state", "patchbay", "patchbay.log"));
  for (const output of [first, second, list, logout].flatMap((r) => [r.stdout, r.stderr])) {
    assert.ok(!output.includes(tokens.access_token) && !output.includes(tokens.refresh_token));
  }
  assert.ok(!log.includes(tokens.access_token) && !log.includes(tokens.refresh_token));
});

Deno.test("entry point, Memory.backend redis with Redis down: the OAuth server fails clearly, no browser login", async () => {
  await using as = startAuthorizationServer();
  await using rs = startProtectedMcpServer({ authorizationServer: as });
  await using redis = await RedisServer.start();
  await redis.stop();
  await using box = await browserSandbox(redis.env);
  const config = await writeProtConfig(box, rs.url, {
    Memory: { backend: "redis" },
  });
  const result = await runPatchbay(box, ["--config", config]);
  // The session goes on without the server (stdin is empty, so it ends at once).
  assert.equal(result.code, 0, result.stderr);
  const refused =
    `error: Could not connect to Redis at 127.0.0.1:${redis.port} db 0: connection refused`;
  const out = result.stderr;
  assert.match(out, /✗ prot\s+failed\s+streamable_http/);
  assert.ok(out.includes(refused), out);
  assert.match(
    out,
    /cause: .*patchbay keeps OAuth logins there because Memory\.backend is "redis"/,
  );
  assert.match(
    out,
    /remedy: start the store, .*then run patchbay again .*Memory\.backend to "file"/,
  );
  assert.doesNotMatch(out, /Authorize patchbay|open this URL/);
  assert.equal(as.log.authorize.length + as.log.token.length, 0, "no login was attempted");

  const list = await runPatchbay(box, ["auth", "list", "--config", config]);
  assert.equal(list.code, 1, list.stdout);
  assert.ok(list.stderr.includes(refused), list.stderr);

  // A login kept locally while Redis was away is listed, with word that Redis is away.
  const { identity } = resolveRedisSettings(
    { backend: "redis", keyPrefix: "patchbay" },
    createEnvironment(redis.env),
  );
  const undelivered = join(box.home, ".config", "patchbay", "oauth", "undelivered");
  const record = emptyCredentials("prot", rs.url);
  record.issuer = as.issuer;
  record.issuers[as.issuer] = {
    tokens: { access_token: "kept-access", token_type: "Bearer", issuer: as.issuer },
  };
  await new FileTokenStore({ dir: join(undelivered, journalFolder(identity)) }).save(record);
  const kept = await runPatchbay(box, ["auth", "list", "--config", config]);
  assert.equal(kept.code, 0, kept.stderr);
  assert.match(kept.stdout, /^\s+prot\s+logged in/m);
  assert.ok(
    kept.stderr.includes(
      `Could not read the OAuth logins in Redis at 127.0.0.1:${redis.port} db 0 (${
        refused.slice("error: ".length)
      }). Until it answers, only the logins kept locally in `,
    ),
    kept.stderr,
  );
});

Deno.test("entry point: auth.method oauth on a plain MCP server: Session terminated, remove auth", async () => {
  await using plain = await startEverythingHttp("streamableHttp");
  await using box = await browserSandbox();
  const config = await writeConfig(
    box,
    configWith({ plain: { url: `${plain.origin}/mcp`, auth: { method: "oauth" } } }),
  );
  const result = await runPatchbay(box, ["--config", config]);
  // The session goes on without the failed server (stdin is empty, so it ends at once).
  assert.equal(result.code, 0, result.stderr);
  const out = result.stderr;
  assert.match(out, /✗ plain\s+failed\s+streamable_http/);
  assert.ok(out.includes("error: Failed to connect to server 'plain': Session terminated"), out);
  assert.ok(
    out.includes(
      `cause:  "auth": {"method": "oauth"} is set, but ${plain.origin}/mcp answered initialize ` +
        `without asking for credentials and ${plain.origin} publishes no OAuth metadata`,
    ),
    out,
  );
  assert.ok(
    out.includes(
      'remedy: remove "auth" from the server entry and send a token with "headers": ' +
        '{"Authorization": "Bearer <ACCESS_TOKEN>"} instead',
    ),
    out,
  );
  assert.doesNotMatch(out, /Authorize patchbay|open this URL/, "no login was attempted");
});

Deno.test("entry point: a bearer header connects; a refused token names the cause and the fix", async () => {
  const token = "api-token-7f3a9c1e5b";
  await using rs = startProtectedMcpServer({ staticTokens: [token] });
  await using box = await sandbox();
  await Deno.writeTextFile(join(box.cwd, ".env"), `API_TOKEN=${token}\n`);
  const config = await writeConfig(
    box,
    configWith({
      api: { url: rs.url, headers: { Authorization: "Bearer ${API_TOKEN}" } },
      stale: { url: rs.url, headers: { Authorization: "Bearer expired-token-0000" } },
    }),
  );
  const result = await runPatchbay(box, ["--config", config]);
  const out = result.stderr;
  assert.equal(result.code, 0, out);
  assert.match(out, /✓ api\s+connected\s+streamable_http\s+4 tools/);
  assert.match(out, /✗ stale\s+failed\s+streamable_http/);
  assert.ok(out.includes("error: Failed to connect to server 'stale': Session terminated"), out);
  assert.match(
    out,
    /cause: {2}the server refused the token in headers\.Authorization \(HTTP 401 invalid_token[^\n]*\); it is wrong, expired or revoked/,
  );
  assert.match(out, /remedy: [^\n]*put a current token in the header/);
  const log = Deno.readTextFileSync(join(box.home, ".local", "state", "patchbay", "patchbay.log"));
  assert.ok(!out.includes(token) && !log.includes(token), "the token never shows");
  assert.ok(
    rs.requests.some((r) => r.authorization === `Bearer ${token}` && r.status === 200),
    "the header went with the requests",
  );
});

Deno.test("entry point: Ctrl+C during a pending browser login cancels it and frees port 3000", async () => {
  await using as = startAuthorizationServer();
  await using rs = startProtectedMcpServer({ authorizationServer: as });
  // A "browser" that opens and is never used: the login waits for the person.
  await using box = await sandbox({ BROWSER: "true" });
  const config = await writeProtConfig(box, rs.url);
  const child = await spawnStartTask(box, config, "null");
  let stderr = "";
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  // A patchbay that never shows the URL is ended, so the read below cannot wait forever.
  const stuck = setTimeout(() => child.kill("SIGKILL"), LOGIN_STEP_TIMEOUT_MS);
  while (!/open this URL by hand:\n {2}\S+\n/.test(stderr)) {
    const { value, done } = await reader.read();
    if (done) break;
    stderr += value;
  }
  clearTimeout(stuck);
  assert.match(stderr, /Authorize patchbay for 'prot'/);
  child.kill("SIGINT");
  const { code } = await bounded(
    (async () => {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        stderr += chunk.value;
      }
      return await child.status;
    })(),
    "patchbay to exit on Ctrl+C during the login (not at the 300 s callback timeout)",
    undefined,
    () => child.kill("SIGKILL"),
  );
  assert.equal(code, 130, stderr);
  assert.equal(as.log.token.length, 0, "no tokens were obtained");
  // The callback listener is gone with the login.
  Deno.listen({ hostname: "127.0.0.1", port: CALLBACK_PORT }).close();
});
