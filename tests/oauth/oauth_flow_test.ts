/**
 * OAuth end to end against a real OAuth-protected MCP server on loopback (the official
 * SDK's server behind a test authorization server), with the real callback listener on
 * the contract's port 3000 and a headless browser that follows the authorization URL.
 *
 * Port 3000: the tests here bind it, and so do some in oauth/oauth_session_test.ts (OAuth
 * through the connection manager and the entry point). Deno runs the tests of a file in
 * order and test files one after another (the `test` task never passes `--parallel`), so
 * no two logins ever compete for the port. Never run these files with `--parallel`.
 * Another program holding the port fails the file at once, naming that program
 * (`requireFreeCallbackPort`); every wait for a login step is bounded.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  CancelledError,
  OAuthFailedError,
  OAuthUnsupportedError,
  remedyFor,
  ServerConnectError,
} from "../../lib/errors.ts";
import { ROWS } from "../../lib/errors/failure_table.ts";
import { CALLBACK_PORT } from "../../lib/oauth/callback.ts";
import {
  Client,
  SSEClientTransport,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import type { BrowserOpener } from "../../lib/oauth/browser.ts";
import {
  bearerFetch,
  createOAuthRuntime,
  logout,
  PatchbayOAuthProvider,
  RedisTokenStore,
} from "../../lib/oauth/mod.ts";
import { createEnvironment } from "../../lib/env.ts";
import { join } from "node:path";
import { startSseAuthProxy } from "../support/auth_proxy.ts";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { DENO } from "../support/deps.ts";
import {
  browserOpened,
  connectWith,
  httpEntry,
  oauthHarness,
  requireFreeCallbackPort,
} from "../support/oauth_harness.ts";
import {
  type AuthorizationServerOptions,
  startAuthorizationServer,
} from "../support/oauth_server.ts";
import {
  type ProtectedServerOptions,
  startProtectedMcpServer,
} from "../support/protected_mcp_server.ts";
import { fakeBrowser } from "../support/fake_browser.ts";
import { RedisServer } from "../support/redis.ts";
import { eventually, freePort, stdioEntry } from "../support/servers.ts";

await requireFreeCallbackPort();

const authorizeCount = (as: { log: { authorize: unknown[] } }) => as.log.authorize.length;
const grants = (as: { log: { token: Array<{ params: URLSearchParams }> } }, type: string) =>
  as.log.token.filter((t) => t.params.get("grant_type") === type).length;

/**
 * An authorization server, an MCP server it protects, a harness, and a connection to that
 * server logged in through the harness's browser; `await using` ends them, the connection
 * first.
 */
/**
 * The provider's clock, injected: real time plus what a test moves it forward, so a token
 * expires for the provider without the test waiting (the servers keep real time).
 */
function movableClock() {
  let ahead = 0;
  return { now: () => Date.now() + ahead, advance: (ms: number) => void (ahead += ms) };
}

async function loggedIn(
  asOptions: AuthorizationServerOptions = {},
  rsOptions: Omit<ProtectedServerOptions, "authorizationServer"> = {},
  now?: () => number,
) {
  await using stack = new AsyncDisposableStack();
  const as = stack.use(startAuthorizationServer(asOptions));
  const rs = stack.use(startProtectedMcpServer({ authorizationServer: as, ...rsOptions }));
  const h = stack.use(await oauthHarness());
  const entry = httpEntry("protected", rs.url);
  const runtime = h.runtime([entry]);
  // The runtime's provider, but on `now`'s clock.
  const provider = now
    ? new PatchbayOAuthProvider({
      server: entry,
      store: h.store,
      broker: runtime.broker,
      log: h.logger.child(`oauth:${entry.name}`),
      redactor: h.logger.redactor,
      onEvent: (event) => h.events.push(event),
      now,
    })
    : runtime.providerFor(entry)!;
  const connection = stack.use(await connectWith(rs.url, provider));
  const owned = stack.move();
  return { as, rs, h, connection, [Symbol.asyncDispose]: () => owned.disposeAsync() };
}

