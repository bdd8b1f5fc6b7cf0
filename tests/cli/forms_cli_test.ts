/**
 * Servers' forms (MCP elicitation) outside the REPL, through the real entry point: `call`
 * asks the person at the terminal (on stderr: stdout, redirected to a file here, gets the
 * result alone), on a 2025 server (an `elicitation/create` request) and on a 2026-07-28
 * one (an `input_required` result); without a terminal the capability is not declared;
 * `--accept-form-defaults` answers with the schema's defaults.
 *
 * The server is the fixture of `tests/fixtures/protocol_server.ts`; its `form` tool asks
 * for a required `region` (default "eu-west") and `replicas` (default 3), and answers an
 * error when the client did not declare the elicitation capability.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { DENO } from "../support/deps.ts";
import { PATCHBAY, terminalEnv } from "../support/repl.ts";
import { processesWith } from "../support/servers.ts";
import { TmuxSession } from "../support/tmux.ts";

const PROTOCOL_SERVER = fileURLToPath(new URL("../fixtures/protocol_server.ts", import.meta.url));

function config(era: string, tag: string) {
  return {
    LLM: { provider: "openai-compatible", model: "none", base_url: "http://127.0.0.1:9/v1" },
    mcpServers: {
      fixture: {
        command: DENO,
        args: ["run", "--quiet", "--no-config", PROTOCOL_SERVER, `--era=${era}`, `--tag=${tag}`],
      },
    },
  };
}

for (const era of ["legacy", "modern"]) {
  Deno.test(`call at a terminal (${era} server): the form is asked on the terminal, stdout gets the result`, async () => {
    await using box = await sandbox();
    const tag = `patchbay-test-${crypto.randomUUID()}`;
    await writeConfig(box, config(era, tag));
    const out = join(box.cwd, "result.json");
    const line = [...PATCHBAY, "call", "fixture.form", "'{}'", ">", out].join(" ");
    {
      await using tmux = await TmuxSession.start({
        command: ["sh", "-c", line],
        env: terminalEnv(box),
        cwd: box.cwd,
      });
      const form = await tmux.waitFor("ccept and fill in", { timeoutMs: 30_000 });
      assert.match(form, /\? fixture asks: Which region\?/);
      assert.match(form, /Region\*/);
      await tmux.press("a");
      await tmux.waitFor(/Region\* \(default "eu-west"\):/);
      await tmux.submit("us-east");
      await tmux.waitFor(/replicas \(whole number, default 3\):/);
      await tmux.press("Enter");
      assert.equal(await tmux.exitCode(), 0, await tmux.screen());
    }
    const result = JSON.parse(await Deno.readTextFile(out));
    assert.deepEqual(result.answer, {
      action: "accept",
      content: { region: "us-east", replicas: 3 },
    });
    assert.deepEqual(processesWith(tag), []);
  });
}

Deno.test("call without a terminal: no elicitation capability; --accept-form-defaults answers with the defaults", async () => {
  await using box = await sandbox();
  const tag = `patchbay-test-${crypto.randomUUID()}`;
  for (const era of ["legacy", "modern"]) {
    await writeConfig(box, config(era, tag));
    const refused = await runPatchbay(box, ["call", "fixture.form", "{}"]);
    assert.equal(refused.code, 1, `${era}: ${refused.stderr}`);
    assert.match(refused.stderr, /the client does not take forms/, era);

    const answered = await runPatchbay(box, [
      "--accept-form-defaults",
      "call",
      "fixture.form",
      "{}",
    ]);
    assert.equal(answered.code, 0, `${era}: ${answered.stderr}`);
    assert.deepEqual(JSON.parse(answered.stdout).answer, {
      action: "accept",
      content: { region: "eu-west", replicas: 3 },
    }, era);
    assert.match(
      answered.stderr,
      /fixture asked for input \(Which region\?\): accepted by --accept-form-defaults, answered with the defaults of region, replicas/,
      era,
    );
  }
  assert.deepEqual(processesWith(tag), []);
});
