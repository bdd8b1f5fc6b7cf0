/**
 * A remote MCP server cannot aim patchbay's OAuth requests at this
 * machine or its network (lib/oauth/endpoint_policy.ts).
 *
 * The remote server is an https server on loopback answering for made-up `*.example.test`
 * names with a certificate from a test CA, reached through the loopback test proxy
 * (tests/support/remote_oauth.ts): to patchbay it is `https://mcp.example.test/mcp`, not on
 * loopback. In process, a resolver seam says where each name is; the command-line tests
 * leave the names unresolvable, as on a machine behind a proxy. Every hostile endpoint is a
 * real listener that counts what reaches it: the tests show it gets nothing, before any
 * browser opens. Control cases show the same stand-in delivers the requests a legitimate
 * remote setup calls for, so those zeros mean something.
 *
 * Port 3000: no test here should bind it (every refusal comes before a browser login, and
 * the control cases run without one), but the command-line tests start patchbay with OAuth
 * entries, so this file runs under the port-3000 lock with the other OAuth tests.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  OAuthEndpointRefusedError,
  OAuthFailedError,
  OAuthLoginRequiredError,
} from "../../lib/errors.ts";
import type { HttpServerConfig } from "../../lib/config/types.ts";
import { Logger } from "../../lib/log/log.ts";
import { EndpointPolicy, type EndpointRole } from "../../lib/oauth/endpoint_policy.ts";
import { classifyAddress } from "../../lib/oauth/host_location.ts";
import {
  type FetchedDocument,
  guardedFetch,
  MAX_WITNESSED_BYTES,
} from "../../lib/oauth/guarded_fetch.ts";
import { createOAuthRuntime, FileTokenStore, logout } from "../../lib/oauth/mod.ts";
import { emptyCredentials } from "../../lib/oauth/token_store.ts";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { DENO } from "../support/deps.ts";
import { runDoctor } from "../support/doctor.ts";
import { fakeBrowser } from "../support/fake_browser.ts";
import { httpEntry, requireFreeCallbackPort } from "../support/oauth_harness.ts";
import {
  REMOTE_ISSUER,
  REMOTE_MCP_URL,
  type RemoteOAuth,
  startLoopbackListener,
  startRemoteOAuth,
  testResolver,
} from "../support/remote_oauth.ts";
import { tempDir } from "../support/temp_dir.ts";

await requireFreeCallbackPort();

const FAKE_BROWSER_CLI = new URL("../support/fake_browser_cli.ts", import.meta.url).pathname;

/** Longest a refusal may take to arrive before the test gives up on it (not a timing claim). */
const REFUSAL_WAIT_MS = 30_000;

const TOKEN: EndpointRole = {
  name: "token_endpoint",
  source: "in the authorization server's metadata",
  credentials: true,
};
const REGISTRATION: EndpointRole = {
  name: "registration_endpoint",
  source: "in the authorization server's metadata",
};

// ── the rule, address by address ─────────────────────────────────────────────────────────

Deno.test("address kinds: loopback, private, link-local, metadata, and IPv6 forms of IPv4", () => {
  const cases: Array<[string, string | undefined]> = [
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["0.0.0.0", "loopback"],
    ["::1", "loopback"],
    ["::", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "private"],
    ["fd12:3456::1", "private"],
    ["169.254.1.1", "link_local"],
    ["fe80::1", "link_local"],
    ["169.254.169.254", "metadata"],
    ["169.254.170.2", "metadata"],
    ["100.100.100.200", "metadata"],
    ["fd00:ec2::254", "metadata"],
    // IPv6 carrying an IPv4 address counts as that address.
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["[::ffff:a9fe:a9fe]", "metadata"],
    ["::ffff:10.0.0.1", "private"],
    ["64:ff9b::7f00:1", "loopback"],
    ["2002:7f00:1::", "loopback"],
    ["::127.0.0.1", "loopback"],
    ["224.0.0.1", "reserved"],
    ["255.255.255.255", "reserved"],
    ["ff02::1", "reserved"],
    ["93.184.215.14", "public"],
    ["172.32.0.1", "public"],
    ["2606:4700::1111", "public"],
    ["::ffff:8.8.8.8", "public"],
    ["localhost", undefined],
    ["1::2::3", undefined],
    ["1.2.3", undefined],
  ];
  for (const [address, kind] of cases) assert.equal(classifyAddress(address), kind, address);
});