Deno.test("first login: discovery, registration, PKCE, resource and scope, tokens stored 0600", async () => {
  await using as = startAuthorizationServer({ scopesSupported: ["mcp", "admin"] });
  await using rs = startProtectedMcpServer({ authorizationServer: as, requiredScopes: ["mcp"] });
  await using h = await oauthHarness();
  const entry = httpEntry("protected", rs.url);
  const provider = h.runtime([entry]).providerFor(entry)!;

  assert.equal(await provider.ensureLogin(), "authorized");
  await using connection = await connectWith(rs.url, provider);
  assert.equal(await connection.call("whoami"), "mcp");

  // Dynamic registration with the fixed loopback redirect URI, as a public client.
  assert.equal(as.log.register.length, 1);
  assert.deepEqual(as.log.register[0].redirect_uris, ["http://localhost:3000/callback"]);
  assert.equal(as.log.register[0].token_endpoint_auth_method, "none");
  // One browser visit whose authorization request carries PKCE S256, the resource
  // indicator (RFC 8707), the challenged scope and a state.
  assert.equal(h.browser.opened.length, 1);
  const request = as.log.authorize[0];
  assert.equal(request.get("code_challenge_method"), "S256");
  assert.match(request.get("code_challenge") ?? "", /^[A-Za-z0-9_-]{43}$/);
  assert.equal(request.get("resource"), rs.url);
  assert.equal(request.get("scope"), "mcp");
  assert.ok((request.get("state") ?? "").length >= 32);
  const exchange = as.log.token.find((t) => t.params.get("grant_type") === "authorization_code")!;
  assert.equal(exchange.params.get("resource"), rs.url);
  assert.match(exchange.params.get("code_verifier") ?? "", /^[A-Za-z0-9._~-]{43,128}$/);
  // The person saw the URL and the callback page told them to close the tab.
  const started = h.events.find((e) => e.type === "authorization_started");
  assert.equal(started?.type === "authorization_started" && started.url, h.browser.opened[0]);
  await h.browser.settled();
  assert.equal(h.browser.visits[0].status, 200);
  assert.match(h.browser.visits[0].body, /You can close this tab/);

  const file = await h.store.pathFor("protected");
  assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
  const stored = await h.store.load("protected");
  assert.equal(stored?.issuer, as.issuer);
  assert.equal(stored?.serverUrl, rs.url);
  assert.ok(stored?.issuers[as.issuer].tokens?.refresh_token);
});

Deno.test("restart: a new provider reuses the stored tokens without a browser", async () => {
  await using as = startAuthorizationServer();
  await using rs = startProtectedMcpServer({ authorizationServer: as });
  await using h = await oauthHarness();
  const entry = httpEntry("protected", rs.url);
  await h.runtime([entry]).providerFor(entry)!.ensureLogin();
  const before = { authorize: authorizeCount(as), token: as.log.token.length };

  const restarted = h.runtime([entry], fakeBrowser()).providerFor(entry)!;
  assert.equal(await restarted.ensureLogin(), "stored");
  await using connection = await connectWith(rs.url, restarted);
  assert.equal(await connection.call("echo", { text: "again" }), "again");
  assert.deepEqual(
    { authorize: authorizeCount(as), token: as.log.token.length },
    before,
    "no new authorization or token request",
  );
});

Deno.test("Redis token store: a login made while Redis went away is kept, then reaches Redis and is reused", async () => {
  await using as = startAuthorizationServer();
  await using rs = startProtectedMcpServer({ authorizationServer: as });
  await using redis = await RedisServer.start({ persistence: "aof" });
  await using h = await oauthHarness();
  const entry = httpEntry("protected", rs.url);
  const runtime = (opener: BrowserOpener) =>
    createOAuthRuntime([entry], {
      log: h.logger.child("test"),
      redactor: h.logger.redactor,
      onEvent: (event) => h.events.push(event),
      opener,
      timeoutMs: 10_000,
      store: new RedisTokenStore({
        memory: { backend: "redis", keyPrefix: "patchbay" },
        env: createEnvironment(redis.env),
        undeliveredDir: join(h.dir, "undelivered"),
        onEvent: (event) => h.events.push(event),
        log: h.logger.child("store"),
      }),
    })!;

  // Redis answers when the login starts (nothing stored yet) and stops while the person
  // is in the browser, so the tokens arrive with Redis away.
  const browser = fakeBrowser({ before: () => redis.stop() });
  const first = runtime(browser.opener);
  try {
    const provider = first.providerFor(entry)!;
    assert.equal(await provider.ensureLogin(), "authorized");
    await using connection = await connectWith(rs.url, provider);
    assert.equal(await connection.call("echo", { text: "on" }), "on", "this session goes on");
    const kept = h.events.filter((e) => e.type === "login_kept_locally");
    assert.equal(kept.length, 1, JSON.stringify(h.events));
  } finally {
    await browser.settled();
    await first.close();
  }

  await redis.restart();
  const second = runtime(fakeBrowser().opener);
  try {
    assert.equal(await second.providerFor(entry)!.ensureLogin(), "stored");
  } finally {
    await second.close();
  }
  assert.equal(authorizeCount(as), 1, "no second browser login");
  const stored = JSON.parse(await redis.cli("GET", "patchbay:oauth:protected"));
  assert.ok(stored.issuers[as.issuer].tokens.refresh_token);
  assert.deepEqual([...Deno.readDirSync(join(h.dir, "undelivered"))], [], "local copy gone");
});

