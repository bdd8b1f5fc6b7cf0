/**
 * Credentials written into `LLM.base_url` (`user:password@`,
 * `?api_key=`) never appear in what patchbay prints: `doctor` (text and `--json`, which
 * printed them as they were), and the other commands that show the configuration or the
 * provider's address. The scripted model server stands behind that URL, so the doctor's
 * provider check really runs and names the address.
 *
 * @module
 */

import assert from "node:assert/strict";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";

const PASSWORD = "S3cret-pass-word";
const QUERY_KEY = "query-key-98765";
const API_KEY = "sk-redaction-test-0123456789";

Deno.test("LLM.base_url credentials never reach doctor, config check, permissions or tools output", async () => {
  await using llm = await startScriptedLlm();
  await using box = await sandbox({ LLM_API_KEY: API_KEY });
  const baseUrl = llm.baseUrl.replace("http://", `http://patchbay-user:${PASSWORD}@`) +
    `?api_key=${QUERY_KEY}`;
  await writeConfig(
    box,
    configWith({}, { LLM: { provider: "openai", model: "scripted-model", base_url: baseUrl } }),
  );
  const commands = [
    ["doctor"],
    ["doctor", "--json"],
    ["config", "check"],
    ["config", "check", "--json"],
    ["permissions"],
    ["permissions", "--json"],
    ["tools", "--json"],
  ];
  for (const args of commands) {
    const run = await runPatchbay(box, args);
    const what = args.join(" ");
    const output = run.stdout + run.stderr;
    for (const secret of [PASSWORD, QUERY_KEY, API_KEY]) {
      assert.ok(!output.includes(secret), `${what} printed ${secret}:\n${output}`);
    }
    if (args[0] === "doctor") {
      assert.equal(run.code, 0, `${what}:\n${output}`);
      // The address is still shown, with its credentials hidden; prose is untouched.
      assert.match(
        run.stdout,
        /OpenAI at http:\/\/patchbay-user:\[REDACTED\]@127\.0\.0\.1:\d+\/v1\?api_key=\[REDACTED\] accepted LLM_API_KEY: 1 model listed/,
        what,
      );
    }
  }
});
