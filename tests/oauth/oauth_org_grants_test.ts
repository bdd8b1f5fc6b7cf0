/**
 * The organisation sign-ins: grant `jwt_bearer` (workload identity federation: the
 * workload's JWT from a file or a command, RFC 7523) and grant `token_exchange`
 * (enterprise-managed authorization: the person's ID token exchanged at the identity
 * provider for an ID-JAG, RFC 8693, then presented with RFC 7523).
 *
 * Real parts: the loopback authorization server fixture (which accepts the JWT bearer
 * grant for assertions a test judges valid), the protected MCP server in front of it, a
 * loopback identity provider (tests/support/idp_server.ts), real files and real commands;
 * and the official conformance suite's two scenarios, run through `scripts/conformance.ts`
 * as `deno task conformance` does (patchbay through `deno task start`, under the
 * launcher's flags). No browser is involved: nothing listens on port 3000.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { OAuthFailedError } from "../../lib/errors.ts";
import type { CredentialSource, IdpSettings } from "../../lib/config/types.ts";
import { runScenario } from "../../scripts/conformance.ts";
import { rejection } from "../support/errors.ts";
import { connectWith, httpEntry, oauthHarness } from "../support/oauth_harness.ts";
import { startAuthorizationServer } from "../support/oauth_server.ts";
import { startProtectedMcpServer } from "../support/protected_mcp_server.ts";
import { startIdentityProvider } from "../support/idp_server.ts";

const WORKLOAD_JWT = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ3b3JrbG9hZC0xIn0.c2lnbmF0dXJlLTE";
const ROTATED_JWT = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ3b3JrbG9hZC0yIn0.c2lnbmF0dXJlLTI";
const ID_TOKEN = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZUBleGFtcGxlLmNvbSJ9.aWQtdG9rZW4";
const CLIENT_SECRET = "xaa-secret-7c1e9b";
const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/**
 * The authorization server (accepting `accepted` assertions and the pre-registered client
 * `mcp-client`), the MCP server in front of it, and a harness; disposed together.
 */
async function stack(accepted: (assertion: string) => boolean) {
  const disposables = new AsyncDisposableStack();
  const as = disposables.use(startAuthorizationServer({
    jwtBearer: accepted,
    registration: false,
    clients: [
      { client_id: "workload", redirect_uris: [] },
      { client_id: "mcp-client", client_secret: CLIENT_SECRET, redirect_uris: [] },
    ],
  }));
  const rs = disposables.use(startProtectedMcpServer({ authorizationServer: as }));
  const h = disposables.use(await oauthHarness());
  return { as, rs, h, [Symbol.asyncDispose]: () => disposables.disposeAsync() };
}

async function writeSecretFile(dir: string, name: string, text: string): Promise<string> {
  const file = join(dir, name);
  await Deno.writeTextFile(file, text, { mode: 0o600 });
  return file;
}

function workloadEntry(url: string, assertion: CredentialSource) {
  return httpEntry("wl", url, { grant: "jwt_bearer", clientId: "workload", assertion });
}

Deno.test("jwt_bearer: the workload's JWT from a file is presented, read again for each token request, never logged", async () => {
  await using s = await stack((a) => a === WORKLOAD_JWT || a === ROTATED_JWT);
  const file = await writeSecretFile(s.h.dir, "token", `${WORKLOAD_JWT}\n`);
  const entry = workloadEntry(s.rs.url, { field: "auth.assertion_file", file });
  const provider = s.h.runtime([entry]).providerFor(entry)!;
  assert.equal(await provider.ensureLogin(), "authorized");
  assert.equal(s.as.log.token.length, 1);
  const request = s.as.log.token[0].params;
  assert.equal(request.get("grant_type"), JWT_BEARER);
  assert.equal(request.get("assertion"), WORKLOAD_JWT, "trimmed, as the file holds it");
  assert.equal(request.get("resource"), s.rs.url);
  assert.equal(s.as.log.authorize.length, 0, "no browser");
  await using connection = await connectWith(s.rs.url, provider);
  assert.equal(await connection.call("echo", { text: "from a workload" }), "from a workload");
  // The platform rotates the token: the next token request presents the new one.
  await Deno.writeTextFile(file, ROTATED_JWT);
  assert.equal(await provider.ensureLogin({ force: true }), "authorized");
  assert.equal(s.as.log.token[1].params.get("assertion"), ROTATED_JWT);
  s.h.logger.close();
  const log = await Deno.readTextFile(s.h.logFile);
  assert.ok(!log.includes(WORKLOAD_JWT) && !log.includes(ROTATED_JWT), "JWTs masked in the log");
});

