/**
 * Grants for hosts without a browser (client_credentials with
 * client_secret_basic and private_key_jwt), DPoP-bound tokens with the server's nonce,
 * and the 2025-03-26 fallback to default endpoints for a server without OAuth metadata.
 *
 * Real parts: the loopback authorization server fixture (tests/support/oauth_server.ts,
 * which now also grants client_credentials) with the protected MCP server in front of
 * it; the official conformance suite's own scenario servers, which verify the JWT
 * assertion, the DPoP proofs and the nonce retries themselves (run through
 * `scripts/conformance.ts`, as `deno task conformance` does); and the remote stand-in of
 * the SSRF tests for the endpoint policy.
 *
 * Port 3000: the fallback scenario logs in in a (headless) browser, so this file runs under
 * the port-3000 lock with the other OAuth tests.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { parseConfig } from "../../lib/config/load.ts";
import { createEnvironment } from "../../lib/env.ts";
import {
  ConfigValidationError,
  OAuthFailedError,
  OAuthUnsupportedError,
} from "../../lib/errors.ts";
import { Logger } from "../../lib/log/log.ts";
import { Redactor } from "../../lib/redact/redact.ts";
import { registerConfigSecrets } from "../../lib/cli/startup.ts";
import { createOAuthRuntime, FileTokenStore } from "../../lib/oauth/mod.ts";
import { emptyCredentials } from "../../lib/oauth/token_store.ts";
import { runScenario, type ScenarioRun } from "../../scripts/conformance.ts";
import { rejection } from "../support/errors.ts";
import { fakeBrowser } from "../support/fake_browser.ts";
import {
  connectWith,
  httpEntry,
  oauthHarness,
  requireFreeCallbackPort,
} from "../support/oauth_harness.ts";
import { startAuthorizationServer } from "../support/oauth_server.ts";
import { fixtureEntry, startManager } from "../support/servers.ts";
import { startProtectedMcpServer } from "../support/protected_mcp_server.ts";
import {
  REMOTE_MCP_URL,
  startLoopbackListener,
  startRemoteOAuth,
  testResolver,
} from "../support/remote_oauth.ts";
import { tempDir } from "../support/temp_dir.ts";

await requireFreeCallbackPort();

const SECRET = "cc-secret-4f1d9a7e2b6c";

function ccClient() {
  return { client_id: "ci-bot", client_secret: SECRET, redirect_uris: [] };
}

/** How {@linkcode ciSetup} sets the fixtures and the entry up. */
interface CiSetupOptions {
  /** Whether the authorization server grants client_credentials. @default true */
  grants?: boolean;
  /**
   * DPoP verified by both fixtures, the resource server asking for a nonce this way.
   * @default undefined (no DPoP verification)
   */
  nonce?: "once" | "always";
  /** The entry's `auth.dpop`. @default false */
  dpop?: boolean;
  /** The entry's client secret. @default SECRET */
  secret?: string;
}

/**
 * The loopback authorization server with the pre-registered client `ci-bot`, the protected
 * MCP server in front of it, a harness, and the entry `ci` that logs in with the
 * client_credentials grant; disposed together, the harness first.
 */
async function ciSetup(options: CiSetupOptions = {}) {
  const stack = new AsyncDisposableStack();
  try {
    const as = stack.use(startAuthorizationServer({
      clientCredentials: options.grants ?? true,
      ...(options.nonce ? { dpop: true } : {}),
      clients: [ccClient()],
    }));
    const rs = stack.use(startProtectedMcpServer({
      authorizationServer: as,
      ...(options.nonce ? { dpop: { nonce: options.nonce } } : {}),
    }));
    const h = stack.use(await oauthHarness());
    const entry = httpEntry("ci", rs.url, {
      grant: "client_credentials",
      clientId: "ci-bot",
      clientSecret: options.secret ?? SECRET,
      ...(options.dpop ? { dpop: true } : {}),
    });
    return {
      as,
      rs,
      h,
      entry,
      /** The entry's provider in a fresh runtime (a second call is a second process). */
      provider: () => h.runtime([entry]).providerFor(entry)!,
      [Symbol.asyncDispose]: () => stack.disposeAsync(),
    };
  } catch (error) {
    await stack.disposeAsync();
    throw error;
  }
}