Deno.test("refresh: an expired token is refreshed before use, a refused one after a 401", async () => {
  const clock = movableClock();
  await using session = await loggedIn({ accessTokenSeconds: 60 }, {}, clock.now);
  const { as, rs, h, connection } = session;
  assert.equal(authorizeCount(as), 1);

  // Expired by the clock: refreshed before the request is sent, so the server sees no 401.
  clock.advance(61_000);
  const refusalsBefore = rs.requests.filter((r) => r.status === 401).length;
  assert.equal(await connection.call("echo", { text: "after expiry" }), "after expiry");
  assert.equal(grants(as, "refresh_token"), 1);
  assert.equal(rs.requests.filter((r) => r.status === 401).length, refusalsBefore);

  // Refused by the server although unexpired by the clock: 401, refresh, retry.
  as.options.accessTokenSeconds = 3600;
  await connection.call("echo", { text: "fresh" });
  as.expireAccessTokens();
  assert.equal(await connection.call("echo", { text: "after 401" }), "after 401");
  assert.ok(grants(as, "refresh_token") >= 2);
  assert.equal(authorizeCount(as), 1, "refreshing never needed the browser");
  assert.ok(h.events.some((e) => e.type === "authorized" && e.how === "refresh"));
});

Deno.test("a 401 mid-session after revocation: the browser login runs and the request succeeds", async () => {
  await using session = await loggedIn();
  const { as, h, connection } = session;
  assert.equal(h.browser.opened.length, 1);

  as.revokeAll(); // refresh token too: only a new login helps
  assert.equal(await connection.call("echo", { text: "still here" }), "still here");
  assert.equal(h.browser.opened.length, 2);
  const reasons = h.events.filter((e) => e.type === "authorization_started").map((e) =>
    e.type === "authorization_started" && e.reason
  );
  assert.deepEqual(reasons, ["login", "reauthorize"]);
});

Deno.test("step-up: 403 insufficient_scope re-authorizes with the union of scopes, bounded", async () => {
  await using session = await loggedIn({ scopesSupported: ["mcp", "admin"] }, {
    requiredScopes: ["mcp"],
    adminScope: "admin",
  });
  const { as, h, connection } = session;

  assert.equal(await connection.call("admin"), "admin done");
  assert.equal(as.log.authorize.at(-1)?.get("scope"), "mcp admin");
  assert.equal(await connection.call("whoami"), "mcp admin");

  // The person declines the extra scope: one step-up, then a clear failure, no loop.
  await using as2 = startAuthorizationServer({
    scopesSupported: ["mcp", "admin"],
    grant: (requested) => requested.filter((scope) => scope !== "admin"),
  });
  await using rs2 = startProtectedMcpServer({
    authorizationServer: as2,
    requiredScopes: ["mcp"],
    adminScope: "admin",
  });
  const entry2 = httpEntry("stingy", rs2.url);
  const provider2 = h.runtime([entry2]).providerFor(entry2)!;
  await using connection2 = await connectWith(rs2.url, provider2);
  const error = await connection2.call("admin").then(() => undefined, (e) => e);
  assert.ok(error instanceof OAuthFailedError, String(error));
  assert.match(error.reason, /requires scope "admin".*granted "mcp"/);
  assert.equal(authorizeCount(as2), 2, "one login and one step-up");
  assert.equal(await connection2.call("echo", { text: "ok" }), "ok", "session still usable");
});

Deno.test("SSE transport: login on the event stream's 401, and again on a POST's 401", async () => {
  await using as = startAuthorizationServer();
  await using proxy = await startSseAuthProxy(as);
  await using h = await oauthHarness();
  const entry = { ...httpEntry("sse-server", proxy.url), transport: "sse" as const };
  const provider = h.runtime([entry]).providerFor(entry)!;
  const transport = new SSEClientTransport(new URL(proxy.url), {
    authProvider: provider,
    fetch: provider.wrapFetch(fetch),
  });
  const client = new Client({ name: "patchbay-test", version: "0.0.0" });
  try {
    await client.connect(transport);
    const echo = async (message: string) => {
      const result = await client.callTool({ name: "echo", arguments: { message } });
      return (result.content as Array<{ text: string }>)[0].text;
    };
    assert.equal(await echo("over sse"), "Echo: over sse");
    assert.equal(proxy.requests[0], "GET /sse 401", "the event stream asked first");
    as.revokeAll();
    assert.equal(await echo("after revocation"), "Echo: after revocation");
    assert.ok(proxy.requests.includes("POST /message 401"), proxy.requests.join(", "));
    assert.equal(h.browser.opened.length, 2);
  } finally {
    await client.close();
  }
});

