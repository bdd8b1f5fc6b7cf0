import assert from "node:assert/strict";
import { join } from "node:path";
import manifest from "../../deno.json" with { type: "json" };
import {
  type CliResult,
  configWith,
  runCommand,
  runPatchbay,
  sandbox,
  writeConfig,
} from "../support/cli.ts";
import { DENO } from "../support/deps.ts";

/** Runs `patchbay config check` in a fresh sandbox on `config` as its servers_config.json. */
async function configCheck(config: unknown): Promise<CliResult> {
  await using box = await sandbox();
  await writeConfig(box, config);
  return await runPatchbay(box, ["config", "check"]);
}

Deno.test("--version prints 'patchbay X.Y.Z' from deno.json", async () => {
  await using box = await sandbox();
  const result = await runPatchbay(box, ["--version"]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, `patchbay ${manifest.version}\n`);
});

Deno.test("an unknown flag is a usage error: message, usage hint, exit code 2", async () => {
  await using box = await sandbox();
  const result = await runPatchbay(box, ["--frobnicate"]);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /error: unknown option '--frobnicate'/);
  assert.match(result.stderr, /run patchbay --help for usage/);
  assert.equal(result.stdout, "");
});

Deno.test("an unknown command suggests the closest one, exit code 2", async () => {
  await using box = await sandbox();
  const result = await runPatchbay(box, ["confg", "check"]);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /error: unknown command 'confg' \(did you mean 'config'\?\)/);
});

Deno.test("config check: a valid file gets a summary and exit code 0", async () => {
  const result = await configCheck(
    configWith({
      fs: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."] },
      remote: { transport_type: "sse", url: "http://127.0.0.1:8931/sse", timeout: 5 },
    }),
  );
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /✓ servers_config\.json is valid/);
  assert.match(result.stdout, /fs\s+stdio\s+npx -y @modelcontextprotocol\/server-filesystem \./);
  assert.match(
    result.stdout,
    /remote\s+sse\s+http:\/\/127\.0\.0\.1:8931\/sse \(timeout 5 s, ping_interval 30 s\)/,
  );
  assert.match(result.stdout, /tool_call_timeout 30 s, connect_wait 5 s,/);
});

Deno.test("config check: every problem, with line, column, caret, cause and remedy; exit 1", async () => {
  const result = await configCheck(
    // `type` is another client's name for transport_type, and read; `transport` is not.
    '{\n  "LLM": {"provider": "openai"},\n  "mcpServers": {\n    "a": {"transport": "stdio", "command": "x"}\n  }\n}\n',
  );
  assert.equal(result.code, 1);
  assert.equal(result.stdout, "");
  assert.match(result.stderr, /error: Invalid configuration: 2 problems in servers_config\.json/);
  assert.match(result.stderr, /line 2, column 10: Missing required field: LLM\.model/);
  assert.match(
    result.stderr,
    /line 4, column 11: mcpServers\.a\.transport: unknown field "transport" — did you mean "transport_type"\?/,
  );
  assert.match(
    result.stderr,
    / {4}4 \| {5}"a": \{"transport": "stdio", "command": "x"\}\n\s+\| {11}\^/,
  );
  assert.match(
    result.stderr,
    /cause: {2}servers_config\.json does not match the configuration schema/,
  );
  assert.match(result.stderr, /remedy: correct each field listed/);
});

