/**
 * A `${keychain:NAME}` whose NAME starts with `-` is refused where the configuration is
 * read, so it never reaches the keychain's tool as an option (`secret-tool lookup … account
 * --help` prints its usage with status 0, which would have been sent as the secret).
 * Through `deno task start config check`.
 */

import assert from "node:assert/strict";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";

Deno.test("config check: a keychain entry named like an option is refused, with the rule", async () => {
  await using box = await sandbox();
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "m", base_url: "http://127.0.0.1:9/v1" },
    mcpServers: {
      remote: { url: "http://127.0.0.1:9/mcp", headers: { Authorization: "${keychain:--help}" } },
    },
  });
  const result = await runPatchbay(box, ["config", "check"]);
  assert.notEqual(result.code, 0, result.stdout);
  assert.match(result.stdout + result.stderr, /not starting with -/);
  assert.doesNotMatch(result.stdout + result.stderr, /Usage:|Help Options/);
});