Deno.test("the rule: a remote server may not name this machine or its network; a local one may", async () => {
  const resolve = testResolver({
    "rebind.example.test": ["93.184.215.20", "127.0.0.1"],
    "intranet.example.test": ["10.20.30.40"],
    "lan-mcp.example.test": ["192.168.1.5"],
  });
  const remote = new EndpointPolicy({ server: "r", serverUrl: REMOTE_MCP_URL, resolve });
  const cases: Array<[string, EndpointRole, boolean]> = [
    ["https://auth.example.test/token", TOKEN, true],
    // Unresolvable here (a proxy resolves it): judged by its name, which is public.
    ["https://sso.unknown.test/token", TOKEN, true],
    ["http://127.0.0.1:4000/register", REGISTRATION, false],
    ["https://127.0.0.1/register", REGISTRATION, false],
    ["https://localhost/register", REGISTRATION, false],
    ["https://app.localhost/register", REGISTRATION, false],
    // The URL parser's forms of 127.0.0.1: decimal, hexadecimal, shortened, mapped.
    ["https://2130706433/register", REGISTRATION, false],
    ["https://0x7f.1/register", REGISTRATION, false],
    ["https://127.1/register", REGISTRATION, false],
    ["https://[::ffff:127.0.0.1]/register", REGISTRATION, false],
    ["https://[::1]/register", REGISTRATION, false],
    ["https://0.0.0.0/register", REGISTRATION, false],
    ["https://10.0.0.8/token", TOKEN, false],
    ["https://intranet.example.test/token", TOKEN, false],
    // One loopback address among public ones is enough.
    ["https://rebind.example.test/token", TOKEN, false],
    ["https://169.254.169.254/latest/meta-data/", REGISTRATION, false],
    ["https://metadata.google.internal/computeMetadata/v1/", REGISTRATION, false],
    ["http://auth.example.test/token", TOKEN, false],
    ["file:///etc/passwd", REGISTRATION, false],
    ["javascript:alert(1)", REGISTRATION, false],
  ];
  for (const [url, role, allowed] of cases) {
    assert.equal((await remote.verdict(url, role)).allowed, allowed, url);
  }

  // A server on this machine: its authorization server may be here or on the network,
  // over plain http only on loopback (and credentials only to a loopback name or literal).
  const local = new EndpointPolicy({
    server: "l",
    serverUrl: "http://127.0.0.1:8080/mcp",
    resolve,
  });
  assert.ok((await local.verdict("http://127.0.0.1:9000/token", TOKEN)).allowed);
  assert.ok((await local.verdict("http://localhost:9000/register", REGISTRATION)).allowed);
  assert.ok((await local.verdict("https://intranet.example.test/token", TOKEN)).allowed);
  assert.ok(!(await local.verdict("http://127.0.0.2:9000/token", TOKEN)).allowed);
  assert.ok(!(await local.verdict("https://169.254.169.254/", REGISTRATION)).allowed);
  // A server on the network: the network, not this machine.
  const lan = new EndpointPolicy({
    server: "n",
    serverUrl: "https://lan-mcp.example.test/mcp",
    resolve,
  });
  assert.ok((await lan.verdict("https://intranet.example.test/token", TOKEN)).allowed);
  assert.ok(!(await lan.verdict("https://127.0.0.1/token", TOKEN)).allowed);
  // Its own host, as configured, whatever its address; plain http there when it is http.
  const plain = new EndpointPolicy({
    server: "p",
    serverUrl: "http://lan-mcp.example.test:8080/mcp",
    resolve,
  });
  assert.ok(
    (await plain.verdict("http://lan-mcp.example.test:8080/.well-known/x", REGISTRATION)).allowed,
  );
  // …but the SDK sends no token over plain http off loopback, so neither is it accepted.
  assert.ok(!(await plain.verdict("http://lan-mcp.example.test:8080/token", TOKEN)).allowed);
});