Deno.test("config check: a pasted file's schema, dialect and rule problems all in one pass", async () => {
  // Once, the httpUrl + milliseconds problem appeared only after the others were fixed.
  const result = await configCheck([
    "{",
    '  "LLM": {"provider": "openai", "model": "m", "temprature": 0.2, "base_url": "${NOPE_URL}"},',
    '  "mcpServers": {',
    '    "remote": {"httpUrl": "https://mcp.example.com/mcp", "timeout": 30000, "trust": true},',
    '    "local": {"command": "npx", "cwd": 5, "env": {"TOKEN": "${input:gh-token}"}},',
    '    "both": {"command": "npx", "url": "http://127.0.0.1:1/mcp", "autoApprove": ["a"]}',
    "  }",
    "}",
    "",
  ].join("\n"));
  assert.equal(result.code, 1);
  const shown = result.stderr;
  assert.match(shown, /error: Invalid configuration: 8 problems in servers_config\.json/);
  for (
    const line of [
      /line 2, column \d+: LLM\.temprature: unknown field "temprature"/,
      /line 2, column \d+: LLM\.base_url: environment variable NOPE_URL is not set/,
      /line 4, column \d+: mcpServers\.remote\.timeout: "timeout": 30000 beside httpUrl is gemini-cli's, in milliseconds/,
      /line 4, column \d+: mcpServers\.remote\.trust: unknown field "trust" — did you mean "trusted"\?/,
      /line 5, column \d+: mcpServers\.local\.cwd: expected a string, got the number 5/,
      /line 5, column \d+: mcpServers\.local\.env\.TOKEN: \$\{input:gh-token\} is another client's variable/,
      /line 6, column \d+: Missing required field: mcpServers\.both\.transport_type — the entry has both command and url/,
      /line 6, column \d+: mcpServers\.both\.autoApprove: unknown field "autoApprove"/,
    ]
  ) assert.match(shown, line);
});

Deno.test("config check: a JSON syntax fault names the likely mistake", async () => {
  const result = await configCheck(
    '{\n  "LLM": {"provider": "openai", "model": "m"},\n  "mcpServers": {},\n}\n',
  );
  assert.equal(result.code, 1);
  assert.match(
    result.stderr,
    /error: Invalid configuration: trailing comma before '\}' at line 3, column 19 of servers_config\.json/,
  );
  assert.match(
    result.stderr,
    /cause: {2}JSON decode error: strict JSON allows no comma after the last member/,
  );
  assert.ok(!/Unexpected token/.test(result.stderr), result.stderr);
});

Deno.test("config check --json prints the normalized configuration with secrets redacted", async () => {
  await using box = await sandbox({ MCP_TOKEN: "tok-abcdef-123456" });
  await writeConfig(
    box,
    configWith({
      h: { url: "http://127.0.0.1:9/mcp", headers: { Authorization: "Bearer ${MCP_TOKEN}" } },
    }),
  );
  const result = await runPatchbay(box, ["config", "check", "--json"]);
  assert.equal(result.code, 0, result.stderr);
  const parsed = JSON.parse(result.stdout);
  assert.equal(parsed.valid, true);
  assert.equal(parsed.config.servers[0].headers.Authorization, "Bearer [REDACTED]");
  assert.ok(!result.stdout.includes("tok-abcdef-123456"));
});

Deno.test("config check --json reports an invalid file as a JSON error object, exit 1", async () => {
  await using box = await sandbox();
  await writeConfig(box, { mcpServers: {} });
  const result = await runPatchbay(box, ["config", "check", "--json"]);
  assert.equal(result.code, 1);
  const { type, error } = JSON.parse(result.stdout);
  assert.equal(type, "error");
  assert.equal(error.code, "config_invalid");
  assert.equal(error.message, "Invalid configuration: Missing required field: LLM");
});