Deno.test("logout revokes at the server (RFC 7009) and deletes the stored login", async () => {
  await using as = startAuthorizationServer();
  await using rs = startProtectedMcpServer({ authorizationServer: as });
  await using h = await oauthHarness();
  const entry = httpEntry("protected", rs.url);
  const provider = h.runtime([entry]).providerFor(entry)!;
  await provider.ensureLogin();
  const tokens = (await h.store.load("protected"))!.issuers[as.issuer].tokens!;
  const file = await h.store.pathFor("protected");

  const result = await logout(h.store, "protected");
  assert.deepEqual(result.revoked, ["refresh_token", "access_token"]);
  assert.equal(result.deleted, true);
  assert.deepEqual(as.log.revoke.map((p) => p.get("token_type_hint")), [
    "refresh_token",
    "access_token",
  ]);
  await assert.rejects(as.verifyAccessToken(tokens.access_token));
  await assert.rejects(Deno.stat(file), Deno.errors.NotFound);
  assert.equal((await logout(h.store, "protected")).deleted, false);
});

Deno.test("callback: a state mismatch is refused and the login then times out", async () => {
  await using as = startAuthorizationServer();
  await using rs = startProtectedMcpServer({ authorizationServer: as });
  await using h = await oauthHarness({
    timeoutMs: 1_500,
    browser: {
      tamper: (url) => {
        if (url.port === String(CALLBACK_PORT)) url.searchParams.set("state", "forged");
        return url;
      },
    },
  });
  const entry = httpEntry("protected", rs.url);
  const provider = h.runtime([entry]).providerFor(entry)!;

  const error = await provider.ensureLogin().then(() => undefined, (e) => e);
  assert.ok(error instanceof OAuthFailedError, String(error));
  assert.match(error.message, /^OAuth authentication failed/);
  assert.match(
    error.reason,
    /no authorization response reached http:\/\/localhost:3000\/callback within 2 s/,
  );
  await h.browser.settled();
  assert.equal(h.browser.visits[0].status, 400);
  assert.match(h.browser.visits[0].body, /state mismatch/);
  assert.equal(grants(as, "authorization_code"), 0, "the forged callback's code was never used");
  assert.ok(h.events.some((e) => e.type === "callback_rejected"));
});

Deno.test("callback: denial in the browser, and an iss mismatch (RFC 9207), fail the login", async () => {
  await using as = startAuthorizationServer({ consent: "deny" });
  await using rs = startProtectedMcpServer({ authorizationServer: as });
  await using h = await oauthHarness();
  const entry = httpEntry("protected", rs.url);
  const denied = await h.loginError(entry);
  assert.ok(denied instanceof OAuthFailedError);
  assert.match(denied.reason, /denied in the browser \(error=access_denied\)/);
  await h.browser.settled();
  assert.match(h.browser.visits[0].body, /Authorization denied/);

  as.options.consent = "approve";
  as.options.wrongIssOnRedirect = true;
  const mixedUp = await h.loginError(entry);
  assert.ok(mixedUp instanceof OAuthFailedError);
  assert.match(mixedUp.reason, /RFC 9207/);
  assert.equal(grants(as, "authorization_code"), 0);
});

Deno.test("no browser: the URL is shown and opened by hand; the listener is loopback and /callback only", async () => {
  await using as = startAuthorizationServer();
  await using rs = startProtectedMcpServer({ authorizationServer: as });
  await using h = await oauthHarness({
    browser: { idle: true, fail: "xdg-open found no browser (is a desktop environment running?)" },
    timeoutMs: 3_000,
  });
  const entry = httpEntry("protected", rs.url);
  const login = h.loginError(entry);
  await browserOpened(h.browser, 1, login);

  const other = await fetch(`http://127.0.0.1:${CALLBACK_PORT}/favicon.ico`);
  assert.equal(other.status, 404);
  await other.body?.cancel();
  const noState = await fetch(`http://localhost:${CALLBACK_PORT}/callback?code=x`);
  assert.equal(noState.status, 400);
  await noState.body?.cancel();
  const external = Object.values(Deno.networkInterfaces()).find((i) =>
    i.family === "IPv4" && !i.address.startsWith("127.")
  );
  if (external) {
    await assert.rejects(
      Deno.connect({ hostname: external.address, port: CALLBACK_PORT }),
      Deno.errors.ConnectionRefused,
      "not reachable from other hosts",
    );
  }
  const failed = h.events.find((e) => e.type === "browser_failed");
  assert.ok(failed?.type === "browser_failed");
  assert.equal(failed.url, h.browser.opened[0]);
  assert.match(failed.reason, /found no browser/);
  // Finish the login by hand with the real state, as a person pasting the URL would.
  const url = new URL(failed.url);
  const visit = await fetch(url, { redirect: "manual" });
  const callback = visit.headers.get("location")!;
  await visit.body?.cancel();
  const page = await fetch(callback);
  assert.match(await page.text(), /Login complete/);
  assert.equal(await login, undefined);
  // Released: the port can be bound again at once.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: CALLBACK_PORT });
  listener.close();
});