Deno.test("the refusal names the endpoint, the address it resolved to, why, and the remedy", async () => {
  const policy = new EndpointPolicy({
    server: "remote",
    serverUrl: REMOTE_MCP_URL,
    resolve: testResolver({ "rebind.example.test": ["127.0.0.1"] }),
  });
  const error = await policy.check("https://rebind.example.test/register", REGISTRATION).then(
    () => undefined,
    (e) => e,
  );
  assert.ok(error instanceof OAuthEndpointRefusedError, String(error));
  assert.equal(error.message, "OAuth authentication failed for server 'remote'");
  assert.equal(error.endpoint, "registration_endpoint");
  assert.deepEqual(error.addresses, ["127.0.0.1"]);
  assert.equal(
    error.reason,
    "the registration_endpoint in the authorization server's metadata, " +
      "https://rebind.example.test/register, is on a loopback address (rebind.example.test " +
      "resolves to 127.0.0.1), but the MCP server https://mcp.example.test/mcp is on a public " +
      "address (mcp.example.test resolves to 93.184.215.14); patchbay sends no request that a " +
      "server's metadata aims at this machine or its network",
  );
  assert.match(error.remedy, /misconfigured or hostile: do not log in/);
  assert.match(
    error.remedy,
    /add "rebind\.example\.test" to auth\.allow_internal_hosts in the entry for 'remote'/,
  );
  // A metadata address is never an endpoint: no escape hatch is offered.
  const metadata = await policy.check("https://169.254.169.254/", REGISTRATION).catch((e) => e);
  assert.match(
    metadata.reason,
    /is on a cloud metadata address \(169\.254\.169\.254\), where no OAuth endpoint is/,
  );
  assert.doesNotMatch(metadata.remedy, /allow_internal_hosts/);
});

Deno.test("auth.allow_internal_hosts: the listed host passes the address rule, nothing else does", async () => {
  const policy = new EndpointPolicy({
    server: "remote",
    serverUrl: REMOTE_MCP_URL,
    allowInternalHosts: ["Intranet.Example.Test", "[::1]"],
    resolve: testResolver({
      "intranet.example.test": ["10.20.30.40"],
      "other.example.test": ["10.20.30.41"],
    }),
  });
  assert.ok((await policy.verdict("https://intranet.example.test/token", TOKEN)).allowed);
  assert.ok((await policy.verdict("https://[::1]:8443/token", TOKEN)).allowed);
  assert.ok(!(await policy.verdict("https://other.example.test/token", TOKEN)).allowed);
  // The scheme rules still hold for a listed host.
  assert.ok(!(await policy.verdict("http://intranet.example.test/token", TOKEN)).allowed);
  assert.ok(!(await policy.verdict("file://intranet.example.test/x", REGISTRATION)).allowed);
});

