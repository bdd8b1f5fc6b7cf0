/**
 * `patchbay doctor` against each failure of docs/troubleshooting.md that can be made on this
 * machine, through the real entry point (`deno task start`, the start task's flags): the
 * finding and the remedy of each. OAuth's port 3000 is exercised in doctor/doctor_oauth_test.ts.
 */

import assert from "node:assert/strict";
import { join } from "node:path";

import { ROWS } from "../../lib/errors/failure_table.ts";
import { checkLogFile } from "../../lib/doctor/setup_checks.ts";
import { Logger } from "../../lib/log/log.ts";
import { configWith, type Sandbox, sandbox, WITHOUT_PROXIES, writeConfig } from "../support/cli.ts";
import { everythingEntry, filesystemEntry, NODE } from "../support/deps.ts";
import { runDoctor } from "../support/doctor.ts";
import { RedisServer } from "../support/redis.ts";
import { type ScriptedLlm, startScriptedLlm } from "../support/scripted_llm.ts";
import { freePort, silentListener, startEverythingHttp } from "../support/servers.ts";

const KEY = "sk-doctor-test-key";

/** The scripted model as an OpenAI-compatible `openai` provider that needs LLM_API_KEY. */
function llmAt(llm: ScriptedLlm | string) {
  return {
    provider: "openai",
    model: "scripted-model",
    base_url: typeof llm === "string" ? llm : llm.baseUrl,
  };
}

async function writeEnv(box: Sandbox, text: string): Promise<void> {
  await Deno.writeTextFile(join(box.cwd, ".env"), text);
}

Deno.test("a clean configuration passes every check and exits 0", async () => {
  await using llm = await startScriptedLlm({ apiKey: KEY });
  // "Clean" includes no proxy: none is passed on from the machine running the tests.
  await using box = await sandbox({ ...WITHOUT_PROXIES });
  await writeEnv(box, `LLM_API_KEY=${KEY}\n`);
  await writeConfig(box, {
    LLM: llmAt(llm),
    mcpServers: {
      everything: { command: NODE, args: [everythingEntry(), "stdio"] },
      filesystem: { command: NODE, args: [filesystemEntry(), box.cwd] },
    },
  });
  const run = await runDoctor(box);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const notApplicable = new Set(["oauth_port", "browser"]);
  for (const line of run.lines) {
    const expected = notApplicable.has(line.name) ? "skip" : "pass";
    assert.equal(line.status, expected, `${line.name}: ${line.finding}`);
  }
  assert.deepEqual(
    run.lines.map((l) => l.name),
    [
      "config",
      "env_file",
      "log_file",
      "permissions",
      "api_key",
      "provider",
      "proxy",
      "dns",
      "server:everything",
      "server:filesystem",
      "oauth_port",
      "browser",
      "memory",
    ],
  );
  assert.match(run.check("env_file").finding, /\.env loaded: 1 variable$/);
  assert.match(run.check("api_key").finding, /LLM_API_KEY is set \(from \.env, 18 characters\)/);
  assert.match(run.check("provider").finding, /accepted LLM_API_KEY: 1 model listed/);
  assert.match(run.check("server:everything").finding, /connected over stdio .* 17 tools/);
  assert.match(run.check("server:filesystem").finding, /connected over stdio/);
  assert.match(run.check("memory").finding, /Memory on: saving to .*\/sessions/);
  assert.match(run.check("dns").finding, /127\.0\.0\.1 is an IP address/);
});

Deno.test("JSON decode error: the line and column, the cause, and the validator remedy", async () => {
  await using box = await sandbox();
  await writeConfig(
    box,
    '{\n  "LLM": {"provider": "openai", "model": "gpt-4o-mini",},\n  "mcpServers": {}\n}\n',
  );
  const run = await runDoctor(box, ["--offline"]);
  assert.equal(run.code, 1);
  const config = run.check("config");
  assert.equal(config.status, "fail");
  assert.equal(config.code, "config_syntax");
  assert.match(
    config.finding,
    /^Invalid configuration: .* at line 2, column \d+ .*JSON decode error/,
  );
  assert.match(config.finding, /trailing comma/i);
  assert.equal(config.remedy, ROWS.json_syntax.remedy.repl);
  assert.ok(config.details.some((d) => d.includes("^")), config.details.join("\n"));
  for (const name of ["permissions", "api_key", "provider", "memory"]) {
    assert.equal(run.check(name).status, "skip", name);
  }
});

