/**
 * `patchbay doctor` and `patchbay permissions` for OAuth servers: the contract's failures
 * (OAuth on a server without it; port 3000 busy; no browser) and a real login.
 *
 * Every test here binds port 3000 (the contract's fixed callback port), so they live in a
 * file of their own: the test task runs files one after another, never beside
 * tests/oauth/oauth_flow_test.ts.
 */

import assert from "node:assert/strict";
import { ROWS } from "../../lib/errors/failure_table.ts";

import { checkCallbackPort } from "../../lib/doctor/oauth_checks.ts";
import type { Config } from "../../lib/config/types.ts";
import { CALLBACK_PORT } from "../../lib/oauth/callback.ts";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { DENO, NODE } from "../support/deps.ts";
import { runDoctor } from "../support/doctor.ts";
import { startAuthorizationServer } from "../support/oauth_server.ts";
import { startProtectedMcpServer } from "../support/protected_mcp_server.ts";
import { requireFreeCallbackPort } from "../support/oauth_harness.ts";
import { eventually, portOpen, startEverythingHttp } from "../support/servers.ts";

const KEY = "sk-doctor-oauth-test";

// Every test here needs port 3000 (fixed: docs/authentication.md): fail at once, naming its holder.
await requireFreeCallbackPort();

Deno.test("OAuth on a server without OAuth: Session terminated, remove auth; port 3000 free; no browser", async () => {
  await using http = await startEverythingHttp("streamableHttp");
  await using box = await sandbox({ BROWSER: "patchbay-no-such-browser" });
  await writeConfig(
    box,
    configWith({ plain: { url: `${http.origin}/mcp`, auth: { method: "oauth" } } }),
  );
  const run = await runDoctor(box, ["--offline"], { env: { LLM_API_KEY: KEY } });
  assert.equal(run.code, 1);
  const server = run.check("server:plain");
  assert.equal(server.status, "fail");
  assert.match(
    server.finding,
    /^Failed to connect to server 'plain': Session terminated — "auth": \{"method": "oauth"\} is set, but .* publishes no OAuth metadata/,
  );
  assert.equal(server.remedy, ROWS.oauth_unsupported.remedy.repl);

  const port = run.check("oauth_port");
  assert.equal(port.status, "pass", port.finding);
  assert.match(
    port.finding,
    /port 3000 is free, and localhost reaches patchbay's callback listener/,
  );

  const browser = run.check("browser");
  assert.equal(browser.status, "warn");
  assert.match(browser.finding, /patchbay-no-such-browser \(\$BROWSER\) not found on PATH/);
  assert.match(browser.remedy!, /open the authorization URL patchbay prints/);
});

/**
 * A node process listening on the OAuth callback port (as another program might), once it
 * listens; killed on dispose.
 */
async function holdCallbackPort(): Promise<
  { pid: number; [Symbol.asyncDispose](): Promise<void> }