Deno.test("guarded fetch: redirects are followed within the rule, POST turns GET on 303, credentials stay in their origin", async () => {
  const seen: string[] = [];
  await using other = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    seen.push(
      `other ${req.method} ${new URL(req.url).pathname} ${req.headers.get("authorization")}`,
    );
    return Response.json({ ok: true });
  });
  await using first = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const path = new URL(req.url).pathname;
    seen.push(`first ${req.method} ${path} ${req.headers.get("authorization")}`);
    if (path === "/see-other") {
      return new Response(null, { status: 303, headers: { location: "/landed" } });
    }
    if (path === "/elsewhere") {
      return new Response(null, {
        status: 307,
        headers: { location: `http://127.0.0.1:${other.addr.port}/moved` },
      });
    }
    if (path === "/to-metadata") {
      return new Response(null, {
        status: 302,
        headers: { location: "https://169.254.169.254/latest/meta-data/" },
      });
    }
    return Response.json({ path });
  });
  const base = `http://127.0.0.1:${first.addr.port}`;
  const policy = new EndpointPolicy({ server: "local", serverUrl: `${base}/mcp` });
  const guarded = guardedFetch((input, init) => fetch(input, init), { policy });

  const landed = await guarded(new URL(`${base}/see-other`), {
    method: "POST",
    body: "x=1",
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  assert.deepEqual(await landed.json(), { path: "/landed" });
  const moved = await guarded(new URL(`${base}/elsewhere`), {
    method: "POST",
    body: "y=2",
    headers: { authorization: "Bearer abc123DEF456" },
  });
  assert.deepEqual(await moved.json(), { ok: true });
  assert.deepEqual(seen, [
    "first POST /see-other null",
    "first GET /landed null",
    "first POST /elsewhere Bearer abc123DEF456",
    "other POST /moved null",
  ]);
  const refused = await guarded(new URL(`${base}/to-metadata`)).then(() => undefined, (e) => e);
  assert.ok(refused instanceof OAuthEndpointRefusedError, String(refused));
  assert.equal(refused.endpoint, "redirect");
  assert.match(
    refused.reason,
    /^the redirect from http:\/\/127\.0\.0\.1:\d+\/to-metadata \(HTTP 302\)/,
  );
});

Deno.test("guarded fetch: an event stream is handed on unread; a large document reaches its reader whole", async () => {
  const large = JSON.stringify({ padding: "x".repeat(MAX_WITNESSED_BYTES) });
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    if (new URL(req.url).pathname === "/large") return Response.json(JSON.parse(large));
    // An event stream that never ends: reading it whole would never return.
    let timer: ReturnType<typeof setInterval> | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        timer = setInterval(() => controller.enqueue(new TextEncoder().encode(": ping\n\n")), 50);
      },
      cancel() {
        clearInterval(timer);
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  const base = `http://127.0.0.1:${server.addr.port}`;
  const seen: FetchedDocument[] = [];
  const guarded = guardedFetch((input, init) => fetch(input, init), {
    policy: new EndpointPolicy({ server: "local", serverUrl: `${base}/mcp` }),
    onResponse: (document) => seen.push(document),
  });
  const stream = await guarded(new URL(`${base}/mcp`), {
    headers: { accept: "text/event-stream" },
  });
  const reader = stream.body!.getReader();
  assert.match(new TextDecoder().decode((await reader.read()).value), /: ping/);
  await reader.cancel();
  const document = await guarded(new URL(`${base}/large`));
  assert.equal((await document.text()).length, large.length);
  assert.deepEqual(
    seen.map((s) => [new URL(s.url).pathname, s.json]),
    [["/mcp", undefined], ["/large", undefined]],
    "neither was kept",
  );
});

// ── a hostile remote server, in process ──────────────────────────────────────────────────