Deno.test("Missing required field: names the field, remedy says mcpServers may be {}", async () => {
  await using box = await sandbox();
  await writeConfig(box, { LLM: { provider: "openai" }, mcpServers: {} });
  const run = await runDoctor(box, ["--offline"]);
  assert.equal(run.code, 1);
  const config = run.check("config");
  assert.equal(config.status, "fail");
  assert.match(config.finding, /Missing required field: LLM\.model/);
  assert.equal(config.remedy, ROWS.missing_field.remedy.repl);
});

Deno.test("Invalid API key: missing, and a key of another provider", async () => {
  await using box = await sandbox();
  await writeConfig(box, configWith());
  const missing = await runDoctor(box, ["--offline"]);
  assert.equal(missing.code, 1);
  const key = missing.check("api_key");
  assert.equal(key.status, "fail");
  assert.match(key.finding, /^Invalid API key — LLM_API_KEY is not set; provider openai/);
  assert.equal(key.remedy, ROWS.api_key.remedy.repl);
  assert.equal(missing.check("provider").status, "skip");

  await writeEnv(box, "LLM_API_KEY=gsk_0123456789abcdefghij\n");
  const wrong = await runDoctor(box, ["--offline"]);
  const groq = wrong.check("api_key");
  assert.equal(groq.status, "fail");
  assert.match(groq.finding, /does not look like an OpenAI key.*looks like a Groq key/);
  assert.equal(groq.remedy, ROWS.api_key.remedy.repl);
});

Deno.test("a stale key in the shell that overrides .env is a warning", async () => {
  await using llm = await startScriptedLlm();
  await using box = await sandbox();
  await writeEnv(box, "LLM_API_KEY=sk-from-the-file\n");
  await writeConfig(box, { LLM: llmAt(llm), mcpServers: {} });
  const run = await runDoctor(box, [], { env: { LLM_API_KEY: "sk-from-the-shell" } });
  const key = run.check("api_key");
  assert.equal(key.status, "warn");
  assert.match(key.finding, /from the process environment.*\.env holds a different LLM_API_KEY/);
  assert.match(key.remedy!, /unset LLM_API_KEY/);
});

Deno.test("Authentication failed: the provider refuses the key (HTTP 401)", async () => {
  await using llm = await startScriptedLlm({ apiKey: "sk-the-right-key" });
  await using box = await sandbox();
  await writeEnv(box, "LLM_API_KEY=sk-a-wrong-key\n");
  await writeConfig(box, { LLM: llmAt(llm), mcpServers: {} });
  const run = await runDoctor(box);
  assert.equal(run.code, 1);
  assert.equal(run.check("api_key").status, "pass");
  const provider = run.check("provider");
  assert.equal(provider.status, "fail");
  assert.equal(provider.code, "authentication_failed");
  assert.match(provider.finding, /^Authentication failed — .*refused LLM_API_KEY.*HTTP 401/);
  assert.equal(provider.remedy, ROWS.api_key.remedy.repl);
  assert.ok(!run.stdout.includes("sk-a-wrong-key"), "the key never appears in the output");
});

Deno.test("Rate limit exceeded: the provider answers 429", async () => {
  await using llm = await startScriptedLlm({
    modelsReplies: [{
      status: 429,
      errorMessage: "Rate limit reached",
      headers: { "retry-after": "7" },
    }],
  });
  await using box = await sandbox();
  await writeEnv(box, `LLM_API_KEY=${KEY}\n`);
  await writeConfig(box, { LLM: llmAt(llm), mcpServers: {} });
  const run = await runDoctor(box);
  assert.equal(run.code, 1);
  const provider = run.check("provider");
  assert.equal(provider.status, "fail");
  assert.match(provider.finding, /^Rate limit exceeded \(Too many requests\) — .*HTTP 429/);
  assert.match(provider.finding, /asked to wait 7 s/);
  assert.equal(provider.remedy, ROWS.rate_limit.remedy.script);
});