Deno.test("jwt_bearer: the workload's JWT printed by a command (no shell)", async () => {
  await using s = await stack((a) => a === WORKLOAD_JWT);
  const file = await writeSecretFile(s.h.dir, "token", WORKLOAD_JWT);
  const entry = workloadEntry(s.rs.url, {
    field: "auth.assertion_command",
    command: ["cat", file],
  });
  assert.equal(await s.h.runtime([entry]).providerFor(entry)!.ensureLogin(), "authorized");
  assert.equal(s.as.log.token[0].params.get("assertion"), WORKLOAD_JWT);
});

Deno.test("jwt_bearer: a refused JWT fails once, naming its field; no retry, no browser, no other grant", async () => {
  await using s = await stack(() => false);
  const file = await writeSecretFile(s.h.dir, "token", WORKLOAD_JWT);
  const entry = workloadEntry(s.rs.url, { field: "auth.assertion_file", file });
  const error = await rejection(
    () => s.h.runtime([entry]).providerFor(entry)!.ensureLogin(),
    OAuthFailedError,
  );
  assert.equal(error.message, "OAuth authentication failed for server 'wl'");
  assert.match(error.reason, /answered invalid_grant/);
  assert.match(
    String(error.remedy),
    /check the JWT auth\.assertion_file gives: it must be current/,
  );
  assert.equal(s.as.log.token.length, 1, "one token request");
  assert.equal(s.as.log.authorize.length, 0);
  assert.deepEqual(s.h.browser.opened, []);
});

Deno.test("jwt_bearer: a missing file, a failing command and an empty answer say which field and why", async () => {
  await using s = await stack(() => true);
  const missing = join(s.h.dir, "absent");
  const cases: [CredentialSource, RegExp, RegExp][] = [
    [
      { field: "auth.assertion_file", file: missing },
      /cannot read the workload's JWT from auth\.assertion_file \(.*absent\): no such file/,
      /projected service-account token volume/,
    ],
    [
      {
        field: "auth.assertion_command",
        command: ["sh", "-c", "echo 'not logged in' >&2; exit 3"],
      },
      /auth\.assertion_command \(sh -c .*\) exited with code 3: "not logged in"/,
      /run `sh -c .*` yourself and fix what it reports/,
    ],
    [
      { field: "auth.assertion_command", command: ["true"] },
      /auth\.assertion_command \(true\) gave nothing where the workload's JWT should be/,
      /it must hold or print only the token/,
    ],
  ];
  for (const [source, reason, remedy] of cases) {
    const entry = workloadEntry(s.rs.url, source);
    const error = await rejection(
      () => s.h.runtime([entry]).providerFor(entry)!.ensureLogin(),
      OAuthFailedError,
    );
    assert.match(error.reason, reason);
    assert.match(String(error.remedy), remedy);
  }
  assert.equal(s.as.log.token.length, 0, "nothing was presented");
});

function exchangeEntry(url: string, idp: IdpSettings) {
  return httpEntry("ema", url, {
    grant: "token_exchange",
    clientId: "mcp-client",
    clientSecret: CLIENT_SECRET,
    idp,
  });
}

