/**
 * The browser's callback page says what the terminal says (docs/authentication.md): "Login
 * complete" only once the code was exchanged for tokens; when the authorization server
 * refuses the exchange, the page is the failure in the terminal's words (message, cause,
 * remedy, escaped for HTML). The hostile party is the test authorization server answering
 * every token request with an error whose description holds markup; the browser is
 * `page_browser_cli.ts` as `$BROWSER`, which records the page it was shown. Through
 * `deno task start auth login`.
 *
 * Port 3000: these logins bind the contract's callback port, like oauth/oauth_flow_test.ts;
 * another program holding it fails the file at once, naming that program.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { DENO } from "../support/deps.ts";
import { requireFreeCallbackPort } from "../support/oauth_harness.ts";
import { startAuthorizationServer } from "../support/oauth_server.ts";
import { startProtectedMcpServer } from "../support/protected_mcp_server.ts";

await requireFreeCallbackPort();

const PAGE_BROWSER = fileURLToPath(new URL("../support/page_browser_cli.ts", import.meta.url));

/** `$BROWSER` recording the page it is shown in `file`. */
function recordingBrowser(file: string): string {
  return `${DENO} run --allow-net --allow-write=${file} ${PAGE_BROWSER} ${file}`;
}

/** The terminal's `error:`, `cause:` and `remedy:` lines. */
function printed(stderr: string): { message: string; cause: string; remedy: string } {
  const line = (label: string) => new RegExp(`^\\s*${label}\\s+(.+)$`, "m").exec(stderr)?.[1];
  return { message: line("error:")!, cause: line("cause:")!, remedy: line("remedy:")! };
}

/** Text as the page escapes it for HTML. */
function html(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

Deno.test("a token request the authorization server refuses: the page says the failure the terminal says, never 'Login complete'", async () => {
  await using as = startAuthorizationServer({
    tokenError: { error: "invalid_grant", description: "the code <b>was</b> refused" },
  });
  await using rs = startProtectedMcpServer({ authorizationServer: as });
  await using box = await sandbox();
  await writeConfig(box, configWith({ prot: { url: rs.url, auth: { method: "oauth" } } }));
  const pageFile = join(box.home, "page.json");

  const login = await runPatchbay(box, ["auth", "login", "prot"], {
    env: { BROWSER: recordingBrowser(pageFile) },
  });
  assert.equal(login.code, 1, login.stdout + login.stderr);
  const terminal = printed(login.stderr);
  assert.equal(terminal.message, "OAuth authentication failed for server 'prot'", login.stderr);
  assert.match(terminal.cause, /invalid_grant/);

  const page = JSON.parse(await Deno.readTextFile(pageFile)) as { status: number; body: string };
  assert.equal(page.status, 400);
  assert.doesNotMatch(page.body, /Login complete/);
  assert.match(page.body, /<h1>Login failed<\/h1>/);
  assert.ok(page.body.includes(`<p>${html(terminal.message)}</p>`), page.body);
  assert.ok(page.body.includes(`<p>Cause: ${html(terminal.cause)}</p>`), page.body);
  assert.ok(page.body.includes(`<p>Remedy: ${html(terminal.remedy)}</p>`), page.body);
  assert.doesNotMatch(page.body, /<b>was<\/b>/, "the server's markup is escaped");
  assert.ok(as.log.token.length >= 1, "the exchange was tried before the page answered");
});

Deno.test("a login that succeeds: the page says 'Login complete' once the tokens are stored", async () => {
  await using as = startAuthorizationServer();
  await using rs = startProtectedMcpServer({ authorizationServer: as });
  await using box = await sandbox();
  await writeConfig(box, configWith({ prot: { url: rs.url, auth: { method: "oauth" } } }));
  const pageFile = join(box.home, "page.json");

  const login = await runPatchbay(box, ["auth", "login", "prot"], {
    env: { BROWSER: recordingBrowser(pageFile) },
  });
  assert.equal(login.code, 0, login.stderr);
  assert.match(login.stdout, /Logged in to 'prot'/);
  const page = JSON.parse(await Deno.readTextFile(pageFile)) as { status: number; body: string };
  assert.equal(page.status, 200);
  assert.match(page.body, /Login complete/);
  assert.match(page.body, /authorized for prot/);
});