/** A runtime whose OAuth requests go through the remote stand-in's proxy. */
async function remoteRuntime(
  remote: RemoteOAuth,
  options: {
    entry?: HttpServerConfig;
    resolve?: (host: string) => Promise<string[]>;
    interactive?: boolean;
  } = {},
) {
  const folder = await tempDir("patchbay-ssrf-");
  const dir = folder.path;
  const logger = new Logger({ file: join(dir, "patchbay.log"), level: "debug" });
  const store = new FileTokenStore({ dir: join(dir, "oauth") });
  // The browser goes through the same proxy: on a patchbay without the rule, a login
  // would complete and reach the token request.
  const browser = fakeBrowser({ fetch: (url, init) => remote.fetch(url, init) });
  const entry = options.entry ?? httpEntry("remote", REMOTE_MCP_URL);
  const runtime = createOAuthRuntime([entry], {
    log: logger.child("test"),
    redactor: logger.redactor,
    store,
    opener: browser.opener,
    fetch: remote.fetch,
    resolve: options.resolve ?? testResolver(),
    interactive: options.interactive,
    timeoutMs: REFUSAL_WAIT_MS,
  })!;
  const provider = runtime.providerFor(entry)!;
  return {
    provider,
    browser,
    store,
    dir,
    /** ensureLogin's outcome or error, waited for at most REFUSAL_WAIT_MS. */
    async login(): Promise<unknown> {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no outcome of the login within ${REFUSAL_WAIT_MS} ms`)),
          REFUSAL_WAIT_MS,
        );
      });
      try {
        return await Promise.race([provider.ensureLogin(), late]).catch((e) => e);
      } finally {
        clearTimeout(timer);
      }
    },
    async [Symbol.asyncDispose]() {
      await browser.settled();
      await runtime.close();
      logger.close();
      await folder[Symbol.asyncDispose]();
    },
  };
}

for (const field of ["registration_endpoint", "token_endpoint"] as const) {
  Deno.test(`a remote server's ${field} on loopback: refused before any request, no browser`, async () => {
    await using listener = startLoopbackListener();
    await using remote = await startRemoteOAuth({
      metadata: {
        [field]: `${listener.origin}/${field === "token_endpoint" ? "token" : "register"}`,
      },
    });
    await using r = await remoteRuntime(remote);
    const error = await r.login();
    assert.ok(error instanceof OAuthEndpointRefusedError, String(error));
    assert.equal(error.endpoint, field);
    assert.deepEqual(error.addresses, ["127.0.0.1"]);
    assert.match(
      error.reason,
      new RegExp(
        `^the ${field} in the authorization server's metadata, ${listener.origin}/\\w+, is ` +
          "on a loopback address \\(127\\.0\\.0\\.1\\), but the MCP server " +
          "https://mcp\\.example\\.test/mcp is on a public address",
      ),
    );
    assert.deepEqual(listener.requests, [], "nothing reached the loopback listener");
    assert.deepEqual(r.browser.opened, [], "no browser opened");
    // Discovery happened (that is where the endpoints were learnt); nothing after it.
    assert.ok(
      remote.requests.includes("GET auth.example.test/.well-known/oauth-authorization-server"),
    );
    assert.ok(!remote.requests.some((line) => /\/(register|authorize|token)$/.test(line)));
    assert.equal(await r.store.load("remote"), undefined, "nothing was stored");
  });
}

Deno.test("a plain-http token endpoint is refused before the browser opens, not after the login", async () => {
  await using remote = await startRemoteOAuth({
    metadata: { token_endpoint: "http://auth.example.test/token" },
  });
  await using r = await remoteRuntime(remote);
  const error = await r.login();
  assert.ok(error instanceof OAuthEndpointRefusedError, String(error));
  assert.equal(error.endpoint, "token_endpoint");
  assert.match(
    error.reason,
    /^the token_endpoint in the authorization server's metadata, http:\/\/auth\.example\.test\/token, is plain http on a public address .*OAuth endpoints must use https/,
  );
  assert.match(error.remedy, /serve the authorization server over https/);
  assert.deepEqual(r.browser.opened, []);
  assert.ok(!remote.requests.some((line) => /\/(register|authorize|token)$/.test(line)));
});

Deno.test("a public name that resolves to 127.0.0.1 is a loopback endpoint", async () => {
  await using remote = await startRemoteOAuth({
    metadata: { registration_endpoint: "https://rebind.example.test/register" },
  });
  await using r = await remoteRuntime(remote, {
    resolve: testResolver({ "rebind.example.test": ["127.0.0.1"] }),
  });
  const error = await r.login();
  assert.ok(error instanceof OAuthEndpointRefusedError, String(error));
  assert.match(error.reason, /rebind\.example\.test resolves to 127\.0\.0\.1/);
  assert.ok(!remote.requests.some((line) => line.includes("rebind.example.test")));
  assert.ok(!remote.proxy.requestLines.some((line) => line.includes("rebind.example.test")));
});