Deno.test("cancelling: ensureLogin's signal, or closing the runtime, ends the login and frees the port", async () => {
  await using as = startAuthorizationServer();
  await using rs = startProtectedMcpServer({ authorizationServer: as });
  await using h = await oauthHarness({ browser: { idle: true } });
  const entry = httpEntry("protected", rs.url);
  const controller = new AbortController();
  const login = h.runtime([entry]).providerFor(entry)!.ensureLogin({ signal: controller.signal });
  await browserOpened(h.browser, 1, login);
  controller.abort();
  await assert.rejects(login, CancelledError);
  Deno.listen({ hostname: "127.0.0.1", port: CALLBACK_PORT }).close();

  // A login started by a request (no signal of its own) ends when the session closes.
  const runtime = h.runtime([entry]);
  const request = connectWith(rs.url, runtime.providerFor(entry)!).then(() => undefined, (e) => e);
  await browserOpened(h.browser, 2, request);
  await runtime.close();
  assert.ok((await request) instanceof CancelledError);
  Deno.listen({ hostname: "127.0.0.1", port: CALLBACK_PORT }).close();
});

Deno.test("several servers needing login are handled one after another on port 3000", async () => {
  await using as = startAuthorizationServer();
  await using rsA = startProtectedMcpServer({ authorizationServer: as });
  await using rsB = startProtectedMcpServer({ authorizationServer: as });
  // The person finishes the first login only once the second is waiting for the port.
  let release!: () => void;
  const bothWaiting = new Promise<void>((resolve) => release = resolve);
  await using h = await oauthHarness({ browser: { before: () => bothWaiting } });
  const a = httpEntry("alpha", rsA.url);
  const b = httpEntry("beta", rsB.url);
  const runtime = h.runtime([a, b]);
  const logins = Promise.all([
    runtime.providerFor(a)!.ensureLogin(),
    runtime.providerFor(b)!.ensureLogin(),
  ]);
  // The logins are watched while the test waits, so that one failing meanwhile is this
  // test's failure, not an unhandled rejection that ends the whole file.
  let over = false;
  logins.then(() => over = true, () => over = true);
  const isQueued = () => h.events.some((e) => e.type === "queued");
  await eventually(() => over || isQueued(), "the second login to queue behind the first");
  if (!isQueued()) {
    await logins;
    assert.fail("both logins finished without one waiting for the other");
  }
  assert.equal(h.browser.opened.length, 1, "the second login waits before opening a browser");
  release();
  const outcomes = await logins;
  assert.deepEqual(outcomes, ["authorized", "authorized"]);
  const sequence = h.events.flatMap((e) =>
    e.type === "authorization_started" || (e.type === "authorized" && e.how === "browser")
      ? [`${e.type}:${e.server}`]
      : []
  );
  // Whichever reached the browser first finished before the other started.
  const [first, second] = sequence[0].endsWith("alpha") ? ["alpha", "beta"] : ["beta", "alpha"];
  assert.deepEqual(sequence, [
    `authorization_started:${first}`,
    `authorized:${first}`,
    `authorization_started:${second}`,
    `authorized:${second}`,
  ]);
  assert.ok(h.events.some((e) => e.type === "queued" && e.server === second));
});

Deno.test("port 3000 busy: OAuth authentication failed, naming the process, remedy free the port", async () => {
  await using as = startAuthorizationServer();
  await using rs = startProtectedMcpServer({ authorizationServer: as });
  await using h = await oauthHarness();
  await using holder = await holdPort(CALLBACK_PORT);
  const entry = httpEntry("protected", rs.url);

  const error = await h.loginError(entry);
  assert.ok(error instanceof OAuthFailedError, String(error));
  assert.equal(error.message, "OAuth authentication failed for server 'protected'");
  assert.match(error.reason, new RegExp(`port 3000 .* in use by node \\(pid ${holder.pid}\\)`));
  assert.match(error.remedy, /^free port 3000: stop node \(pid \d+\)/);
  // `patchbay auth login` words it for a script: no /refresh there.
  assert.match(remedyFor(error, "script"), /then retry \(patchbay auth login protected\)$/);
  assert.equal(h.browser.opened.length, 0, "no browser opened for a login that cannot finish");
});

Deno.test("no OAuth entry: no runtime, and connections never touch port 3000", async () => {
  await using rs = startProtectedMcpServer({ staticTokens: ["static-token-123456"] });
  await using h = await oauthHarness();
  const bearer = httpEntry("bearer", rs.url, null, {
    Authorization: "Bearer static-token-123456",
  });
  const stdio = stdioEntry("local", "true", [], { timeoutSeconds: 30 });
  const runtime = createOAuthRuntime([bearer, stdio], {
    log: h.logger.child("test"),
    store: h.store,
  });
  assert.equal(runtime, undefined, "no OAuth runtime, hence no callback listener");
  // Port 3000 held by someone else all along: a bearer server connects regardless.
  await using _holder = await holdPort(CALLBACK_PORT);
  const transport = new StreamableHTTPClientTransport(new URL(rs.url), {
    requestInit: { headers: bearer.headers },
    fetch: bearerFetch(bearer),
  });
  const client = new Client({ name: "t", version: "0" });
  await client.connect(transport);
  assert.equal((await client.listTools()).tools.length, 4);
  await transport.terminateSession().catch(() => {});
  await client.close();
});