// ── client_credentials against the loopback authorization server ─────────────────────────

Deno.test("client_credentials with client_secret_basic: tokens and a tool call, no browser", async () => {
  await using ci = await ciSetup();
  const { as, rs, h } = ci;
  const provider = ci.provider();
  assert.equal(await provider.ensureLogin(), "authorized");
  assert.equal(as.log.token.length, 1);
  assert.equal(as.log.token[0].params.get("grant_type"), "client_credentials");
  assert.equal(as.log.token[0].clientAuth, "basic");
  assert.equal(as.log.authorize.length, 0, "no authorization request");
  assert.equal(as.log.register.length, 0, "no registration: the client is pre-registered");
  assert.deepEqual(h.browser.opened, [], "no browser");
  await using connection = await connectWith(rs.url, provider);
  assert.equal(await connection.call("echo", { text: "headless" }), "headless");
  // A second process uses the stored token: no new token request.
  const again = ci.provider();
  assert.equal(await again.ensureLogin(), "stored");
  assert.equal(as.log.token.length, 1);
  // The secret is nowhere in the log.
  h.logger.close();
  assert.ok(!(await Deno.readTextFile(h.logFile)).includes(SECRET));
});

Deno.test("an OAuth server added by /refresh (apply) gets the runtime then; none before", async () => {
  await using ci = await ciSetup();
  const { as, h, entry } = ci;
  let made = 0;
  await using session = await startManager({
    servers: [fixtureEntry("local")],
    createOAuth: () => {
      made++;
      return h.runtime([entry]);
    },
  });
  const { manager } = session;
  assert.equal(made, 0, "no entry uses OAuth: no runtime, so no callback listener");
  const changes = await manager.apply([fixtureEntry("local"), entry]);
  assert.deepEqual(changes.added, ["ci"]);
  assert.equal(made, 1);
  assert.equal(manager.status("ci")?.state, "connected", manager.status("ci")?.error?.message);
  assert.equal(as.log.token[0]?.params.get("grant_type"), "client_credentials");
  const result = await manager.callTool("ci__echo", { text: "added later" });
  assert.equal((result.content as { text: string }[])[0].text, "added later");
  assert.deepEqual(h.browser.opened, []);
});

Deno.test("an entry's edited auth settings get a provider of their own; unchanged ones the same", async () => {
  await using ci = await ciSetup();
  const { h, entry } = ci;
  const runtime = h.runtime([entry]);
  const first = runtime.providerFor(entry);
  assert.ok(first);
  assert.equal(runtime.providerFor(structuredClone(entry)), first, "same settings: same one");
  for (
    const auth of [
      { clientId: "other-bot" },
      { scopes: ["mcp:write"] },
      { grant: "authorization_code" as const },
      { dpop: true },
    ]
  ) {
    const edited = { ...entry, auth: { ...entry.auth!, ...auth } };
    const provider = runtime.providerFor(edited);
    assert.notEqual(provider, first, JSON.stringify(auth));
    assert.equal(runtime.providerFor(edited), provider, "then kept for those settings");
  }
});

Deno.test("client_credentials: an expired token is replaced by a new grant, not a browser", async () => {
  await using ci = await ciSetup();
  const { as, rs, h } = ci;
  await using connection = await connectWith(rs.url, ci.provider());
  assert.equal(as.log.token.length, 1);
  as.expireAccessTokens();
  assert.equal(await connection.call("echo", { text: "after expiry" }), "after expiry");
  assert.equal(as.log.token.length, 2, "a second client_credentials request");
  assert.equal(as.log.token[1].params.get("grant_type"), "client_credentials");
  assert.deepEqual(h.browser.opened, []);
});