> {
  const holder = new Deno.Command(NODE, {
    args: [
      "-e",
      `require("http").createServer(() => {}).listen(${CALLBACK_PORT}, "127.0.0.1")`,
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const stop = async () => {
    holder.kill("SIGKILL");
    await holder.status;
  };
  try {
    await eventually(() => portOpen(CALLBACK_PORT), "the holder to listen on port 3000");
  } catch (error) {
    await stop();
    throw error;
  }
  return { pid: holder.pid, [Symbol.asyncDispose]: stop };
}

Deno.test("OAuth authentication failed: port 3000 busy, naming the process that holds it", async () => {
  await using holder = await holdCallbackPort();
  const config = {
    servers: [{
      name: "notion",
      transport: "streamable_http",
      url: "http://127.0.0.1:1/mcp",
      headers: {},
      auth: { method: "oauth" },
      disabled: false,
    }],
  } as unknown as Config;
  const result = await checkCallbackPort(config);
  assert.equal(result.status, "fail");
  assert.equal(result.code, "oauth_failed");
  assert.match(
    result.finding,
    new RegExp(
      `^OAuth authentication failed for server 'notion' — port ${CALLBACK_PORT} on ` +
        `localhost, .* is already in use by node \\(pid ${holder.pid}\\)`,
    ),
  );
  assert.match(
    result.remedy!,
    new RegExp(`^free port ${CALLBACK_PORT}: stop node \\(pid ${holder.pid}\\)`),
  );
});

Deno.test("under the start task's own flags, the doctor names the process holding port 3000", async () => {
  await using holder = await holdCallbackPort();
  await using box = await sandbox({ BROWSER: "patchbay-no-such-browser" });
  await writeConfig(
    box,
    configWith({
      notion: {
        transport_type: "streamable_http",
        url: "http://127.0.0.1:1/mcp",
        auth: { method: "oauth" },
      },
    }),
  );
  // Deno refuses /proc without --allow-all, which the start task does not grant.
  const run = await runDoctor(box, ["--offline"], { env: { LLM_API_KEY: KEY } });
  const port = run.check("oauth_port");
  assert.equal(port.status, "fail", port.finding);
  assert.match(port.finding, new RegExp(`already in use by node \\(pid ${holder.pid}\\)`));
  assert.match(
    port.remedy!,
    new RegExp(`^free port ${CALLBACK_PORT}: stop node \\(pid ${holder.pid}\\)`),
  );
});

Deno.test("an OAuth server before and after a login; permissions learn its authorization server", async () => {
  await using as = startAuthorizationServer({ scopesSupported: ["mcp"] });
  await using rs = startProtectedMcpServer({ authorizationServer: as, requiredScopes: ["mcp"] });
  const fakeBrowserCli = new URL("../support/fake_browser_cli.ts", import.meta.url).pathname;
  await using box = await sandbox({
    BROWSER: `${DENO} run --allow-net ${fakeBrowserCli}`,
    LLM_API_KEY: KEY,
  });
  await writeConfig(box, configWith({ prot: { url: rs.url, auth: { method: "oauth" } } }));
  const asHost = new URL(as.origin).host;

  const planFirst = JSON.parse((await runPatchbay(box, ["permissions", "--json"])).stdout);
  assert.ok(!planFirst.flags.some((f: string) => f.includes(asHost)));
  assert.match(planFirst.notes.join("\n"), /authorization server of 'prot' is known only after/);

  const before = await runDoctor(box, ["--offline"]);
  const notLoggedIn = before.check("server:prot");
  assert.equal(notLoggedIn.status, "warn", notLoggedIn.finding);
  assert.match(
    notLoggedIn.finding,
    /supports OAuth, and a browser login is needed \(no usable login is stored\).*never logs in/,
  );
  assert.match(notLoggedIn.remedy!, /patchbay auth login prot/);
  assert.equal(before.check("browser").status, "pass");
  assert.equal(as.log.authorize.length, 0, "the doctor opened no authorization page");
  // The doctor went as far as a login goes before the browser: discovery (and client
  // registration), which tells `patchbay permissions` where the authorization server is.
  const planDiscovered = JSON.parse((await runPatchbay(box, ["permissions", "--json"])).stdout);
  assert.ok(planDiscovered.flags.some((f: string) => f.includes(asHost)));

  const login = await runPatchbay(box, ["auth", "login", "prot"]);
  assert.equal(login.code, 0, login.stderr);

  const after = await runDoctor(box, ["--offline"]);
  const loggedIn = after.check("server:prot");
  assert.equal(loggedIn.status, "pass", loggedIn.finding);
  assert.match(
    loggedIn.finding,
    /^connected over streamable_http with OAuth in \d+ ms: protected-test-server/,
  );
  const planAfter = JSON.parse((await runPatchbay(box, ["permissions", "--json"])).stdout);
  const net = planAfter.flags.find((f: string) => f.startsWith("--allow-net="));
  assert.ok(net.split(/[=,]/).includes(asHost), net);
  assert.ok(net.split(/[=,]/).includes(new URL(rs.url).host), net);
  for (const callback of ["127.0.0.1:3000", "[::1]:3000", "localhost:3000"]) {
    assert.ok(net.split(/[=,]/).includes(callback), `${callback} in ${net}`);
  }
  assert.equal(planAfter.notes.length, 0, planAfter.notes.join("\n"));
});