Deno.test("OAuth tokens, codes and client secrets never reach the log, even at debug", async () => {
  const clock = movableClock();
  await using session = await loggedIn({ accessTokenSeconds: 60 }, {}, clock.now);
  const { as, h, connection } = session;
  const first = (await h.store.load("protected"))!.issuers[as.issuer];
  // The server echoes the token and logs go through the refresh path as well.
  const echoed = await connection.call("token_echo");
  h.logger.child("test").debug("tool result", { text: echoed, tokens: first.tokens });
  clock.advance(61_000); // expired for the provider: the next call refreshes
  await connection.call("echo", { text: "x" });
  const latest = (await h.store.load("protected"))!.issuers[as.issuer];

  const log = await Deno.readTextFile(h.logFile);
  assert.match(log, /\[REDACTED\]/, "the secrets were logged, redacted");
  const secrets = [
    first.tokens!.access_token,
    first.tokens!.refresh_token!,
    latest.tokens!.access_token,
    latest.tokens!.refresh_token!,
    ...as.log.token.map((t) => t.params.get("code")).filter((c): c is string => c !== null),
    ...as.log.token.map((t) => t.params.get("code_verifier")).filter((c): c is string => !!c),
  ];
  for (const secret of secrets) assert.ok(!log.includes(secret), `leaked ${secret.slice(0, 6)}…`);
});

Deno.test("CLI: auth login with $BROWSER, auth list without secrets, auth logout", async () => {
  await using as = startAuthorizationServer({ scopesSupported: ["mcp"] });
  await using rs = startProtectedMcpServer({ authorizationServer: as, requiredScopes: ["mcp"] });
  const fakeBrowserCli = new URL("../support/fake_browser_cli.ts", import.meta.url).pathname;
  await using box = await sandbox({ BROWSER: `${DENO} run --allow-net ${fakeBrowserCli}` });
  const configPath = await writeConfig(
    box,
    configWith({ prot: { url: rs.url, auth: { method: "oauth" } }, local: { command: "true" } }),
  );
  const patchbay = (...args: string[]) => runPatchbay(box, ["--config", configPath, ...args]);

  const login = await patchbay("auth", "login", "prot");
  assert.equal(login.code, 0, login.stderr);
  assert.match(login.stderr, /Authorize patchbay for 'prot' in your browser to log in/);
  assert.match(login.stderr, /open this URL by hand:\n {2}http:\/\/127\.0\.0\.1:\d+\/authorize\?/);
  assert.match(
    login.stdout,
    /Logged in to 'prot' \(issuer http:\/\/127\.0\.0\.1:\d+, token expires in/,
  );

  const dir = join(box.home, ".config", "patchbay", "oauth");
  const [file] = [...Deno.readDirSync(dir)].map((entry) => join(dir, entry.name));
  assert.equal(Deno.statSync(file).mode! & 0o777, 0o600);
  const stored = JSON.parse(Deno.readTextFileSync(file));
  const tokens = stored.issuers[as.issuer].tokens;

  const list = await patchbay("auth", "list");
  assert.equal(list.code, 0, list.stderr);
  assert.match(
    list.stdout,
    /prot\s+logged in\s+http:\/\/127\.0\.0\.1:\d+\s+in (59|60) min, refreshable\s+mcp/,
  );
  const json = JSON.parse((await patchbay("auth", "list", "--json")).stdout);
  assert.equal(json.logins[0].state, "logged_in");
  assert.deepEqual(json.logins[0].scopes, ["mcp"]);
  for (const output of [login.stdout + login.stderr, list.stdout, JSON.stringify(json)]) {
    assert.ok(!output.includes(tokens.access_token) && !output.includes(tokens.refresh_token));
  }

  const again = await patchbay("auth", "login", "prot");
  assert.match(again.stdout, /Already logged in to 'prot'/);
  assert.equal(as.log.authorize.length, 1);

  const wrong = await patchbay("auth", "logout", "prat");
  assert.equal(wrong.code, 2);
  assert.match(wrong.stderr, /no OAuth server named 'prat' \(did you mean 'prot'\?\)/);
  const notOAuth = await patchbay("auth", "login", "local");
  assert.equal(notOAuth.code, 1);
  assert.match(notOAuth.stderr, /'local' does not use OAuth/);

  const out = await patchbay("auth", "logout", "prot");
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, /Logged out of 'prot': tokens revoked at the authorization server/);
  assert.equal(as.log.revoke.length, 2);
  assert.deepEqual([...Deno.readDirSync(dir)], []);
  assert.match((await patchbay("auth", "list")).stdout, /prot\s+not logged in/);
});

// ── discovery and registration variants ──────────────────────────────────────────────

