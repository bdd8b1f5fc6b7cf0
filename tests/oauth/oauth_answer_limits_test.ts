/**
 * Unbounded answers on the OAuth path: an authorization server of our own making answers
 * with oversized metadata, registration and token answers, and with tokens too long to
 * send; each is refused with the authorization server named, and nothing is stored. A
 * token stored before these bounds existed is refused at load rather than read at every
 * start (docs/security-limits.md). The client_credentials grant needs no browser.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { OAuthFailedError } from "../../lib/errors.ts";
import {
  MAX_OAUTH_ANSWER_BYTES,
  MAX_STORED_CREDENTIALS_BYTES,
  MAX_TOKEN_CHARS,
} from "../../lib/oauth/answer_limits.ts";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { rejection } from "../support/errors.ts";
import { httpEntry, oauthHarness } from "../support/oauth_harness.ts";
import {
  type AuthorizationServerOptions,
  startAuthorizationServer,
} from "../support/oauth_server.ts";
import { startProtectedMcpServer } from "../support/protected_mcp_server.ts";

const SECRET = "cc-secret-limits-0a9b8c";

/** A hostile (or not) authorization server, the MCP server in front, and a harness. */
async function setup(options: AuthorizationServerOptions = {}, grant = true) {
  const stack = new AsyncDisposableStack();
  const as = stack.use(startAuthorizationServer({
    clientCredentials: true,
    clients: [{ client_id: "ci-bot", client_secret: SECRET, redirect_uris: [] }],
    ...options,
  }));
  const rs = stack.use(startProtectedMcpServer({ authorizationServer: as }));
  const h = stack.use(await oauthHarness());
  const entry = grant
    ? httpEntry("ci", rs.url, {
      grant: "client_credentials",
      clientId: "ci-bot",
      clientSecret: SECRET,
    })
    : httpEntry("ci", rs.url);
  return {
    as,
    h,
    provider: () => h.runtime([entry]).providerFor(entry)!,
    [Symbol.asyncDispose]: () => stack.disposeAsync(),
  };
}

const origin = (issuer: string) => new URL(issuer).origin;

for (
  const [what, oversize, path] of [
    [
      "metadata",
      { metadata: MAX_OAUTH_ANSWER_BYTES * 4 },
      "/.well-known/oauth-authorization-server",
    ],
    ["token", { token: 60 * 1024 * 1024 }, "/token"],
  ] as const
) {
  Deno.test(`an oversized ${what} answer is refused, naming the authorization server; nothing is stored`, async () => {
    await using s = await setup({ oversize });
    const error = await rejection(() => s.provider().ensureLogin(), OAuthFailedError);
    assert.equal(error.message, "OAuth authentication failed for server 'ci'");
    assert.match(
      error.reason,
      new RegExp(
        `^the authorization server at ${origin(s.as.issuer)} answered ${origin(s.as.issuer)}` +
          `${path} with more than 1 MiB`,
      ),
    );
    assert.match(error.remedy, new RegExp(`report it to the operator of ${origin(s.as.issuer)}`));
    const stored = await s.h.store.load("ci");
    assert.ok(
      !Object.values(stored?.issuers ?? {}).some((entry) => entry.tokens),
      "no token was stored",
    );
  });
}

Deno.test("an oversized registration answer is refused before any browser opens", async () => {
  await using s = await setup({ oversize: { registration: MAX_OAUTH_ANSWER_BYTES + 1 } }, false);
  const error = await rejection(() => s.provider().ensureLogin(), OAuthFailedError);
  assert.match(error.reason, /answered http:\/\/127\.0\.0\.1:\d+\/register with more than 1 MiB/);
  assert.deepEqual(s.h.browser.opened, []);
});

Deno.test("a token longer than patchbay can send is refused when issued, and not stored", async () => {
  await using s = await setup({ oversize: { accessToken: MAX_TOKEN_CHARS + 1 } });
  const error = await rejection(() => s.provider().ensureLogin(), OAuthFailedError);
  assert.match(
    error.reason,
    new RegExp(
      `^the authorization server ${s.as.issuer} issued an access_token of \\d+ characters, ` +
        `more than the ${MAX_TOKEN_CHARS} patchbay accepts`,
    ),
  );
  assert.match(error.reason, /it was not stored/);
  const stored = await s.h.store.load("ci");
  assert.ok(!Object.values(stored?.issuers ?? {}).some((entry) => entry.tokens));
});

for (
  const [what, length] of [
    ["too long to send", MAX_TOKEN_CHARS * 4],
    ["in a document too large to read", MAX_STORED_CREDENTIALS_BYTES * 2],
  ] as const
) {
  Deno.test(`a stored token ${what} is refused at load, and a fresh login replaces it`, async () => {
    await using s = await setup();
    assert.equal(await s.provider().ensureLogin(), "authorized");
    // As a patchbay without these bounds left it: the oversized token in the store.
    const record = (await s.h.store.load("ci"))!;
    const issuer = record.issuer!;
    record.issuers[issuer].tokens!.access_token = "x".repeat(length);
    await s.h.store.save(record);
    assert.equal(await s.provider().ensureLogin(), "authorized", "not the stored token");
    assert.equal(s.as.log.token.length, 2, "a second grant replaced it");
    const after = (await s.h.store.load("ci"))!;
    assert.ok(after.issuers[issuer].tokens!.access_token.length < 100);
    // And the next start uses the new one as it is.
    assert.equal(await s.provider().ensureLogin(), "stored");
  });
}

Deno.test("patchbay tools: a token endpoint answering 60 MB is refused by name; nothing is stored", async () => {
  await using as = startAuthorizationServer({
    clientCredentials: true,
    clients: [{ client_id: "ci-bot", client_secret: SECRET, redirect_uris: [] }],
    oversize: { token: 60 * 1024 * 1024 },
  });
  await using rs = startProtectedMcpServer({ authorizationServer: as });
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await writeConfig(
    box,
    configWith({
      ci: {
        transport_type: "streamable_http",
        url: rs.url,
        auth: {
          method: "oauth",
          grant: "client_credentials",
          client_id: "ci-bot",
          client_secret: SECRET,
        },
      },
    }),
  );
  const first = await runPatchbay(box, ["tools"]);
  assert.notEqual(first.code, 0, first.stdout);
  assert.match(first.stderr, /OAuth authentication failed for server 'ci'/);
  assert.ok(
    first.stderr.includes(`the authorization server at ${origin(as.issuer)} answered`),
    first.stderr,
  );
  assert.match(first.stderr, /with more than 1 MiB/);
  // Nothing was stored: the stored logins hold no token at all.
  const stored = join(box.home, ".config/patchbay/oauth");
  const files: string[] = [];
  try {
    for await (const entry of Deno.readDir(stored)) files.push(join(stored, entry.name));
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  for (const file of files) {
    const text = await Deno.readTextFile(file);
    assert.ok(text.length < 64 * 1024, `${file} is ${text.length} characters`);
    assert.doesNotMatch(text, /access_token/);
  }
});