Deno.test("Connection refused: the provider's address has nothing listening", async () => {
  await using box = await sandbox();
  await writeEnv(box, `LLM_API_KEY=${KEY}\n`);
  const port = freePort();
  await writeConfig(box, { LLM: llmAt(`http://127.0.0.1:${port}/v1`), mcpServers: {} });
  const run = await runDoctor(box);
  const provider = run.check("provider");
  assert.equal(provider.status, "fail");
  assert.match(provider.finding, new RegExp(`^Connection refused — .*127\\.0\\.0\\.1:${port}`));
  assert.match(provider.remedy!, /start .* so that it listens/);
});

/**
 * A provider address no DNS server is ever asked about: a name with a label longer than 63
 * characters is refused before any query (fetch rejects it as a TLS server name, the system
 * resolver and Deno.resolveDns as a DNS name; traced here, none of them opened a socket).
 */
const UNRESOLVABLE = `${"a".repeat(70)}.invalid`;

Deno.test("Network unreachable: a proxy that does not listen, and one that is not a URL", async () => {
  // The proxies this test means are its own: none is passed on from the machine running it.
  await using box = await sandbox({ ...WITHOUT_PROXIES });
  // The provider's own name cannot resolve: were the proxy bypassed, the request would
  // still stay on this machine.
  await writeConfig(box, {
    LLM: { provider: "openai", model: "gpt-4o-mini", base_url: `https://${UNRESOLVABLE}/v1` },
    mcpServers: {},
  });
  const port = freePort();
  const proxy = `http://127.0.0.1:${port}`;
  await writeEnv(box, `LLM_API_KEY=${KEY}\nHTTPS_PROXY=${proxy}\n`);
  const down = await runDoctor(box);
  assert.equal(down.code, 1);
  assert.deepEqual(down.check("proxy"), {
    name: "proxy",
    status: "pass",
    finding: `model requests to ${UNRESOLVABLE} go through the proxy ${proxy} (HTTPS_PROXY)`,
    remedy: null,
    details: [],
  });
  assert.equal(
    down.check("dns").finding,
    "the proxy host 127.0.0.1 is an IP address: nothing to resolve",
  );
  const provider = down.check("provider");
  assert.equal(provider.status, "fail");
  assert.match(
    provider.finding,
    new RegExp(
      `^Connection refused — nothing accepted the connection to the proxy ` +
        `http://127\\.0\\.0\\.1:${port} \\(HTTPS_PROXY\\) .*; requests to .* at ` +
        `${UNRESOLVABLE} go through it$`,
    ),
  );
  assert.equal(
    provider.remedy,
    `start the proxy at ${proxy}, or correct HTTPS_PROXY (in .env or the environment); if ` +
      `${UNRESOLVABLE} should be reached directly, add it to NO_PROXY (or unset HTTPS_PROXY); ` +
      "then restart patchbay",
  );

  // A port above 65535: the variable cannot be a proxy's address at all.
  await writeEnv(box, `LLM_API_KEY=${KEY}\nHTTPS_PROXY=http://127.0.0.1:99999\n`);
  const invalid = await runDoctor(box);
  assert.equal(invalid.code, 1);
  const setting = invalid.check("proxy");
  assert.equal(setting.status, "fail");
  assert.equal(setting.code, "network");
  assert.equal(
    setting.finding,
    'Network unreachable — HTTPS_PROXY is not a URL: "http://127.0.0.1:99999"',
  );
  assert.equal(
    setting.remedy,
    "set the proxy variable to a URL such as http://proxy.example.com:3128, in .env or the " +
      "environment, then restart patchbay",
  );
  assert.equal(invalid.check("dns").status, "skip");
  assert.match(invalid.check("dns").finding, /the proxy variable is not a URL/);
  assert.match(invalid.check("provider").finding, /^Invalid proxy setting/);
});

