/**
 * docs/authentication.md, OAuth: the OAuth callback listener is not started when no entry uses
 * OAuth. The real entry point runs `patchbay tools` against a stdio server and a bearer
 * server while port 3000 is held: had patchbay tried to listen there (or to probe it), it
 * would fail with "OAuth authentication failed … free the port", or be seen connecting.
 *
 * Port 3000: this file holds the contract's callback port for its test, like the login
 * tests of oauth/oauth_flow_test.ts and oauth/oauth_session_test.ts bind it. Deno runs test files one
 * after another (the `test` task runs `deno test` without `--parallel`), so they never
 * compete for it. Never run these files with `--parallel`. If another program already
 * holds the port, the test runs all the same: a held port is what it needs.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { CALLBACK_PORT } from "../../lib/oauth/callback.ts";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { everythingEntry, NODE } from "../support/deps.ts";
import { startProtectedMcpServer } from "../support/protected_mcp_server.ts";

/** Port 3000 on loopback, held by this test where it can bind it, counting connections. */
function holdCallbackPort() {
  const listeners: Deno.TcpListener[] = [];
  const accepting: Promise<void>[] = [];
  const held = { ours: false, connections: 0 };
  for (const hostname of ["127.0.0.1", "::1"]) {
    let listener: Deno.TcpListener;
    try {
      listener = Deno.listen({ hostname, port: CALLBACK_PORT });
    } catch (error) {
      // Another program holding it serves the test just as well; a host without IPv6
      // has no ::1 for patchbay either.
      if (error instanceof Deno.errors.AddrInUse || hostname === "::1") continue;
      throw error;
    }
    if (hostname === "127.0.0.1") held.ours = true;
    listeners.push(listener);
    accepting.push((async () => {
      try {
        for await (const conn of listener) {
          held.connections++;
          conn.close();
        }
      } catch {
        // Closed.
      }
    })());
  }
  return {
    held,
    async [Symbol.asyncDispose]() {
      for (const listener of listeners) listener.close();
      await Promise.all(accepting);
    },
  };
}

Deno.test("entry point: no entry uses OAuth: `patchbay tools` succeeds with port 3000 held, never touching it", async () => {
  const token = "static-token-3c9d0e";
  await using rs = startProtectedMcpServer({ staticTokens: [token] });
  await using box = await sandbox();
  await writeConfig(
    box,
    configWith({
      local: { command: NODE, args: [everythingEntry(), "stdio"] },
      api: { url: rs.url, headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  await using port = holdCallbackPort();

  const result = await runPatchbay(box, ["tools"]);
  const out = result.stdout + result.stderr;
  assert.equal(result.code, 0, out);
  assert.match(result.stdout, /^local \(\d+ tools\)$/m);
  assert.match(result.stdout, /^api \(4 tools\)$/m);
  assert.doesNotMatch(out, /OAuth|3000|free the port|callback/i);
  const log = await Deno.readTextFile(
    join(box.home, ".local", "state", "patchbay", "patchbay.log"),
  );
  assert.doesNotMatch(log, /callback listener|OAuth/);
  if (port.held.ours) assert.equal(port.held.connections, 0, "nothing connected to port 3000");
});
