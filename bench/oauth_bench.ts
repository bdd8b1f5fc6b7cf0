/**
 * What OAuth costs at run time: the per-request overhead of the provider's fetch wrapper
 * (token lookup, expiry check, header) over a plain fetch on loopback, the token store's
 * read and atomic write, the endpoint policy's check of an address (a literal, and a name
 * the system resolver is asked about), and a whole first login (discovery, registration,
 * browser redirect through the port-3000 callback, code exchange, every request checked
 * by the policy) against the test servers.
 *
 * `deno bench --allow-all bench/oauth_bench.ts` (port 3000 must be free).
 *
 * @module
 */

import { join } from "node:path";
import { silentLog } from "../lib/log/log.ts";
import { createOAuthRuntime, EndpointPolicy, FileTokenStore } from "../lib/oauth/mod.ts";
import { emptyCredentials } from "../lib/oauth/token_store.ts";
import { fakeBrowser } from "../tests/support/fake_browser.ts";
import { httpEntry } from "../tests/support/oauth_harness.ts";
import { startAuthorizationServer } from "../tests/support/oauth_server.ts";
import { startProtectedMcpServer } from "../tests/support/protected_mcp_server.ts";

const dir = await Deno.makeTempDir({ prefix: "patchbay-bench-" });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));

// A bare loopback endpoint, so the wrapper's own cost is not hidden behind an MCP server.
const plain = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen: () => {} },
  () => new Response("ok"),
);
plain.unref();
const plainUrl = `http://127.0.0.1:${plain.addr.port}/mcp`;

const store = new FileTokenStore({ dir: join(dir, "oauth") });
const issuer = "http://127.0.0.1:1";
const record = emptyCredentials("bench", plainUrl);
record.issuer = issuer;
record.issuers[issuer] = {
  tokens: { access_token: "at-bench-token", token_type: "Bearer", issuer },
  obtainedAt: Date.now(),
  expiresAt: Date.now() + 3_600_000,
};
await store.save(record);
const runtime = createOAuthRuntime([httpEntry("bench", plainUrl)], {
  log: silentLog,
  store,
  opener: fakeBrowser().opener,
})!;
const wrapped = runtime.providerFor(httpEntry("bench", plainUrl))!.wrapFetch(fetch);

Deno.bench("plain fetch on loopback", { group: "request", baseline: true }, async () => {
  await (await fetch(plainUrl, { method: "POST", body: "{}" })).text();
});

Deno.bench("OAuth-wrapped fetch (stored token)", { group: "request" }, async () => {
  await (await wrapped(plainUrl, { method: "POST", body: "{}" })).text();
});

Deno.bench("token store: load", { group: "store" }, async () => {
  await store.load("bench");
});

Deno.bench("token store: atomic save (0600, rename)", { group: "store" }, async () => {
  await store.save(record);
});

// The rule every OAuth address passes (lib/oauth/endpoint_policy.ts), for a remote server.
const policy = new EndpointPolicy({ server: "bench", serverUrl: "https://203.0.113.7/mcp" });
const role = { name: "token_endpoint", credentials: true };

Deno.bench("endpoint policy: an IP address", { group: "policy" }, async () => {
  await policy.check("https://198.51.100.4/token", role);
});

Deno.bench("endpoint policy: a name (system resolver)", { group: "policy" }, async () => {
  // A new policy each time: no answer reused. The name does not resolve (RFC 6761), so
  // this is the lookup's whole cost, then the judgement by the name.
  const fresh = new EndpointPolicy({ server: "bench", serverUrl: "https://203.0.113.7/mcp" });
  await fresh.check("https://auth.example.test/token", role);
});

Deno.bench("first login end to end (discovery, DCR, callback, token)", {
  group: "login",
  n: 30,
}, async (b) => {
  await using as = startAuthorizationServer();
  await using rs = startProtectedMcpServer({ authorizationServer: as });
  const loginStore = new FileTokenStore({ dir: join(dir, crypto.randomUUID()) });
  const browser = fakeBrowser();
  const entry = httpEntry("login", rs.url);
  const oauth = createOAuthRuntime([entry], {
    log: silentLog,
    store: loginStore,
    opener: browser.opener,
  })!;
  b.start();
  await oauth.providerFor(entry)!.ensureLogin();
  b.end();
  await browser.settled();
  await oauth.close();
});
