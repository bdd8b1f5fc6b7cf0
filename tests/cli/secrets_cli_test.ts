/**
 * Secrets that never touch a file, through `deno task start` in a fresh HOME
 * (docs/secrets.md): a server's `headers_helper` against a real MCP server that checks the
 * token (a stale token refused, the helper run again), `LLM.api_key_helper` against the
 * scripted model requiring its key, `${keychain:NAME}` read from the keychain, the
 * permission plan granting each only when configured, and every secret absent from every
 * surface: stdout, stderr (with --debug), the log, the wire trace, `--json` and the doctor.
 *
 * The keychain is real where it can be had (GNOME Keyring on a private D-Bus session, read
 * by secret-tool: tests/support/keychain.ts); on a machine without one a FAKE secret-tool
 * stands in, and the tests say so.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runPatchbay, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { runDoctor } from "../support/doctor.ts";
import { testKeychain } from "../support/keychain.ts";
import { startProtectedMcpServer } from "../support/protected_mcp_server.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";

const STALE_TOKEN = "stale-mcp-token-0a1b2c3d";
const VALID_TOKEN = "valid-mcp-token-4e5f6a7b";
const STALE_KEY = "stale-llm-key-8c9d0e1f";
const VALID_KEY = "valid-llm-key-2a3b4c5d";

/**
 * A helper printing `first` on its first run and `then` afterwards (as `format` fills
 * them in), counting its runs in `<name>.runs`.
 */
async function rotatingHelper(
  box: Sandbox,
  name: string,
  format: string,
  first: string,
  then: string,
): Promise<string> {
  const path = join(box.cwd, name);
  await Deno.writeTextFile(
    path,
    `#!/bin/sh\necho run >> ${name}.runs\n` +
      `if [ "$(wc -l < ${name}.runs)" -le 1 ]; then v='${first}'; else v='${then}'; fi\n` +
      `printf '${format}\\n' "$v"\n`,
    { mode: 0o755 },
  );
  return `./${name}`;
}

async function runsOf(box: Sandbox, name: string): Promise<number> {
  return (await Deno.readTextFile(join(box.cwd, `${name}.runs`))).trim().split("\n").length;
}

/** Everything patchbay wrote that a person or a program could read. */
async function surfaces(box: Sandbox, ...outputs: string[]): Promise<string> {
  const state = join(box.home, ".local", "state", "patchbay");
  const files: string[] = [];
  for await (const entry of Deno.readDir(state)) {
    if (entry.isFile) files.push(await Deno.readTextFile(join(state, entry.name)));
  }
  for await (const entry of Deno.readDir(box.cwd)) {
    if (entry.isFile && entry.name.endsWith(".jsonl")) {
      files.push(await Deno.readTextFile(join(box.cwd, entry.name)));
    }
  }
  return [...outputs, ...files].join("\n");
}

function absent(text: string, ...secrets: string[]): void {
  for (const secret of secrets) {
    assert.ok(!text.includes(secret), `${secret} appears in what patchbay wrote`);
  }
}

Deno.test("headers_helper: a stale token refused, the helper run again, the server's tools listed", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using server = startProtectedMcpServer({ staticTokens: [VALID_TOKEN] });
  const helper = await rotatingHelper(
    box,
    "headers.sh",
    '{"Authorization": "Bearer %s"}',
    STALE_TOKEN,
    VALID_TOKEN,
  );
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "m", base_url: "http://127.0.0.1:9/v1" },
    mcpServers: { remote: { url: server.url, headers_helper: helper } },
  });
  const result = await runPatchbay(box, ["--debug", "--trace", "wire.jsonl", "tools", "--json"]);
  assert.equal(result.code, 0, result.stderr);
  const tools = JSON.parse(result.stdout);
  assert.ok(JSON.stringify(tools).includes("token_echo"), result.stdout);
  // The first request carried the stale token and was refused; then the new one went.
  const seen = server.requests.map((r) => [r.authorization, r.status === 401]);
  assert.deepEqual(seen[0], [`Bearer ${STALE_TOKEN}`, true]);
  assert.deepEqual(seen[1], [`Bearer ${VALID_TOKEN}`, false]);
  assert.ok(seen.slice(1).every(([token]) => token === `Bearer ${VALID_TOKEN}`));
  assert.equal(await runsOf(box, "headers.sh"), 2);
  absent(await surfaces(box, result.stdout, result.stderr), STALE_TOKEN, VALID_TOKEN);
});