Deno.test("client_credentials with a wrong secret: invalid_client, with the cause and the remedy", async () => {
  const wrong = "not-the-secret-8e3b1f";
  await using ci = await ciSetup({ secret: wrong });
  const { h } = ci;
  const error = await rejection(() => ci.provider().ensureLogin(), OAuthFailedError);
  assert.equal(error.message, "OAuth authentication failed for server 'ci'");
  assert.match(error.reason, /^the authorization server answered invalid_client/);
  assert.match(error.remedy, /check auth\.client_id and auth\.client_secret in the entry for 'ci'/);
  assert.ok(!`${error.message} ${error.reason} ${error.remedy}`.includes(wrong));
  assert.deepEqual(h.browser.opened, []);
  h.logger.close();
  assert.ok(!(await Deno.readTextFile(h.logFile)).includes(wrong), "the secret is not logged");
});

Deno.test("client_credentials refused by the authorization server: unsupported_grant_type, and what to do", async () => {
  // The fixture without clientCredentials answers unsupported_grant_type.
  await using ci = await ciSetup({ grants: false });
  const error = await rejection(() => ci.provider().ensureLogin(), OAuthFailedError);
  assert.match(error.reason, /answered unsupported_grant_type/);
  assert.match(error.remedy, /does not allow the client_credentials grant for this client/);
});

// ── configuration ────────────────────────────────────────────────────────────────────────

function problems(auth: Record<string, unknown>, dir = "."): string[] {
  const text = JSON.stringify({
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: { ci: { url: "https://mcp.example.com/mcp", auth: { method: "oauth", ...auth } } },
  });
  try {
    parseConfig(text, join(dir, "servers_config.json"), createEnvironment({}));
  } catch (error) {
    assert.ok(error instanceof ConfigValidationError, String(error));
    return error.problems.map((p) => `${p.path}: ${p.message}`);
  }
  return [];
}

Deno.test("config: a grant needs its credentials, and one way to authenticate the client", async () => {
  assert.deepEqual(problems({ grant: "client_credentials" }), [
    "mcpServers.ci.auth.client_id: Missing required field: mcpServers.ci.auth.client_id",
  ]);
  assert.deepEqual(problems({ grant: "client_credentials", client_id: "x" }), [
    'mcpServers.ci.auth.grant: grant "client_credentials" needs the client\'s credentials: ' +
    "auth.client_secret (client_secret_basic) or auth.private_key / auth.private_key_file " +
    "(private_key_jwt)",
  ]);
  assert.deepEqual(
    problems({ client_id: "x", client_secret: "s", private_key: "k" }),
    [
      "mcpServers.ci.auth.private_key: auth.client_secret and auth.private_key are two ways " +
      "to authenticate the client",
    ],
  );
  assert.deepEqual(problems({ grant: "password" }).length, 1);
  assert.deepEqual(problems({ dpop: "yes" }).length, 1);
  await using tmp = await tempDir();
  const dir = tmp.path;
  assert.deepEqual(
    problems({ grant: "client_credentials", client_id: "x", private_key_file: "none.pem" }, dir)
      .map((p) => p.replace(/: No such file.*$/, "")),
    [
      `mcpServers.ci.auth.private_key_file: cannot read the private key file ${
        join(dir, "none.pem")
      }`,
    ],
  );
  assert.deepEqual(
    problems({ grant: "client_credentials", client_id: "x", client_secret: "s" }),
    [],
  );
});

// ── the official conformance suite's scenario servers ────────────────────────────────────

/** Runs one scenario as `deno task conformance` does and returns its checks by id. */
async function scenario(name: string, revision = "2026-07-28") {
  const run: ScenarioRun = {
    scenario: name,
    revision,
    source: "test",
    scored: true,
    force: revision === "2026-07-28",
  };
  const result = await runScenario(run);
  const failed = result.checks.filter((c) => c.status === "FAILURE");
  assert.ok(
    result.passed,
    `${name}: ${result.problem ?? ""} ${JSON.stringify(failed)}\n${result.clientTail.join("\n")}`,
  );
  return new Map(result.checks.map((c) => [c.id, c.status]));
}

