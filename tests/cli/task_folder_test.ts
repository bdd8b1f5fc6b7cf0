/**
 * `deno task start` from the checkout and `deno task --config <checkout>/deno.json start`
 * from another folder do the same: both work in the folder the person ran them from, also
 * when npm set INIT_CWD and the user agent (`npx -y deno@2.9.6 task --config …`).
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";

/** What `npx` leaves in the environment of the Deno it runs. */
const NPX_AGENT = "npm/11.19.0 node/v20.19.0 linux x64 workspaces/false";

Deno.test("deno task --config <checkout>/deno.json start uses the working folder's configuration, under npx too", async () => {
  await using box = await sandbox();
  await writeConfig(box, {
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: { "only-here": { command: "true" } },
  });
  for (
    const [label, env] of [
      ["deno task", {}],
      ["npx deno task", { npm_config_user_agent: NPX_AGENT, INIT_CWD: box.cwd }],
    ] as const
  ) {
    const result = await runPatchbay(box, ["config", "check", "--json"], { env });
    assert.equal(result.code, 0, `${label}: ${result.stderr}`);
    const checked = JSON.parse(result.stdout);
    assert.deepEqual(
      checked.config.servers.map((server: { name: string }) => server.name),
      ["only-here"],
      `${label} reads ${join(box.cwd, "servers_config.json")}:\n${result.stdout}`,
    );
    assert.doesNotMatch(result.stderr, /example configuration/, label);
  }
});

Deno.test("a stale INIT_CWD naming no folder is not followed", async () => {
  await using box = await sandbox();
  await writeConfig(box, {
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: { "only-here": { command: "true" } },
  });
  // runPatchbay runs in box.cwd; an INIT_CWD that does not exist falls back to the task's
  // own folder (the checkout), which has only the example configuration.
  const result = await runPatchbay(box, ["config", "check"], {
    env: { npm_config_user_agent: NPX_AGENT, INIT_CWD: join(box.home, "gone") },
  });
  assert.doesNotMatch(result.stdout, /only-here/);
});
