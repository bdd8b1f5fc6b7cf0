/**
 * `patchbay doctor` with `provider: "anthropic"` (through `deno task start`): the provider
 * check asks the Messages API's model list with the key in `x-api-key`, takes a model alias
 * for its dated snapshot, and words a refused key as every provider's.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { ROWS } from "../../lib/errors/failure_table.ts";

import { sandbox, WITHOUT_PROXIES, writeConfig } from "../support/cli.ts";
import { runDoctor } from "../support/doctor.ts";
import { startScriptedMessages } from "../support/scripted_messages.ts";

const KEY = "sk-ant-api03-doctor0123456789";

Deno.test("doctor with provider anthropic: the key accepted, an alias found as its dated snapshot; a refused key", async () => {
  await using api = await startScriptedMessages({
    apiKey: KEY,
    models: ["claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001"],
  });
  await using box = await sandbox({ ...WITHOUT_PROXIES });
  await Deno.writeTextFile(join(box.cwd, ".env"), `LLM_API_KEY=${KEY}\n`);
  await writeConfig(box, {
    LLM: { provider: "anthropic", model: "claude-sonnet-4-5", base_url: api.baseUrl },
    mcpServers: {},
  });
  const run = await runDoctor(box);
  const provider = run.check("provider");
  assert.equal(provider.status, "pass", provider.finding);
  assert.match(
    provider.finding,
    /Anthropic at http:\/\/127\.0\.0\.1:\d+\/v1 accepted LLM_API_KEY: 2 models listed, including "claude-sonnet-4-5"/,
  );

  await Deno.writeTextFile(join(box.cwd, ".env"), "LLM_API_KEY=sk-ant-api03-wrong\n");
  const refused = await runDoctor(box);
  assert.equal(refused.code, 1);
  const failed = refused.check("provider");
  assert.equal(failed.status, "fail");
  assert.equal(failed.code, "authentication_failed");
  assert.match(failed.finding, /^Authentication failed — Anthropic \(provider anthropic\) refused/);
  assert.equal(failed.remedy, ROWS.api_key.remedy.repl);
  assert.ok(!refused.stdout.includes("sk-ant-api03-wrong"), "the key never appears");
});
