/**
 * Secrets that could not be had read the same on every surface (docs/secrets.md): a
 * server's `headers_helper` that crashes, `LLM.api_key_helper` that prints garbage, and a
 * `${keychain:NAME}` entry that is not stored, each with the same message, cause and remedy
 * (worded per surface) in the interactive client (tmux), the scripting commands (`tools`,
 * `run --json`) and `patchbay doctor`; what a helper printed never shows on any of them.
 *
 * The keychain is real where it can be had (GNOME Keyring on a private D-Bus session:
 * tests/support/keychain.ts); on a machine without one a FAKE secret-tool stands in, and
 * the test says so.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { Surface } from "../../lib/errors.ts";
import { runPatchbay, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { runDoctor } from "../support/doctor.ts";
import { testKeychain } from "../support/keychain.ts";
import { PATCHBAY, startRepl, terminalEnv } from "../support/repl.ts";
import { TmuxSession } from "../support/tmux.ts";
import { expectedRemedy } from "../support/script_remedy.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";

/** What a person reads of one failure. */
interface Shown {
  message: string;
  cause: string;
  remedy: string;
}

/** `error: …` / `cause: …` / `remedy: …` as the command layer prints them. */
function printed(text: string, message: string): Shown {
  const at = text.indexOf(`error: ${message}`);
  assert.ok(at >= 0, `no "error: ${message}" in:\n${text}`);
  const lines = text.slice(at).split("\n");
  const field = (name: string) =>
    lines.find((l) => new RegExp(`^\\s+${name}:`).test(l))!.replace(
      new RegExp(`^\\s+${name}:\\s+`),
      "",
    ).trim();
  return {
    message: lines[0].slice("error: ".length).trim(),
    cause: field("cause"),
    remedy: field("remedy"),
  };
}

function doctored(finding: string, remedy: string | null): Shown {
  const split = finding.indexOf(" — ");
  assert.ok(split > 0, finding);
  return {
    message: finding.slice(0, split),
    cause: finding.slice(split + 3),
    remedy: remedy ?? "",
  };
}

function fromJson(error: Record<string, string> | undefined, where: string): Shown {
  assert.ok(error, `no error in ${where}`);
  return { message: error.message, cause: error.cause, remedy: error.remedy };
}

function same(name: string, reference: Shown, others: [string, Surface, Shown][]): void {
  for (const [where, surface, shown] of others) {
    assert.equal(shown.message, reference.message, `${name}, ${where}: message`);
    assert.equal(shown.cause, reference.cause, `${name}, ${where}: cause`);
    assert.equal(shown.remedy, expectedRemedy(reference.remedy, surface), `${name}, ${where}`);
    if (surface === "script") assert.doesNotMatch(shown.remedy, /\/refresh|\/debug/);
  }
}

async function events(box: Sandbox, args: string[], env: Record<string, string> = {}) {
  const result = await runPatchbay(box, ["run", "--json", ...args], { env });
  return result.stdout.trim().split("\n").filter(Boolean).map((line) => JSON.parse(line));
}