Deno.test("conformance: client_credentials with client_secret_basic and with private_key_jwt", async () => {
  const basic = await scenario("auth/client-credentials-basic");
  assert.equal(basic.get("client-credentials-basic-auth"), "SUCCESS");
  const jwt = await scenario("auth/client-credentials-jwt");
  // The suite verified the assertion's signature, iss, sub and aud with the public key.
  assert.equal(jwt.get("client-credentials-jwt-verified"), "SUCCESS");
});

Deno.test("conformance: DPoP proofs on the token request and every MCP request, nonces answered once", async () => {
  const plain = await scenario("auth/dpop");
  assert.equal(plain.get("sep-1932-client-token-request-proof"), "SUCCESS");
  assert.equal(plain.get("sep-1932-client-dpop-auth-scheme"), "SUCCESS");
  const nonce = await scenario("auth/dpop-nonce");
  assert.equal(nonce.get("sep-1932-client-as-nonce"), "SUCCESS");
  assert.equal(nonce.get("sep-1932-client-rs-nonce"), "SUCCESS");
});

Deno.test("conformance: a 2025-03-26 server without metadata: registration, login and token at its default endpoints", async () => {
  const checks = await scenario("auth/2025-03-26-oauth-endpoint-fallback", "2025-03-26");
  for (const id of ["client-registration", "authorization-request", "token-request"]) {
    assert.equal(checks.get(id), "SUCCESS", id);
  }
});

// ── DPoP against the loopback fixture: the key is kept with the tokens, privately ────────

Deno.test("DPoP: the proof key is stored with the tokens, owner-only, and never logged", async () => {
  await using ci = await ciSetup({ dpop: true });
  const { h } = ci;
  assert.equal(await ci.provider().ensureLogin(), "authorized");
  // The fixture does not do DPoP: the proof is sent, the token stays a Bearer token.
  const stored = await h.store.load("ci");
  const key = stored?.dpopKey;
  assert.ok(key, "a DPoP key is stored");
  assert.equal(key.alg, "ES256");
  const files = [...Deno.readDirSync(join(h.dir, "oauth"))];
  assert.equal(files.length, 1);
  assert.equal((await Deno.stat(join(h.dir, "oauth", files[0].name))).mode! & 0o777, 0o600);
  // The same key is used by the next process.
  const session = await ci.provider().dpop!();
  assert.equal(session.thumbprint, key.thumbprint);
  h.logger.close();
  assert.ok(!(await Deno.readTextFile(h.logFile)).includes(key.privateJwk.d));
});

// ── the endpoint policy holds for the fallback endpoints ─────────────────────────────────

Deno.test("fallback endpoints: a remote server without metadata cannot redirect its registration to loopback", async () => {
  await using listener = startLoopbackListener();
  // No protected-resource metadata, no authorization-server metadata: the fallback. Its
  // /register redirects to this machine.
  await using remote = await startRemoteOAuth({ noMetadata: true });
  await using tmp = await tempDir("patchbay-grants-");
  const dir = tmp.path;
  const logger = new Logger({ file: join(dir, "patchbay.log"), level: "debug" });
  const browser = fakeBrowser();
  const entry = httpEntry("remote", REMOTE_MCP_URL);
  const runtime = createOAuthRuntime([entry], {
    log: logger.child("test"),
    redactor: logger.redactor,
    store: new FileTokenStore({ dir: join(dir, "oauth") }),
    opener: browser.opener,
    fetch: (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.hostname === "mcp.example.test" && url.pathname === "/register") {
        return Promise.resolve(
          new Response(null, { status: 307, headers: { location: `${listener.origin}/register` } }),
        );
      }
      return remote.fetch(input, init);
    },
    resolve: testResolver(),
    interactive: false,
  })!;
  try {
    const error = await runtime.providerFor(entry)!.ensureLogin().then(() => undefined, (e) => e);
    // The registration went to the server's own origin (the fallback); its cross-origin
    // redirect was not followed, so registration failed there, with the answer named.
    assert.ok(error instanceof OAuthFailedError, String(error));
    assert.match(error.reason, /^dynamic client registration was refused \(HTTP 307/);
    assert.deepEqual(listener.requests, [], "nothing reached the loopback listener");
    assert.ok(
      remote.requests.includes("GET mcp.example.test/.well-known/oauth-authorization-server"),
    );
    assert.deepEqual(browser.opened, []);
  } finally {
    await browser.settled();
    await runtime.close();
    logger.close();
  }
});

