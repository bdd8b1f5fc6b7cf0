/**
 * A server that echoes the OAuth access token patchbay presents: masked in `call` and its
 * JSON, and in the log (docs/security-hostile-servers.md). Logs in through the callback
 * port 3000, like the other OAuth tests, and stops at once, naming its holder, when that
 * port is taken.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { DENO } from "../support/deps.ts";
import { requireFreeCallbackPort } from "../support/oauth_harness.ts";
import { startAuthorizationServer } from "../support/oauth_server.ts";
import { startProtectedMcpServer } from "../support/protected_mcp_server.ts";

Deno.test("an OAuth access token a server echoes is masked in call, its JSON and the log", async () => {
  await requireFreeCallbackPort();
  await using as = startAuthorizationServer({ scopesSupported: ["mcp"] });
  await using rs = startProtectedMcpServer({ authorizationServer: as, requiredScopes: ["mcp"] });
  const fakeBrowserCli = new URL("../support/fake_browser_cli.ts", import.meta.url).pathname;
  await using box = await sandbox({ BROWSER: `${DENO} run --allow-net ${fakeBrowserCli}` });
  await writeConfig(box, configWith({ prot: { url: rs.url, auth: { method: "oauth" } } }));

  const login = await runPatchbay(box, ["auth", "login", "prot"]);
  assert.equal(login.code, 0, login.stderr);
  const dir = join(box.home, ".config", "patchbay", "oauth");
  const [file] = [...Deno.readDirSync(dir)].map((entry) => join(dir, entry.name));
  const token: string = JSON.parse(Deno.readTextFileSync(file)).issuers[as.issuer].tokens
    .access_token;
  assert.ok(token.length >= 16, "a real token was issued");

  const text = await runPatchbay(box, ["--debug", "call", "prot.token_echo"]);
  assert.equal(text.code, 0, text.stderr);
  assert.equal(text.stdout.trim(), "[REDACTED]");
  const json = await runPatchbay(box, ["call", "--json", "prot.token_echo"]);
  assert.equal(json.code, 0, json.stderr);
  const log = Deno.readTextFileSync(join(box.home, ".local/state/patchbay/patchbay.log"));
  for (
    const [where, output] of [["call", text.stdout + text.stderr], ["call --json", json.stdout], [
      "log",
      log,
    ]]
  ) {
    assert.ok(!output.includes(token), `${where} shows the access token`);
  }
});