Deno.test("Network unreachable: the provider's host name does not resolve", async () => {
  // Without a proxy (none passed on from the machine), the name is this machine's to resolve.
  await using box = await sandbox({ ...WITHOUT_PROXIES });
  // Deno.resolveDns answers for the special-use domain .invalid (RFC 6761) itself: here no
  // query reached even a name server on 127.0.0.1 that was named to it. fetch goes through
  // the system resolver, which would send one, so LLM_API_KEY stays unset: the provider is
  // not asked, and only the DNS check looks the name up.
  const missing = "patchbay-doctor-test.invalid";
  await writeConfig(box, {
    LLM: { provider: "openai", model: "gpt-4o-mini", base_url: `https://${missing}/v1` },
    mcpServers: {},
  });
  const noRecord = await runDoctor(box, [], { global: ["--unrestricted"] });
  assert.equal(noRecord.code, 1);
  assert.equal(noRecord.check("provider").status, "skip");
  const dns = noRecord.check("dns");
  assert.equal(dns.status, "fail");
  assert.equal(dns.code, "network");
  assert.equal(
    dns.finding,
    `Network unreachable — the host name ${missing} does not resolve (no DNS record)`,
  );
  assert.equal(
    dns.remedy,
    `check the address (LLM.base_url or the provider); ${ROWS.network.remedy.repl}`,
  );

  // A name no resolver accepts fails in the DNS check as it does in the provider request,
  // with what is wrong with it rather than the resolver's protocol error.
  await writeConfig(box, {
    LLM: { provider: "openai", model: "gpt-4o-mini", base_url: `https://${UNRESOLVABLE}/v1` },
    mcpServers: {},
  });
  await writeEnv(box, `LLM_API_KEY=${KEY}\n`);
  const malformed = await runDoctor(box, [], { global: ["--unrestricted"] });
  assert.equal(malformed.code, 1);
  const label = malformed.check("dns");
  assert.equal(label.status, "fail");
  assert.equal(
    label.finding,
    `Network unreachable — the host name ${UNRESOLVABLE} cannot resolve: it has a label of ` +
      "70 characters (at most 63 are allowed)",
  );
  assert.equal(label.remedy, "check the address (LLM.base_url or the provider)");
  const provider = malformed.check("provider");
  assert.equal(provider.status, "fail");
  assert.match(
    provider.finding,
    new RegExp(`^Network unreachable — the host name '${UNRESOLVABLE}' does not resolve`),
  );
});

Deno.test("a model the provider does not list is a warning with a suggestion", async () => {
  await using llm = await startScriptedLlm({ models: ["gpt-4o-mini", "gpt-4o"] });
  await using box = await sandbox();
  await writeEnv(box, `LLM_API_KEY=${KEY}\n`);
  await writeConfig(box, {
    LLM: { ...llmAt(llm), model: "gpt-4o-mnii" },
    mcpServers: {},
  });
  const run = await runDoctor(box);
  assert.equal(run.code, 0);
  const provider = run.check("provider");
  assert.equal(provider.status, "warn");
  assert.match(provider.finding, /do not include "gpt-4o-mnii"/);
  assert.match(provider.remedy!, /did you mean "gpt-4o-mini"/);
});

