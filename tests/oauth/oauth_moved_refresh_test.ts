/**
 * An OAuth server that moves to a new authorization server during an interactive session,
 * as a person meets it: the real `deno task start` (the launcher and its plan) in tmux, a
 * real protected MCP server and two real authorization servers on loopback, the scripted
 * model. The plan of the start grants the first authorization server only; once the MCP
 * server names the second, the request for a new token is refused by Deno. The REPL says
 * which grant is missing and that `/refresh` adds it; `/refresh` restarts the client under
 * a plan that discovered the new authorization server, and the conversation continues.
 *
 * The client_credentials grant: the login is the token request alone (no browser, no
 * port 3000).
 */

import assert from "node:assert/strict";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { startAuthorizationServer } from "../support/oauth_server.ts";
import {
  type ProtectedServerOptions,
  startProtectedMcpServer,
} from "../support/protected_mcp_server.ts";
import { startRepl } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";

Deno.test("an OAuth server moved to a new authorization server: the refusal says /refresh, which restarts under a plan with it and keeps the conversation", async () => {
  await using llm = await startScriptedLlm({ replies: [{ text: "Noted: pineapple." }] });
  await using box = await sandbox();
  const client = { client_id: "ci-bot", client_secret: "the-secret", redirect_uris: [] };
  await using first = startAuthorizationServer({ clientCredentials: true, clients: [client] });
  await using second = startAuthorizationServer({ clientCredentials: true, clients: [client] });
  // Read at each request: changing it moves the server to another authorization server.
  const resource: ProtectedServerOptions = { authorizationServer: first };
  await using server = startProtectedMcpServer(resource);
  const { client_id, client_secret } = client;
  const auth = { method: "oauth", grant: "client_credentials", client_id, client_secret };
  const ci = { transport_type: "streamable_http", url: server.url, auth };
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: { ci },
  });
  await using repl = await startRepl(box);
  assert.match(await repl.tmux.screen(), /1 of 1 server connected/);
  assert.ok(first.log.token.length > 0, "logged in at the first authorization server");
  await repl.send("remember the word pineapple", "Noted: pineapple.");

  // The server now takes only the second authorization server's tokens, and names it.
  resource.authorizationServer = second;
  const moved = new URL(second.origin).host;
  const refused = await repl.send('/call ci.echo {"text": "hi"}', /remedy: .+\n/, 60_000);
  assert.match(refused, /OAuth authentication failed for server 'ci'/);
  assert.ok(
    refused.includes(
      `Permission denied: patchbay runs under explicit Deno permissions and ` +
        `--allow-net=${moved} was not granted`,
    ),
    refused,
  );
  assert.match(
    refused,
    /remedy: patchbay finds the authorization server and restarts under a plan that includes it: a command at once, the interactive client at the next \/refresh/,
  );
  assert.doesNotMatch(refused, /NotCapable|Requires net access|run again with/);
  assert.equal(second.log.token.length, 0, "the second authorization server was not reached");

  const restart = await repl.send(
    "/refresh",
    /Resuming session \S+ \(2 messages\)[^]*1 of 1 server connected/,
    60_000,
  );
  assert.ok(
    restart.includes(
      `Restarting under an extended plan, which adds net ${moved} (the new authorization ` +
        "server of 'ci'); the conversation continues.",
    ),
    restart,
  );
  // One request, the REPL's: none for a command run again, which would drop the conversation.
  assert.doesNotMatch(restart, /the command runs again/);
  assert.ok(second.log.token.length > 0, "logged in at the second authorization server");
  // The answer on a line of its own: the line typed has it in quotes.
  await repl.send('/call ci.echo {"text": "after-the-move"}', /^after-the-move$/m);
  const history = await repl.send("/history", "conversation ");
  assert.match(history, /you\s+remember the word pineapple/);
  assert.match(history, /model\s+Noted: pineapple\./);
});

Deno.test("a command refused the way to a moved authorization server runs again at once under a plan with it", async () => {
  await using box = await sandbox();
  const client = { client_id: "ci-bot", client_secret: "the-secret", redirect_uris: [] };
  await using first = startAuthorizationServer({ clientCredentials: true, clients: [client] });
  await using second = startAuthorizationServer({ clientCredentials: true, clients: [client] });
  const resource: ProtectedServerOptions = { authorizationServer: first };
  await using server = startProtectedMcpServer(resource);
  const { client_id, client_secret } = client;
  const auth = { method: "oauth", grant: "client_credentials", client_id, client_secret };
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "m", base_url: "http://127.0.0.1:9/v1" },
    mcpServers: { ci: { transport_type: "streamable_http", url: server.url, auth } },
  });
  const before = await runPatchbay(box, ["call", "ci.echo", '{"text": "before"}']);
  assert.equal(before.code, 0, before.stderr);
  assert.match(before.stdout, /before/);

  // The stored login names the first authorization server: the plan of the next start
  // grants it alone, and the token request to the second is refused by Deno.
  resource.authorizationServer = second;
  const moved = new URL(second.origin).host;
  const after = await runPatchbay(box, ["call", "ci.echo", '{"text": "after-the-move"}']);
  assert.equal(after.code, 0, after.stderr);
  assert.ok(
    after.stderr.includes(
      `Restarting under an extended plan, which adds net ${moved} (the new authorization ` +
        "server of 'ci'); the command runs again.",
    ),
    after.stderr,
  );
  assert.match(after.stdout, /after-the-move/);
  assert.ok(second.log.token.length > 0, "logged in at the second authorization server");
});

Deno.test("a model's tool call refused the way to a moved authorization server: /refresh restarts under a plan with it", async () => {
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: "ci__echo", arguments: { text: "hi" } }] },
      { text: "The echo tool failed." },
    ],
  });
  await using box = await sandbox();
  const client = { client_id: "ci-bot", client_secret: "the-secret", redirect_uris: [] };
  await using first = startAuthorizationServer({ clientCredentials: true, clients: [client] });
  await using second = startAuthorizationServer({ clientCredentials: true, clients: [client] });
  const resource: ProtectedServerOptions = { authorizationServer: first };
  await using server = startProtectedMcpServer(resource);
  const { client_id, client_secret } = client;
  const auth = { method: "oauth", grant: "client_credentials", client_id, client_secret };
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: { ci: { transport_type: "streamable_http", url: server.url, auth, trusted: true } },
  });
  await using repl = await startRepl(box);
  assert.match(await repl.tmux.screen(), /1 of 1 server connected/);

  resource.authorizationServer = second;
  const moved = new URL(second.origin).host;
  // The failure is shown by the turn's tool line, not by the error presenter.
  const turn = await repl.send("echo hi with the tool", "The echo tool failed.", 60_000);
  assert.ok(turn.includes(`--allow-net=${moved} was not granted`), turn);
  const restart = await repl.send("/refresh", /1 of 1 server connected/, 60_000);
  assert.ok(
    restart.includes(
      `Restarting under an extended plan, which adds net ${moved} (the new authorization ` +
        "server of 'ci')",
    ),
    restart,
  );
  assert.ok(second.log.token.length > 0, "logged in at the second authorization server");
});