Deno.test("discovery: path-based, then root protected-resource metadata when there is no hint", async () => {
  await using as = startAuthorizationServer();
  await using h = await oauthHarness();
  for (const metadataAt of ["path", "root"] as const) {
    await using rs = startProtectedMcpServer({ authorizationServer: as, metadataAt });
    const entry = httpEntry(`by-${metadataAt}`, rs.url);
    assert.equal(await h.runtime([entry]).providerFor(entry)!.ensureLogin(), "authorized");
    const wellKnown = rs.requests.filter((r) => r.path.startsWith("/.well-known/"))
      .map((r) => `${r.path} ${r.status}`);
    assert.deepEqual(
      wellKnown.slice(0, metadataAt === "path" ? 1 : 2),
      metadataAt === "path" ? ["/.well-known/oauth-protected-resource/mcp 200"] : [
        "/.well-known/oauth-protected-resource/mcp 404",
        "/.well-known/oauth-protected-resource 200",
      ],
    );
  }
});

Deno.test("discovery: OpenID metadata under an issuer path; scopes from scopes_supported", async () => {
  await using as = startAuthorizationServer({ metadataStyle: "openid", issuerPath: "/tenant" });
  await using rs = startProtectedMcpServer({
    authorizationServer: as,
    scopesSupported: ["files:read", "files:write"],
  });
  await using h = await oauthHarness();
  const entry = httpEntry("oidc", rs.url);
  assert.equal(await h.runtime([entry]).providerFor(entry)!.ensureLogin(), "authorized");
  assert.equal(as.issuer.endsWith("/tenant"), true);
  assert.equal(as.log.authorize[0].get("scope"), "files:read files:write");
  assert.equal((await h.store.load("oidc"))?.issuer, as.issuer);
});

Deno.test("discovery: metadata whose issuer does not match is refused (RFC 8414 §3.3)", async () => {
  await using as = startAuthorizationServer({ issuerClaim: "https://impostor.example" });
  await using rs = startProtectedMcpServer({ authorizationServer: as, checkAudience: false });
  await using h = await oauthHarness();
  const entry = httpEntry("mismatch", rs.url);
  const error = await h.loginError(entry);
  assert.ok(error instanceof OAuthFailedError, String(error));
  assert.match(error.reason, /names issuer "https:\/\/impostor.example"/);
  assert.equal(as.log.register.length + as.log.authorize.length, 0);
});

Deno.test("discovery: a server publishing another resource's metadata is refused", async () => {
  await using as = startAuthorizationServer();
  await using rs = startProtectedMcpServer({
    authorizationServer: as,
    resourceClaim: "https://other.example/mcp",
  });
  await using h = await oauthHarness();
  const entry = httpEntry("wrong-resource", rs.url);
  const error = await h.loginError(entry);
  assert.ok(error instanceof OAuthFailedError, String(error));
  assert.match(error.reason, /other\.example.*RFC 9728/);
});

Deno.test("PKCE: an authorization server that does not advertise S256 is refused", async () => {
  for (const methods of [null, ["plain"]]) {
    await using as = startAuthorizationServer({ codeChallengeMethods: methods });
    await using rs = startProtectedMcpServer({ authorizationServer: as });
    await using h = await oauthHarness();
    const entry = httpEntry("no-pkce", rs.url);
    const error = await h.loginError(entry);
    assert.ok(error instanceof OAuthFailedError, String(error));
    assert.match(error.reason, /does not advertise PKCE with S256/);
    assert.equal(as.log.register.length + as.log.authorize.length, 0, "nothing was sent");
  }
});

Deno.test("registration order: pre-registered client, then metadata document, then DCR", async () => {
  await using h = await oauthHarness();
  // 1. client_id/client_secret from the entry: no registration, client_secret_basic.
  {
    await using as = startAuthorizationServer({
      clientIdMetadataDocuments: true,
      clients: [{
        client_id: "pre-registered",
        client_secret: "pre-secret-value",
        redirect_uris: ["http://localhost:3000/callback"],
      }],
    });
    await using rs = startProtectedMcpServer({ authorizationServer: as });
    const entry = httpEntry("pre", rs.url, {
      clientId: "pre-registered",
      clientSecret: "pre-secret-value",
      clientMetadataUrl: "https://patchbay.example/client.json",
    });
    assert.equal(await h.runtime([entry]).providerFor(entry)!.ensureLogin(), "authorized");
    assert.equal(as.log.register.length, 0);
    assert.equal(as.log.authorize[0].get("client_id"), "pre-registered");
    assert.equal(as.log.token[0].clientAuth, "basic");
  }
  // 2. A client ID metadata document when the server accepts them.
  {
    await using as = startAuthorizationServer({ clientIdMetadataDocuments: true });
    await using rs = startProtectedMcpServer({ authorizationServer: as });
    const entry = httpEntry("cimd", rs.url, {
      clientMetadataUrl: "https://patchbay.example/client.json",
    });
    assert.equal(await h.runtime([entry]).providerFor(entry)!.ensureLogin(), "authorized");
    assert.equal(as.log.register.length, 0);
    assert.equal(as.log.authorize[0].get("client_id"), "https://patchbay.example/client.json");
  }
  // 3. Dynamic registration when it does not, even with a metadata URL configured.
  {
    await using as = startAuthorizationServer();
    await using rs = startProtectedMcpServer({ authorizationServer: as });
    const entry = httpEntry("dcr", rs.url, {
      clientMetadataUrl: "https://patchbay.example/client.json",
    });
    assert.equal(await h.runtime([entry]).providerFor(entry)!.ensureLogin(), "authorized");
    assert.equal(as.log.register.length, 1);
  }
  // 4. None of them: a clear error, nothing sent.
  {
    await using as = startAuthorizationServer({ registration: false });
    await using rs = startProtectedMcpServer({ authorizationServer: as });
    const entry = httpEntry("stuck", rs.url);
    const error = await h.loginError(entry);
    assert.ok(error instanceof OAuthFailedError);
    assert.match(error.reason, /offers no way for patchbay to register/);
    assert.match(error.remedy, /"client_id"/);
    assert.equal(as.log.authorize.length, 0);
  }
});