Deno.test("servers: not running, wrong path, wrong transport, timeout, missing command — each diagnosed", async () => {
  await using http = await startEverythingHttp("streamableHttp");
  await using silent = silentListener();
  await using box = await sandbox();
  await writeEnv(box, `LLM_API_KEY=${KEY}\n`);
  const down = freePort();
  const announced = freePort();
  await writeConfig(box, {
    LLM: llmAt(`http://127.0.0.1:${freePort()}/v1`),
    mcpServers: {
      good: { command: NODE, args: [everythingEntry(), "stdio"] },
      down: { transport_type: "streamable_http", url: `http://127.0.0.1:${down}/mcp` },
      wrongpath: { transport_type: "streamable_http", url: `${http.origin}/wrong` },
      wrongtransport: { transport_type: "sse", url: `${http.origin}/mcp` },
      stdiohttp: {
        command: NODE,
        args: [everythingEntry(), "streamableHttp"],
        env: { PORT: String(announced) },
        timeout: 3,
      },
      silent: {
        transport_type: "streamable_http",
        url: `http://127.0.0.1:${silent.port}/mcp`,
        timeout: 2,
      },
      missing: { command: "patchbay-no-such-server-command", args: [] },
      parked: { command: NODE, args: [everythingEntry(), "stdio"], disabled: true },
    },
  });
  const run = await runDoctor(box, ["--offline"], { global: ["--unrestricted"] });
  assert.equal(run.code, 1);
  const contract = /^Failed to connect to server '(\w+)': Session terminated — /;
  // --offline skips the internet only: a provider on this machine is still asked.
  assert.match(run.check("provider").finding, /^Connection refused — /);

  assert.equal(run.check("server:good").status, "pass");

  const notRunning = run.check("server:down");
  assert.equal(notRunning.status, "fail");
  assert.match(notRunning.finding, contract);
  assert.match(
    notRunning.finding,
    new RegExp(`Connection refused: nothing is listening at 127\\.0\\.0\\.1:${down}`),
  );
  assert.match(notRunning.remedy!, /^start the server first, then the client/);

  const wrongPath = run.check("server:wrongpath");
  assert.match(wrongPath.finding, contract);
  assert.match(wrongPath.finding, /HTTP 404 .*nothing serves MCP at the path '\/wrong'/);
  assert.equal(wrongPath.remedy, `set "url" to ${http.origin}/mcp (found by probing)`);

  const wrongTransport = run.check("server:wrongtransport");
  assert.match(wrongTransport.finding, contract);
  assert.match(wrongTransport.finding, /wrong transport_type: .* speaks streamable HTTP, not sse/);
  assert.match(
    wrongTransport.remedy!,
    /^use the transport the server documents.*"transport_type": "streamable_http"/,
  );

  const stdioHttp = run.check("server:stdiohttp");
  assert.match(stdioHttp.finding, contract);
  assert.match(
    stdioHttp.finding,
    new RegExp(
      `wrong transport_type: .*serves MCP over HTTP \\(streamable_http\\) at http://127\\.0\\.0\\.1:${announced}/mcp`,
    ),
  );
  assert.match(stdioHttp.remedy!, /^use the transport the server documents/);

  const timeout = run.check("server:silent");
  assert.match(timeout.finding, contract);
  assert.match(
    timeout.finding,
    /Connection timeout: .*accepted the connection but sent no HTTP answer/,
  );
  assert.equal(timeout.remedy, ROWS.timeout.remedy.repl);

  const missing = run.check("server:missing");
  assert.match(missing.finding, contract);
  assert.match(missing.finding, /command 'patchbay-no-such-server-command' not found on PATH/);
  assert.match(missing.remedy!, /give the full path/);
  assert.ok(missing.details.some((d) => d.startsWith("PATH: ")), missing.details.join("\n"));

  const parked = run.check("server:parked");
  assert.equal(parked.status, "skip");
  assert.match(parked.finding, /"disabled": true/);
});

Deno.test("a malformed .env line is a warning naming the line", async () => {
  await using llm = await startScriptedLlm();
  await using box = await sandbox();
  await writeEnv(box, `LLM_API_KEY=${KEY}\nthis is not a pair\nOPEN="never closed\n`);
  await writeConfig(box, { LLM: llmAt(llm), mcpServers: {} });
  const run = await runDoctor(box);
  const env = run.check("env_file");
  assert.equal(env.status, "warn");
  assert.match(env.finding, /2 lines could not be read and were ignored/);
  assert.deepEqual(env.details, [
    "line 2: expected NAME=value",
    'line 3: value of OPEN has no closing "',
  ]);
  assert.equal(run.check("api_key").status, "pass");
});