Deno.test("without servers_config.json the example configuration is used, and said so", async () => {
  await using box = await sandbox();
  const result = await runPatchbay(box, ["config", "check"]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(
    result.stderr,
    /No servers_config\.json here; using the example configuration .*servers_config\.example\.json/,
  );
  assert.match(
    result.stdout,
    /everything\s+stdio\s+npx -y @modelcontextprotocol\/server-everything/,
  );
});

Deno.test("--config names the file; a missing one is an error with a remedy", async () => {
  await using box = await sandbox();
  await writeConfig(box, configWith(), "other.json");
  const ok = await runPatchbay(box, ["config", "check", "--config", "other.json"]);
  assert.equal(ok.code, 0, ok.stderr);
  const missing = await runPatchbay(box, ["--config", "absent.json", "config", "check"]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /error: Invalid configuration: absent\.json not found/);
  assert.match(
    missing.stderr,
    /remedy: create it \(copy servers_config\.example\.json to start\) or pass --config <path>/,
  );
});

Deno.test(".env feeds ${VAR} expansion; the process environment wins; --env-file must exist", async () => {
  await using box = await sandbox({ FROM_PROCESS: "process-value" });
  await Deno.writeTextFile(
    join(box.cwd, ".env"),
    "ROOT_DIR=/from/dotenv\nFROM_PROCESS=file-value\n",
  );
  await writeConfig(
    box,
    configWith({ s: { command: "srv", args: ["${ROOT_DIR}", "${FROM_PROCESS}"] } }),
  );
  const result = await runPatchbay(box, ["config", "check", "--json"]);
  assert.equal(result.code, 0, result.stderr);
  // A folder is shown; any other value from a variable is a secret on every surface
  // (docs/security-hostile-servers.md), the process environment's winning one included.
  assert.deepEqual(JSON.parse(result.stdout).config.servers[0].args, [
    "/from/dotenv",
    "[REDACTED]",
  ]);
  assert.ok(!result.stdout.includes("process-value") && !result.stdout.includes("file-value"));
  const missing = await runPatchbay(box, ["--env-file", "nope.env", "config", "check"]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /error: Could not read environment file nope\.env/);
});

Deno.test("an unset variable is an error naming the server, field and variable", async () => {
  const result = await configCheck(
    configWith({
      gh: { url: "https://127.0.0.1/mcp", headers: { Authorization: "Bearer ${GH_TOKEN}" } },
    }),
  );
  assert.equal(result.code, 1);
  assert.match(
    result.stderr,
    /mcpServers\.gh\.headers\.Authorization: environment variable GH_TOKEN is not set/,
  );
});

Deno.test("the log: state directory by default, --log-file elsewhere, errors logged, denial named", async () => {
  await using box = await sandbox();
  await writeConfig(box, configWith());
  const result = await runPatchbay(box, ["--debug", "config", "check"]);
  assert.equal(result.code, 0, result.stderr);
  const log = await Deno.readTextFile(join(box.home, ".local/state/patchbay/patchbay.log"));
  assert.match(log, /patchbay \d+\.\d+\.\d+ starting/);
  // --debug says where the log is, and mirrors log lines to stderr.
  assert.match(
    result.stderr,
    /Debug logging on; log file .*\.local\/state\/patchbay\/patchbay\.log/,
  );
  assert.match(result.stderr, /INFO {2}\[startup\] patchbay/);

  // Any writable place the permissions allow; the error that ends a command is logged.
  const custom = join(box.home, ".local/state/patchbay/custom.log");
  await writeConfig(box, { LLM: { provider: "openai" }, mcpServers: {} });
  const failed = await runPatchbay(box, ["--log-file", custom, "config", "check"]);
  assert.equal(failed.code, 1);
  assert.match(
    await Deno.readTextFile(custom),
    /ERROR \[cli\] Invalid configuration: Missing required field: LLM\.model/,
  );

  // The launcher grants the log file named on the command line (and only it).
  await writeConfig(box, configWith());
  const elsewhere = join(box.home, "elsewhere.log");
  const moved = await runPatchbay(box, ["--log-file", elsewhere, "config", "check"]);
  assert.equal(moved.code, 0, moved.stderr);
  assert.match(await Deno.readTextFile(elsewhere), /patchbay \d+\.\d+\.\d+ starting/);

  // Under flags that leave it out, the denial is named. (The user's folder is read: its
  // .env is read beneath the project's, docs/configuration.md, Scopes.)
  const state = join(box.home, ".local/state/patchbay");
  const userDir = join(box.home, ".config/patchbay");
  const denied = await runCommand(DENO, [
    "run",
    "--no-prompt",
    "--allow-env",
    `--allow-read=${box.cwd},${state},${userDir},/etc/patchbay`,
    `--allow-write=${state}`,
    new URL("../../main.ts", import.meta.url).pathname,
    "--log-file",
    "/tmp/patchbay-denied.log",
    "config",
    "check",
  ], { cwd: box.cwd, env: box.env });
  assert.match(
    denied.stderr,
    /Cannot write the log file \/tmp\/patchbay-denied\.log: patchbay runs without Deno write permission there; logging is off\. Add --allow-write=\/tmp\/patchbay-denied\.log/,
  );
});