Deno.test("resource_metadata in WWW-Authenticate: a private or metadata address is never fetched", async () => {
  for (
    const [hint, pattern] of [
      [
        "https://intranet.example.test/prm",
        /on a private-network address \(intranet\.example\.test resolves to 10\.20\.30\.40\)/,
      ],
      [
        "https://169.254.169.254/latest/meta-data/",
        /on a cloud metadata address \(169\.254\.169\.254\)/,
      ],
      ["file:///etc/passwd", /uses the scheme file:/],
    ] as const
  ) {
    await using remote = await startRemoteOAuth({ resourceMetadata: hint });
    await using r = await remoteRuntime(remote, {
      resolve: testResolver({ "intranet.example.test": ["10.20.30.40"] }),
    });
    const error = await r.login();
    assert.ok(error instanceof OAuthEndpointRefusedError, `${hint}: ${error}`);
    assert.equal(error.endpoint, "resource_metadata URL");
    assert.match(
      error.reason,
      /^the resource_metadata URL in the server's WWW-Authenticate challenge/,
    );
    assert.match(error.reason, pattern);
    // Only the probe of the server itself was sent.
    assert.deepEqual(remote.requests, ["POST mcp.example.test/mcp"], hint);
    assert.deepEqual(r.browser.opened, []);
  }
});

Deno.test("a file: authorization endpoint is refused at once, not waited on", async () => {
  await using remote = await startRemoteOAuth({
    metadata: { authorization_endpoint: "file:///etc/passwd" },
  });
  await using r = await remoteRuntime(remote);
  // login() gives up after REFUSAL_WAIT_MS, far below the 5-minute callback timeout a
  // login waiting on a page that never opens would take.
  const error = await r.login();
  assert.ok(error instanceof OAuthEndpointRefusedError, String(error));
  assert.equal(error.endpoint, "authorization_endpoint");
  assert.match(error.reason, /file:\/\/\/etc\/passwd, uses the scheme file:/);
  assert.deepEqual(r.browser.opened, []);
  assert.ok(!remote.requests.some((line) => line.endsWith("/register")), "no registration");
});

Deno.test("a redirect from the remote server to loopback is not followed", async () => {
  await using listener = startLoopbackListener();
  await using remote = await startRemoteOAuth({
    mcpAnswer: () =>
      new Response(null, { status: 307, headers: { location: `${listener.origin}/mcp` } }),
  });
  await using r = await remoteRuntime(remote);
  const error = await r.login();
  assert.ok(error instanceof OAuthEndpointRefusedError, String(error));
  assert.equal(error.endpoint, "redirect");
  assert.match(error.reason, /^the redirect from https:\/\/mcp\.example\.test\/mcp \(HTTP 307\)/);
  assert.deepEqual(listener.requests, []);
});

