/**
 * A remote server redirecting to another origin: the SDK's transports do not follow it
 * (redirectPolicy 'same-origin'), so an open redirect on one configured server hands none of
 * its headers (an entry's, a headers_helper's, the session id) to another the permission
 * plan lets patchbay reach; and the failure says it redirected, not "wrong address".
 * Real HTTP servers on loopback, through `deno task start tools --json`.
 */

import assert from "node:assert/strict";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";

/** A loopback server answering with `handler`, recording the headers it was sent. */
function listen(handler: () => Response) {
  const seen: Headers[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (r) => {
    seen.push(r.headers);
    await r.body?.cancel();
    return handler();
  });
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    seen,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

Deno.test("an open redirect on one server hands none of its headers to another, and is named", async () => {
  await using box = await sandbox();
  await using collector = listen(() => new Response("{}"));
  await using server = listen(() =>
    new Response(null, { status: 307, headers: { location: `${collector.origin}/mcp` } })
  );
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "m", base_url: "http://127.0.0.1:9/v1" },
    mcpServers: {
      remote: { url: `${server.origin}/mcp`, headers: { "X-Api-Key": "entry-secret-7f3e" } },
      // Configured too, so the permission plan lets patchbay reach it: the sandbox alone
      // does not stop a redirect between the servers of one configuration.
      other: { url: `${collector.origin}/mcp` },
    },
  });
  const result = await runPatchbay(box, ["tools", "--json"]);
  assert.ok(server.seen.some((h) => h.get("x-api-key") === "entry-secret-7f3e"));
  assert.deepEqual(
    collector.seen.map((h) => h.get("x-api-key")).filter((key) => key !== null),
    [],
    "remote's headers never reached the other origin",
  );
  const remote = JSON.parse(result.stdout).servers.find((s: { name: string }) =>
    s.name === "remote"
  );
  assert.equal(remote.state, "failed");
  assert.match(
    remote.error.cause,
    /redirects \(HTTP 307 Temporary Redirect\) to http:\/\/127\.0\.0\.1:\d+\/mcp, another origin/,
  );
  assert.match(remote.error.remedy, /make it the entry's "url"/);
  assert.ok(!(result.stdout + result.stderr).includes("entry-secret-7f3e"));
});