Deno.test("a configured private key is redacted from start-up on: the PEM, each line, a JWK's private part", async () => {
  const { privateKey, publicKey } = await crypto.subtle.generateKey(
    { name: "ECDSA", namedCurve: "P-256" },
    true,
    ["sign", "verify"],
  );
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", privateKey));
  const body = btoa(String.fromCharCode(...pkcs8)).match(/.{1,64}/g)!;
  const pem = ["-----BEGIN PRIVATE KEY-----", ...body, "-----END PRIVATE KEY-----", ""].join("\n");
  const jwk = await crypto.subtle.exportKey("jwk", privateKey);
  const publicJwk = await crypto.subtle.exportKey("jwk", publicKey);
  const text = JSON.stringify({
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: {
      pem: {
        url: "https://a.example.com/mcp",
        auth: { method: "oauth", grant: "client_credentials", client_id: "a", private_key: pem },
      },
      jwk: {
        url: "https://b.example.com/mcp",
        auth: {
          method: "oauth",
          grant: "client_credentials",
          client_id: "b",
          private_key: JSON.stringify(jwk),
          private_key_alg: "ES256",
        },
      },
    },
  });
  const config = parseConfig(text, "servers_config.json", createEnvironment({}));
  const redactor = new Redactor();
  registerConfigSecrets(config, redactor);
  for (const line of body) assert.ok(!redactor.redact(`seen: ${line}`).includes(line), line);
  assert.ok(!redactor.redact(JSON.stringify(jwk)).includes(jwk.d!));
  // The public part stays readable (it is what a person compares with the service's).
  assert.ok(redactor.redact(`x=${publicJwk.x}`).includes(publicJwk.x!));
});

// ── DPoP against the loopback fixtures, which verify every proof ─────────────────────────

Deno.test("DPoP: a proof on the token request and a fresh one on every request; a nonce challenge answered once", async () => {
  await using ci = await ciSetup({ nonce: "once", dpop: true });
  const { as, rs, h } = ci;
  await using connection = await connectWith(rs.url, ci.provider());
  assert.equal(await connection.call("echo", { text: "bound" }), "bound");
  // The token request carried a valid proof of the stored key; the token is bound.
  assert.equal(as.log.dpop.length, 1);
  const tokenProof = as.log.dpop[0];
  assert.ok("jkt" in tokenProof, JSON.stringify(tokenProof));
  const stored = await h.store.load("ci");
  assert.equal(tokenProof.jkt, stored?.dpopKey?.thumbprint);
  assert.equal(stored?.issuers[stored.issuer!]?.tokens?.token_type, "DPoP");
  // The first proof to the server was challenged for a nonce, once; every later one
  // carried the server's nonce and was accepted.
  const proofs = rs.dpopProofs;
  assert.equal(proofs[0].error, "use_dpop_nonce");
  assert.ok(proofs.slice(1).every((p) => p.status === 200), JSON.stringify(proofs));
  assert.equal(proofs.filter((p) => p.error === "use_dpop_nonce").length, 1);
  // Fresh proofs: no jti twice.
  const jtis = proofs.map((p) => p.claims?.jti);
  assert.equal(new Set(jtis).size, jtis.length);
  // The server never saw the token as a Bearer token.
  assert.ok(
    rs.requests.every((r) => !r.authorization?.startsWith("Bearer ")),
    JSON.stringify(rs.requests.map((r) => r.authorization?.split(" ")[0])),
  );
});