Deno.test("token_exchange: the ID token is exchanged at the identity provider, the ID-JAG presented at the authorization server", async () => {
  await using idp = startIdentityProvider({
    idToken: ID_TOKEN,
    clientId: "patchbay-at-idp",
    clientSecret: "idp-secret",
  });
  await using s = await stack((a) => idp.issued.has(a));
  const file = await writeSecretFile(s.h.dir, "id-token", ID_TOKEN);
  const entry = exchangeEntry(s.rs.url, {
    // Only the issuer: the token endpoint is discovered from its metadata.
    issuer: idp.issuer,
    clientId: "patchbay-at-idp",
    clientSecret: "idp-secret",
    subjectToken: { field: "auth.idp.subject_token_file", file },
  });
  const provider = s.h.runtime([entry]).providerFor(entry)!;
  assert.equal(await provider.ensureLogin(), "authorized");
  assert.equal(idp.requests.length, 1);
  const exchange = idp.requests[0];
  assert.equal(exchange.get("audience"), s.as.issuer, "the authorization server's issuer");
  assert.equal(exchange.get("resource"), s.rs.url, "the server's resource");
  assert.equal(exchange.get("subject_token"), ID_TOKEN);
  const [token] = s.as.log.token;
  assert.equal(token.params.get("grant_type"), JWT_BEARER);
  assert.ok(idp.issued.has(token.params.get("assertion") ?? ""), "the ID-JAG the IdP issued");
  assert.equal(token.clientAuth, "basic", "the MCP client authenticates at its server");
  await using connection = await connectWith(s.rs.url, provider);
  assert.equal(await connection.call("echo", { text: "enterprise" }), "enterprise");
  s.h.logger.close();
  const log = await Deno.readTextFile(s.h.logFile);
  for (const secret of [ID_TOKEN, ...idp.issued, "idp-secret", CLIENT_SECRET]) {
    assert.ok(!log.includes(secret), "ID token, grant and secrets masked in the log");
  }
});

Deno.test("token_exchange: the identity provider's refusal is reported as its own, with what to do", async () => {
  await using idp = startIdentityProvider({
    idToken: ID_TOKEN,
    clientId: "patchbay-at-idp",
    refuse: { error: "invalid_grant", description: "ID token expired" },
  });
  await using s = await stack(() => true);
  const file = await writeSecretFile(s.h.dir, "id-token", ID_TOKEN);
  const entry = exchangeEntry(s.rs.url, {
    issuer: idp.issuer,
    tokenEndpoint: `${idp.issuer}/token`,
    clientId: "patchbay-at-idp",
    subjectToken: { field: "auth.idp.subject_token_file", file },
  });
  const error = await rejection(
    () => s.h.runtime([entry]).providerFor(entry)!.ensureLogin(),
    OAuthFailedError,
  );
  assert.match(
    error.reason,
    /the identity provider at http:\/\/127\.0\.0\.1:\d+\/token did not exchange your ID token .*invalid_grant - ID token expired/,
  );
  assert.match(String(error.remedy), /sign in again with your single sign-on tool/);
  assert.equal(s.as.log.token.length, 0, "nothing reached the authorization server");
});

/** One conformance scenario, scored, run as `deno task conformance` runs it. */
async function scenario(name: string): Promise<Map<string, string>> {
  const result = await runScenario({
    scenario: name,
    revision: "2026-07-28",
    source: "extension",
    scored: true,
    force: true,
  });
  const failed = result.checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
  assert.ok(
    result.passed && failed.length === 0,
    `${name}: ${result.problem ?? ""} ${JSON.stringify(failed)}\n${result.clientTail.join("\n")}`,
  );
  return new Map(result.checks.map((c) => [c.id, c.status]));
}

Deno.test("conformance: workload identity federation (auth/wif-jwt-bearer)", async () => {
  const checks = await scenario("auth/wif-jwt-bearer");
  // The suite verified the JWT's signature, audience and expiry.
  assert.equal(checks.get("wif-assertion-verified"), "SUCCESS");
});

Deno.test("conformance: enterprise-managed authorization (auth/enterprise-managed-authorization)", async () => {
  const checks = await scenario("auth/enterprise-managed-authorization");
  assert.equal(checks.get("complete-flow-token-exchange"), "SUCCESS");
  assert.equal(checks.get("complete-flow-jwt-bearer"), "SUCCESS");
});