Deno.test("a server without OAuth support: Session terminated, remove auth; use headers", async () => {
  await using rs = startProtectedMcpServer({ noOAuth: true });
  await using h = await oauthHarness();
  const entry = httpEntry("plain", rs.url);
  const provider = h.runtime([entry]).providerFor(entry)!;
  for (const attempt of [() => provider.ensureLogin(), () => connectWith(rs.url, provider)]) {
    const error = await attempt().then(() => undefined, (e) => e);
    assert.ok(error instanceof OAuthUnsupportedError, String(error));
    assert.ok(error instanceof ServerConnectError);
    assert.equal(error.message, "Failed to connect to server 'plain': Session terminated");
    assert.equal(error.remedy, ROWS.oauth_unsupported.remedy.repl);
    assert.match(error.reason, /publishes no OAuth metadata/);
  }
  assert.equal(h.browser.opened.length, 0);
});

Deno.test("ensureLogin: a wrong URL or a failing server is named as such, not as OAuth", async () => {
  await using as = startAuthorizationServer();
  await using rs = startProtectedMcpServer({ authorizationServer: as });
  await using h = await oauthHarness();
  const wrongPath = httpEntry("typo", rs.url.replace("/mcp", "/mpc"));
  const error = await h.loginError(wrongPath);
  assert.ok(error instanceof ServerConnectError && !(error instanceof OAuthUnsupportedError));
  assert.match(error.reason, /answered HTTP 404: there is no MCP endpoint/);
  assert.equal(error.remedy, ROWS.wrong_address.remedy.repl);

  const closed = httpEntry("down", `http://127.0.0.1:${freePort()}/mcp`);
  const down = await h.loginError(closed);
  assert.ok(down instanceof ServerConnectError, String(down));
  assert.match(down.reason, /could not be reached/);
  assert.equal(down.remedy, ROWS.not_running.remedy.repl);
  assert.equal(h.browser.opened.length, 0);
});

Deno.test("discovery: an HTML page where OAuth metadata should be is named as such", async () => {
  // A web app answering every path with its page, and 401 on the MCP endpoint.
  const site = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request) =>
      new URL(request.url).pathname === "/mcp"
        ? new Response("login required", { status: 401 })
        : new Response("<html>app</html>", { headers: { "content-type": "text/html" } }),
  );
  try {
    await using h = await oauthHarness();
    const entry = httpEntry("webapp", `http://127.0.0.1:${site.addr.port}/mcp`);
    const error = await h.loginError(entry);
    assert.ok(error instanceof OAuthFailedError, String(error));
    // The document named by its address, and what is wrong with it.
    assert.match(
      error.reason,
      new RegExp(
        `^the OAuth metadata at http://127\\.0\\.0\\.1:${site.addr.port}/\\.well-known/` +
          "oauth-authorization-server is not JSON \\(Unexpected token '<'",
      ),
    );
    assert.match(error.remedy, /remove "auth"/);
  } finally {
    await site.shutdown();
  }
});

/** A node process listening on 127.0.0.1:`port` until disposed. */
async function holdPort(port: number) {
  const child = new Deno.Command("node", {
    args: [
      "-e",
      `require("net").createServer().listen(${port}, "127.0.0.1", () => console.log("ready"))`,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.getReader();
  const { value } = await reader.read();
  assert.match(new TextDecoder().decode(value), /ready/);
  reader.releaseLock();
  return {
    pid: child.pid,
    async [Symbol.asyncDispose]() {
      child.kill("SIGTERM");
      await child.status;
      await child.stdout.cancel().catch(() => {});
    },
  };
}