Deno.test("Could not connect to the store: Redis down, wrong password, wrong database", async () => {
  await using redis = await RedisServer.start({ password: "s3cret", args: ["--databases", "4"] });
  await using box = await sandbox();
  await writeConfig(box, configWith());
  const memory = async (env: Record<string, string>) =>
    (await runDoctor(box, ["--offline"], { env: { LLM_API_KEY: KEY, ...env } })).check("memory");

  const good = await memory(redis.env);
  assert.equal(good.status, "pass", good.finding);
  assert.match(good.finding, new RegExp(`Redis at 127\\.0\\.0\\.1:${redis.port} db 0 answers`));

  const down = freePort();
  const refused = await memory({ REDIS_HOST: "127.0.0.1", REDIS_PORT: String(down) });
  assert.equal(refused.status, "fail");
  assert.match(
    refused.finding,
    new RegExp(`^Could not connect to Redis at 127\\.0\\.0\\.1:${down} db 0: connection refused`),
  );
  assert.equal(refused.remedy, ROWS.store.remedy.script);

  const wrongPassword = await memory({ ...redis.env, REDIS_PASSWORD: "wrong" });
  assert.equal(wrongPassword.status, "fail");
  assert.match(wrongPassword.finding, /^Could not connect to Redis at .*: wrong password/);
  assert.match(wrongPassword.remedy!, /set REDIS_PASSWORD/);

  const wrongDb = await memory({ ...redis.env, REDIS_DB: "9" });
  assert.equal(wrongDb.status, "fail");
  assert.match(wrongDb.finding, /database 9 does not exist \(this server has 4: 0-3\)/);
  assert.match(wrongDb.remedy!, /REDIS_DB/);
});

Deno.test("an unwritable log file: refused by Deno's sandbox, and by the file system", async () => {
  await using box = await sandbox();
  await writeConfig(box, configWith());
  // --unrestricted may write only patchbay's own folders: a log in the working directory
  // is a missing Deno permission, named as the flag to add.
  const logFile = join(box.cwd, "doctor.log");
  const run = await runDoctor(box, ["--offline"], {
    global: ["--unrestricted", "--log-file", logFile],
    env: { LLM_API_KEY: KEY },
  });
  assert.equal(run.code, 1);
  const log = run.check("log_file");
  assert.equal(log.status, "fail");
  assert.equal(log.code, "deno_permission");
  assert.match(log.finding, new RegExp(`^Permission denied: writing the log file ${logFile}`));
  assert.match(log.remedy!, new RegExp(`^add --allow-write=${logFile} `));
  const permissions = run.check("permissions");
  assert.equal(permissions.status, "fail");
  assert.ok(
    permissions.details.some((d) => d.startsWith(`--allow-write=${logFile}`)),
    permissions.details.join("\n"),
  );

  // A path through a regular file cannot be created by anyone, root included.
  const blocker = join(box.cwd, "not-a-folder");
  await Deno.writeTextFile(blocker, "");
  const path = join(blocker, "patchbay.log");
  const logger = new Logger({ file: path });
  const result = checkLogFile(logger, path);
  logger.close();
  assert.equal(result.status, "fail");
  assert.match(result.finding, /a part of the path that should be a folder is a file/);
  assert.match(result.remedy!, /--log-file/);
});

Deno.test("text output: one line per check, remedies under failures, exit code 1", async () => {
  await using box = await sandbox();
  await writeConfig(box, configWith());
  const { runPatchbay } = await import("../support/cli.ts");
  const run = await runPatchbay(box, ["doctor", "--offline"]);
  assert.equal(run.code, 1);
  const lines = run.stdout.split("\n");
  assert.match(lines[0], /^patchbay \d+\.\d+\.\d+ doctor · .*servers_config\.json · offline$/);
  const failed = lines.findIndex((l) => l.startsWith("✗ fail  api_key"));
  assert.ok(failed > 0, run.stdout);
  assert.match(lines[failed], /Invalid API key/);
  assert.match(lines[failed + 1], /^\s+remedy: set LLM_API_KEY/);
  assert.ok(lines.some((l) => /^- skip {2}provider\s+not asked/.test(l)), run.stdout);
  assert.match(run.stdout, /\d+ checks? passed, \d+ warnings?, 1 failed, \d+ skipped/);
});