Deno.test("invalid metadata is reported with the field and the value seen", async () => {
  await using remote = await startRemoteOAuth({
    metadata: { authorization_endpoint: 42, response_types_supported: "code" },
  });
  await using r = await remoteRuntime(remote);
  const error = await r.login();
  assert.ok(error instanceof OAuthFailedError, String(error));
  assert.match(
    error.reason,
    /^the OAuth metadata at https:\/\/auth\.example\.test\/\.well-known\/oauth-authorization-server is not valid OAuth metadata: /,
  );
  assert.match(error.reason, /authorization_endpoint is 42 \(/);
  assert.match(error.reason, /response_types_supported is "code" \(/);
  assert.doesNotMatch(error.reason, /\(\[\)/);
});

Deno.test("control: a remote server whose endpoints are remote gets its registration", async () => {
  await using remote = await startRemoteOAuth();
  await using r = await remoteRuntime(remote, { interactive: false });
  const error = await r.login();
  // The doctor's stop: everything a login does before the browser was done.
  assert.ok(error instanceof OAuthLoginRequiredError, String(error));
  assert.ok(
    remote.requests.includes("POST auth.example.test/register"),
    remote.requests.join("\n"),
  );
  assert.equal((await r.store.load("remote"))?.discovery?.authorizationServerUrl, REMOTE_ISSUER);
});

Deno.test("auth.allow_internal_hosts lets the entry's own internal authorization server through", async () => {
  await using remote = await startRemoteOAuth({
    metadata: { registration_endpoint: "https://intranet.example.test/register" },
  });
  const resolve = testResolver({ "intranet.example.test": ["10.20.30.40"] });
  {
    await using refused = await remoteRuntime(remote, { resolve, interactive: false });
    assert.ok(await refused.login() instanceof OAuthEndpointRefusedError);
    assert.ok(!remote.requests.some((line) => line.startsWith("POST intranet.example.test")));
  }
  const entry = httpEntry("remote", REMOTE_MCP_URL, {
    allowInternalHosts: ["intranet.example.test"],
  });
  await using r = await remoteRuntime(remote, { entry, resolve, interactive: false });
  const outcome = await r.login();
  assert.ok(
    outcome instanceof OAuthLoginRequiredError,
    `${outcome} ${(outcome as OAuthFailedError).reason}`,
  );
  assert.ok(
    remote.requests.includes("POST intranet.example.test/register"),
    remote.requests.join("\n"),
  );
});

/** A login as an older patchbay stored it: discovery naming the listener's endpoints. */
function olderLogin(listenerOrigin: string) {
  const record = emptyCredentials("remote", REMOTE_MCP_URL);
  record.issuer = REMOTE_ISSUER;
  record.discovery = {
    authorizationServerUrl: REMOTE_ISSUER,
    authorizationServerMetadata: {
      issuer: REMOTE_ISSUER,
      authorization_endpoint: `${REMOTE_ISSUER}/authorize`,
      token_endpoint: `${listenerOrigin}/token`,
      revocation_endpoint: `${listenerOrigin}/revoke`,
      response_types_supported: ["code"],
      code_challenge_methods_supported: ["S256"],
    },
  };
  record.issuers[REMOTE_ISSUER] = {
    client: { client_id: "old-client", issuer: REMOTE_ISSUER },
    tokens: {
      access_token: "old-access-token-1",
      refresh_token: "old-refresh-token-1",
      token_type: "Bearer",
      issuer: REMOTE_ISSUER,
    },
    obtainedAt: Date.now() - 7_200_000,
    expiresAt: Date.now() - 3_600_000,
  };
  return record;
}

Deno.test("a login stored by an older patchbay with loopback endpoints: not refreshed there; discovery runs again", async () => {
  await using listener = startLoopbackListener();
  await using remote = await startRemoteOAuth();
  await using r = await remoteRuntime(remote);
  await r.store.save(olderLogin(listener.origin));

  // The expired token is refreshed, at the token endpoint discovered afresh (and checked).
  assert.equal(await r.login(), "refreshed");
  assert.deepEqual(listener.requests, [], "nothing reached the stored loopback endpoints");
  assert.ok(remote.requests.includes("POST auth.example.test/token"), remote.requests.join("\n"));
  const stored = await r.store.load("remote");
  assert.equal(
    stored?.discovery?.authorizationServerMetadata?.token_endpoint,
    `${REMOTE_ISSUER}/token`,
  );
  assert.deepEqual(r.browser.opened, []);
});

Deno.test("logout does not revoke at a loopback revocation endpoint an older patchbay stored", async () => {
  await using listener = startLoopbackListener();
  await using remote = await startRemoteOAuth();
  await using r = await remoteRuntime(remote);
  await r.store.save(olderLogin(listener.origin));
  const result = await logout(r.store, "remote", { fetch: remote.fetch, resolve: testResolver() });
  assert.deepEqual(result.revoked, []);
  assert.match(
    result.revocationProblem ?? "",
    /^the revocation_endpoint in the authorization server's metadata, http:\/\/127\.0\.0\.1:\d+\/revoke, is on a loopback address/,
  );
  assert.ok(result.deleted, "the local copy is deleted regardless");
  assert.deepEqual(listener.requests, []);
});

// ── the same through the entry point ─────────────────────────────────────────────────────

/** A sandbox whose patchbay (and its browser) reach the remote stand-in. */
async function remoteSandbox(remote: RemoteOAuth) {
  return await sandbox({
    ...remote.env,
    BROWSER: `${DENO} run --allow-net ${FAKE_BROWSER_CLI}`,
    LLM_API_KEY: "sk-ssrf-test-0123456789",
  });
}

for (const field of ["registration_endpoint", "token_endpoint"] as const) {
  Deno.test(`patchbay tools and auth login: a ${field} on loopback is refused, nothing reaches it`, async () => {
    await using listener = startLoopbackListener();
    await using remote = await startRemoteOAuth({
      metadata: {
        [field]: `${listener.origin}/${field === "token_endpoint" ? "token" : "register"}`,
      },
    });
    await using box = await remoteSandbox(remote);
    const config = await writeConfig(
      box,
      configWith({ remote: { url: REMOTE_MCP_URL, auth: { method: "oauth" } } }),
    );
    for (
      const args of [["tools", "--config", config], ["auth", "login", "remote", "--config", config]]
    ) {
      // The guard is what is tested, so Deno's sandbox must not stop the request first:
      // under the plan, the authorization server (unknown until a login) is not granted.
      const run = await runPatchbay(box, ["--unrestricted", ...args]);
      const what = args.slice(0, 2).join(" ");
      assert.equal(run.code, 1, `${what}: ${run.stderr}`);
      assert.match(run.stderr, /OAuth authentication failed for server 'remote'/, what);
      assert.match(
        run.stderr,
        new RegExp(
          `the ${field} in the authorization server's metadata, http://127\\.0\\.0\\.1:\\d+/\\w+, ` +
            "is on a loopback address \\(127\\.0\\.0\\.1\\), but the MCP server " +
            "https://mcp\\.example\\.test/mcp is on a public address \\(mcp\\.example\\.test " +
            "does not resolve here; judged by its name\\)",
        ),
        what,
      );
      assert.match(run.stderr, /allow_internal_hosts/, what);
      assert.doesNotMatch(run.stderr, /Authorize patchbay for/, `${what}: no login started`);
    }
    // Under the plan, the refusal comes from the sandbox, named.
    const narrow = await runPatchbay(box, ["tools", "--config", config]);
    assert.equal(narrow.code, 1, narrow.stderr);
    assert.match(narrow.stderr, /OAuth authentication failed for server 'remote'/);
    assert.match(narrow.stderr, /--allow-net=auth\.example\.test:443 was not granted/);
    assert.doesNotMatch(narrow.stderr, /Requires net access|run again with/);
    assert.deepEqual(listener.requests, []);
    assert.ok(!remote.requests.some((line) => /\/(register|authorize|token)$/.test(line)));
  });
}

Deno.test("patchbay doctor: the hostile endpoints are reported, and nothing reaches them", async () => {
  await using listener = startLoopbackListener();
  await using remote = await startRemoteOAuth({
    metadata: {
      registration_endpoint: `${listener.origin}/register`,
      token_endpoint: `${listener.origin}/token`,
    },
  });
  await using box = await remoteSandbox(remote);
  await writeConfig(
    box,
    configWith({ remote: { url: REMOTE_MCP_URL, auth: { method: "oauth" } } }),
  );
  // The guard, not Deno's sandbox, must refuse: --unrestricted (see above).
  const json = await runDoctor(box, ["--offline"], { global: ["--unrestricted"] });
  const server = json.check("server:remote");
  assert.equal(server.status, "fail", server.finding);
  assert.equal(server.code, "oauth_failed");
  assert.match(
    server.finding,
    /^OAuth authentication failed for server 'remote' — the token_endpoint in the authorization server's metadata, http:\/\/127\.0\.0\.1:\d+\/token, is on a loopback address/,
  );
  assert.match(server.remedy!, /misconfigured or hostile/);

  const text = await runPatchbay(box, ["--unrestricted", "doctor", "--offline"]);
  assert.equal(text.code, 1, text.stderr);
  assert.match(
    text.stdout,
    /✗ fail\s+server:remote\s+OAuth authentication failed for server 'remote' — the token_endpoint/,
  );
  assert.deepEqual(listener.requests, []);
  assert.ok(!remote.requests.some((line) => /\/(register|authorize|token)$/.test(line)));
});