async function script(box: Sandbox, name: string, body: string): Promise<string> {
  await Deno.writeTextFile(join(box.cwd, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return `./${name}`;
}

const TESTS = { sanitizeResources: false, sanitizeOps: false };

Deno.test({
  ...TESTS,
  name: "a crashing headers_helper reads the same in the client, tools, run --json and doctor",
  async fn() {
    await using llm = await startScriptedLlm({ fallback: () => ({ text: "fine" }) });
    await using box = await sandbox({ LLM_API_KEY: "test-key" });
    const helper = await script(box, "headers.sh", "echo 'vault: permission denied' >&2; exit 3");
    await writeConfig(box, {
      LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
      mcpServers: { remote: { url: "http://127.0.0.1:9/mcp", headers_helper: helper } },
    });
    let screen: string;
    {
      await using repl = await startRepl(box);
      screen = await repl.tmux.screen();
    }
    const message = "Headers helper failed for server 'remote'";
    const reference = printed(screen, message);
    assert.match(reference.cause, /^the helper \S+\/headers\.sh exited with status 3$/);
    assert.match(reference.remedy, /run it by hand in the configuration's folder.*then \/refresh$/);
    const tools = await runPatchbay(box, ["tools"]);
    assert.match(tools.stderr, /stderr: vault: permission denied/);
    const run = await events(box, ["hello"]);
    const doctor = await runDoctor(box, ["--offline"]);
    const check = doctor.check("server:remote");
    same("headers_helper", reference, [
      ["tools", "script", printed(tools.stderr, message)],
      [
        "run --json",
        "script",
        fromJson(run.find((e) => e.type === "server" && e.name === "remote")?.error, "run"),
      ],
      ["doctor", "script", doctored(check.finding, check.remedy)],
    ]);
  },
});

Deno.test({
  ...TESTS,
  name: "an api_key_helper printing garbage reads the same in a turn, run --json and doctor",
  async fn() {
    await using llm = await startScriptedLlm({ fallback: () => ({ text: "fine" }) });
    await using box = await sandbox();
    // A key and a message on two lines: never a key, and never shown.
    const garbage = "sk-garbage-key-9f8e7d6c5b4a";
    const helper = await script(box, "key.sh", `echo ${garbage}; echo 'and a second line'`);
    await writeConfig(box, {
      LLM: {
        provider: "openai-compatible",
        model: "scripted-model",
        base_url: llm.baseUrl,
        api_key_helper: helper,
      },
      mcpServers: {},
    });
    let turn: string;
    {
      await using repl = await startRepl(box);
      turn = await repl.send("hello", /remedy: .+\n/, 30_000);
    }
    const message = "API key helper failed";
    const reference = printed(turn, message);
    assert.match(
      reference.cause,
      /key\.sh printed what patchbay cannot use: it printed more than one line$/,
    );
    assert.match(reference.remedy, /the key alone, on one line.*; the next message runs it again$/);
    const run = await events(box, ["hello"]);
    const doctor = await runDoctor(box);
    const provider = doctor.check("provider");
    same("api_key_helper", reference, [
      ["run --json", "script", fromJson(run.find((e) => e.type === "error")?.error, "run")],
      ["doctor", "script", doctored(provider.finding, provider.remedy)],
    ]);
    assert.equal(llm.requests.length, 0, "no request went out without a key");
    const shown = [turn, JSON.stringify(run), doctor.stdout, doctor.stderr].join("\n");
    assert.ok(!shown.includes(garbage), "what the helper printed is shown");
  },
});

Deno.test({
  ...TESTS,
  name: "a keychain entry not stored reads the same in the client, tools, run --json and doctor",
  async fn() {
    await using box = await sandbox({ LLM_API_KEY: "test-key" });
    await using keychain = await testKeychain(box.home);
    if (keychain.kind === "fake") {
      console.log("no keychain exists on this machine: a FAKE secret-tool stands in");
    }
    await using llm = await startScriptedLlm({ fallback: () => ({ text: "fine" }) });
    await writeConfig(box, {
      LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
      mcpServers: {
        remote: {
          url: "http://127.0.0.1:9/mcp",
          headers: { Authorization: "Bearer ${keychain:TEAM_TOKEN}" },
        },
      },
    });
    // The interactive client reads the keychain before its prompt: it ends with the error.
    let screen: string;
    {
      await using tmux = await TmuxSession.start({
        command: [...PATCHBAY],
        env: terminalEnv(box, keychain.env),
        cwd: box.cwd,
        width: 400,
        height: 50,
      });
      assert.equal(await tmux.exitCode(60_000), 1);
      screen = await tmux.screen();
    }
    const message = "Keychain entry 'TEAM_TOKEN' not found";
    const reference = printed(screen, message);
    // Ended before its prompt, the client words the remedy for the shell it returns to.
    assert.match(
      reference.remedy,
      /^store it with `secret-tool store --label='patchbay TEAM_TOKEN' service patchbay account TEAM_TOKEN` \(it asks for the value\), then run the command again$/,
    );
    const tools = await runPatchbay(box, ["tools"], { env: keychain.env });
    const run = await events(box, ["hello"], keychain.env);
    const doctor = await runDoctor(box, ["--offline"], { env: keychain.env });
    const config = doctor.check("config");
    same("keychain", reference, [
      ["tools", "script", printed(tools.stderr, message)],
      ["run --json", "script", fromJson(run.find((e) => e.type === "error")?.error, "run")],
      ["doctor", "script", doctored(config.finding, config.remedy)],
    ]);
  },
});