Deno.test("DPoP: a server that asks for a new nonce again after the retry: a nonce loop, stopped with its cause", async () => {
  await using ci = await ciSetup({ nonce: "always", dpop: true });
  const { rs } = ci;
  const error = await connectWith(rs.url, ci.provider()).then(
    async (c) => {
      await c[Symbol.asyncDispose]();
      return undefined;
    },
    (e) => e,
  );
  const failure = findCause(error, OAuthFailedError);
  assert.ok(failure, `not an OAuthFailedError: ${error}`);
  assert.match(failure.reason, /answered use_dpop_nonce again after patchbay retried once/);
  assert.match(failure.remedy, /report it to the server's operator/);
  // Exactly two proofs per request: the first and the one retry.
  assert.equal(rs.dpopProofs.filter((p) => p.error === "use_dpop_nonce").length, 2);
});

/** `error` or the first of its causes that is a `type`. */
function findCause<T>(error: unknown, type: new (...args: never[]) => T): T | undefined {
  for (let e = error, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof type) return e;
  }
  return undefined;
}

Deno.test("no metadata and no default endpoints either: the server does not support OAuth, with what was tried", async () => {
  // Asks for a token, publishes no metadata, and has no /register: an API-key server.
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (r) =>
      new URL(r.url).pathname === "/mcp"
        ? new Response("unauthorized", { status: 401, headers: { "www-authenticate": "Bearer" } })
        : new Response("not found", { status: 404 }),
  );
  const origin = `http://127.0.0.1:${server.addr.port}`;
  await using h = await oauthHarness();
  const entry = httpEntry("keyed", `${origin}/mcp`);
  const error = await rejection(
    () => h.runtime([entry]).providerFor(entry)!.ensureLogin(),
    OAuthUnsupportedError,
  );
  assert.equal(error.message, "Failed to connect to server 'keyed': Session terminated");
  assert.equal(
    error.reason,
    `"auth": {"method": "oauth"} is set, but ${origin} publishes no OAuth metadata: no ` +
      "protected-resource metadata (RFC 9728) and no authorization-server metadata at " +
      `${origin}/ (RFC 8414 / OpenID discovery), and its default endpoint ${origin}/register ` +
      "(2025-03-26) answered HTTP 404, so it does not support OAuth",
  );
  assert.deepEqual(h.browser.opened, []);
});

Deno.test("fallback endpoints obey the address rule: derived from a loopback origin for a remote server, refused", async () => {
  // Stored discovery without metadata whose authorization server is on this machine (as a
  // tampered store or an older patchbay might leave it): its default endpoints are
  // checked like discovered ones, so none is used, and discovery runs again.
  await using listener = startLoopbackListener();
  await using remote = await startRemoteOAuth();
  await using tmp = await tempDir("patchbay-grants-");
  const dir = tmp.path;
  const logger = new Logger({ file: join(dir, "patchbay.log"), level: "debug" });
  const store = new FileTokenStore({ dir: join(dir, "oauth") });
  const record = emptyCredentials("remote", REMOTE_MCP_URL);
  record.discovery = { authorizationServerUrl: listener.origin };
  await store.save(record);
  const entry = httpEntry("remote", REMOTE_MCP_URL);
  const runtime = createOAuthRuntime([entry], {
    log: logger.child("test"),
    redactor: logger.redactor,
    store,
    opener: fakeBrowser().opener,
    fetch: remote.fetch,
    resolve: testResolver(),
    interactive: false,
  })!;
  try {
    const provider = runtime.providerFor(entry)!;
    assert.equal(await provider.discoveryState(), undefined, "the stored fallback is refused");
    assert.equal((await store.load("remote"))?.discovery, undefined, "and forgotten");
    logger.close();
    const log = await Deno.readTextFile(join(dir, "patchbay.log"));
    assert.match(log, /stored OAuth discovery names a refused address/);
    assert.deepEqual(listener.requests, []);
  } finally {
    await runtime.close();
    logger.close();
  }
});