Deno.test("LLM.api_key_helper: a stale key refused (401), the helper run again, the turn answered", async () => {
  // No LLM_API_KEY at all: the helper is where the key comes from.
  await using box = await sandbox();
  await using llm = await startScriptedLlm({ apiKey: VALID_KEY, replies: [{ text: "Hello." }] });
  const helper = await rotatingHelper(box, "key.sh", "%s", STALE_KEY, VALID_KEY);
  await writeConfig(box, {
    LLM: {
      provider: "openai-compatible",
      model: "scripted-model",
      base_url: llm.baseUrl,
      api_key_helper: helper,
    },
    mcpServers: {},
    Trace: { file: "wire.jsonl", model: true, model_bodies: true },
  });
  const result = await runPatchbay(box, ["--debug", "run", "--json", "say hello"]);
  assert.equal(result.code, 0, result.stderr);
  assert.ok(result.stdout.includes("Hello."), result.stdout);
  assert.equal(llm.requests.length, 1, "the refused request is not recorded; the second is");
  assert.equal(llm.requests[0].headers.authorization, `Bearer ${VALID_KEY}`);
  assert.equal(await runsOf(box, "key.sh"), 2);
  // The doctor asks the model's list with the helper's key too, and shows neither key.
  const doctor = await runDoctor(box);
  assert.match(doctor.check("api_key").finding, /the key comes from LLM\.api_key_helper/);
  assert.match(doctor.check("provider").finding, /accepted the key LLM\.api_key_helper printed/);
  absent(
    await surfaces(box, result.stdout, result.stderr, doctor.stdout, doctor.stderr),
    STALE_KEY,
    VALID_KEY,
  );
});

Deno.test("${keychain:NAME}: read when the values are used, never by permissions or config check", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using keychain = await testKeychain(box.home);
  if (keychain.kind === "fake") {
    console.log("no keychain exists on this machine: a FAKE secret-tool stands in");
  }
  const env = keychain.env;
  await using server = startProtectedMcpServer({ staticTokens: [VALID_TOKEN] });
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "m", base_url: "http://127.0.0.1:9/v1" },
    mcpServers: {
      remote: { url: server.url, headers: { Authorization: "Bearer ${keychain:MCP_TOKEN}" } },
    },
  });
  // Not stored yet: the plan and the check need no value, so they do not ask for one.
  const plan = await runPatchbay(box, ["permissions"], { env });
  assert.equal(plan.code, 0, plan.stderr);
  assert.match(plan.stdout, /run\s+\S*secret-tool\s+reads \$\{keychain:MCP_TOKEN\} from/);
  const check = await runPatchbay(box, ["config", "check"], { env });
  assert.equal(check.code, 0, check.stderr);
  assert.match(check.stdout, /Keychain MCP_TOKEN \(read when used/);
  // A command that connects reads it, and says how to store it when it is missing.
  const missing = await runPatchbay(box, ["tools"], { env });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /error: Keychain entry 'MCP_TOKEN' not found/);
  assert.match(
    missing.stderr,
    /remedy: store it with `secret-tool store --label='patchbay MCP_TOKEN' service patchbay account MCP_TOKEN` \(it asks for the value\), then run the command again/,
  );
  await keychain.store("MCP_TOKEN", VALID_TOKEN);
  const tools = await runPatchbay(box, ["--debug", "--trace", "wire.jsonl", "tools", "--json"], {
    env,
  });
  assert.equal(tools.code, 0, tools.stderr);
  assert.ok(server.requests.some((r) => r.authorization === `Bearer ${VALID_TOKEN}`));
  // A tool that returns the token it was sent: the token is masked in its result too.
  const echoed = await runPatchbay(box, ["call", "remote.token_echo", "{}", "--json"], { env });
  assert.equal(echoed.code, 0, echoed.stderr);
  assert.match(echoed.stdout, /\[REDACTED\]/);
  const doctor = await runDoctor(box, ["--offline"], { env });
  assert.match(
    doctor.check("config").finding,
    /keychain entry MCP_TOKEN read \(values not shown\)/,
  );
  assert.equal(doctor.check("server:remote").status, "pass", doctor.stdout);
  absent(
    await surfaces(
      box,
      tools.stdout,
      tools.stderr,
      echoed.stdout,
      echoed.stderr,
      doctor.stdout,
      doctor.stderr,
    ),
    VALID_TOKEN,
  );
});

Deno.test("the plan grants helpers and the keychain's tool only when the configuration has them", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "m", base_url: "http://127.0.0.1:9/v1" },
    mcpServers: { remote: { url: "http://127.0.0.1:9/mcp" } },
  });
  const plain = await runPatchbay(box, ["permissions", "--json"]);
  assert.equal(plain.code, 0, plain.stderr);
  assert.doesNotMatch(plain.stdout, /secret-tool|helper|DBUS_SESSION_BUS_ADDRESS/);
  await Deno.writeTextFile(join(box.cwd, "h.sh"), "#!/bin/sh\necho '{}'\n", { mode: 0o755 });
  await Deno.writeTextFile(join(box.cwd, "k.sh"), "#!/bin/sh\necho k\n", { mode: 0o755 });
  await writeConfig(box, {
    LLM: {
      provider: "openai-compatible",
      model: "m",
      base_url: "http://127.0.0.1:9/v1",
      api_key_helper: "./k.sh",
    },
    mcpServers: {
      remote: {
        url: "http://127.0.0.1:9/mcp?key=${keychain:REMOTE_KEY}",
        headers_helper: { command: "./h.sh", args: ["--for", "remote"] },
      },
    },
  });
  const listed = await runPatchbay(box, ["permissions"]);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /run\s+\S*\/h\.sh\s+runs the headers_helper of server 'remote'/);
  assert.match(listed.stdout, /run\s+\S*\/k\.sh\s+runs LLM\.api_key_helper/);
  assert.match(listed.stdout, /env\s+DBUS_SESSION_BUS_ADDRESS\s+passed on to secret-tool/);
});
