/**
 * Rough edges, each through the real entry point: the server header of a
 * scripting command counts every server, `run --json`'s `text_done` carries the text.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { DENO, NODE } from "../support/deps.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { assumingClosed, freePort, silentListener } from "../support/servers.ts";
import { createEnvironment } from "../../lib/env.ts";
import { RateLimitError } from "../../lib/errors.ts";
import { createOpenAiProvider } from "../../lib/llm/openai_provider.ts";
import { capture } from "../support/errors.ts";
import { RedisServer } from "../support/redis.ts";
import { startRepl } from "../support/repl.ts";
import { runDoctor } from "../support/doctor.ts";

const FAILING_SERVER = fileURLToPath(
  new URL("../fixtures/failing_tools_server.ts", import.meta.url),
);

Deno.test("a scripting command's server header counts every server, and lists the failed", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  const closed = freePort();
  await assumingClosed(closed, async () => {
    await writeConfig(box, {
      LLM: { provider: "openai", model: "gpt-4o-mini" },
      mcpServers: {
        good: { command: DENO, args: ["run", FAILING_SERVER] },
        other: { command: DENO, args: ["run", FAILING_SERVER] },
        offline: { transport_type: "streamable_http", url: `http://127.0.0.1:${closed}/mcp` },
        parked: { command: "patchbay-never-started", disabled: true },
      },
    });
    const result = await runPatchbay(box, ["tools"]);
    // A server that failed makes the command fail; the tools of the others are listed.
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stdout, /rpcerr/);
    // Three enabled servers, two connected: not "0 of 1" (the failed subset alone).
    assert.match(result.stderr, /^Servers {2}2 of 3 servers connected$/m);
    assert.match(result.stderr, /✗ offline\s+failed/);
    assert.doesNotMatch(result.stderr, /✓ good|✓ other|parked/);
  });
});

Deno.test("run --json: text_done carries the whole text, as docs/scripting.md says", async () => {
  await using llm = await startScriptedLlm({ replies: [{ text: "hello there, person" }] });
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: {},
  });
  const result = await runPatchbay(box, ["run", "--json", "say hello"]);
  assert.equal(result.code, 0, result.stderr);
  const events = result.stdout.trim().split("\n").map((line) => JSON.parse(line));
  const done = events.filter((e) => e.type === "text_done");
  assert.deepEqual(done, [{ type: "text_done", text: "hello there, person" }]);
  const deltas = events.filter((e) => e.type === "text_delta").map((e) => e.text).join("");
  assert.equal(deltas, "hello there, person");
});

Deno.test("a connect timeout names the server's configured timeout, not the probe's", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  // Accepts connections and never answers: the attempt runs out of the entry's "timeout".
  await using silent = silentListener();
  await writeConfig(box, {
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: {
      silent: {
        transport_type: "streamable_http",
        url: `http://127.0.0.1:${silent.port}/mcp`,
        timeout: 3,
      },
    },
  });
  const result = await runPatchbay(box, ["tools"]);
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stderr, /cause: +Connection timeout: .*within 3 s \(its "timeout"\)/);
  assert.doesNotMatch(result.stderr, /within 1 s/);
});

Deno.test("the retry summary gives the request's whole time, not only the waits", async () => {
  // Each answer takes 1.2 s to arrive; the wait between the attempts is short.
  const slowRefusal = { status: 429, errorMessage: "slow down", delayMs: 1200 };
  await using server = await startScriptedLlm({ replies: [slowRefusal, slowRefusal] });
  const provider = createOpenAiProvider({
    llm: {
      provider: "openai",
      model: "gpt-test",
      maxTokens: 256,
      maxContextLength: 8000,
      timeoutSeconds: 10,
      maxRetries: 1,
      baseUrl: server.baseUrl,
    },
    env: createEnvironment({ LLM_API_KEY: "sk-test-0123456789abcdef0123" }, new Map()),
    random: () => 0,
  });
  try {
    const error = await capture(
      provider.generate({ messages: [{ role: "user", content: "hi" }], onDelta: () => {} }),
    );
    assert.ok(error instanceof RateLimitError, String(error));
    const over = /1 retry was made over (\d+\.\d) s/.exec(error.reason);
    assert.ok(over, error.reason);
    // Two answers of 1.2 s each at least: the waits alone (under a second) said far less.
    assert.ok(Number(over[1]) >= 2.4, error.reason);
  } finally {
    provider.close();
  }
});

Deno.test("Redis refusing the password: the contract's message first, then what patchbay does; /memory off is quiet", async () => {
  await using redis = await RedisServer.start({ password: "right-password" });
  await using llm = await startScriptedLlm();
  await using box = await sandbox();
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: {},
    Memory: { backend: "redis" },
  });
  await using repl = await startRepl(box, {
    env: { ...redis.env, REDIS_PASSWORD: "wrong-password" },
  });
  const screen = await repl.tmux.screen();
  const contract =
    `error: Could not connect to Redis at 127.0.0.1:${redis.port} db 0: wrong password`;
  const journal = screen.indexOf("Memory continues in a local journal");
  assert.ok(screen.includes(contract), screen);
  assert.ok(journal > screen.indexOf(contract), `the error comes first:\n${screen}`);
  // A store that refused the password does not take the messages by itself later.
  assert.doesNotMatch(screen, /written to .* when it answers/);
  assert.match(screen, /messages wait there and are written to Redis at .* by the first run/);
  assert.match(screen, /Memory on: Redis at .* refused the connection/);

  const off = await repl.send("/memory", /Memory off/);
  assert.doesNotMatch(off, /error: Could not connect/, "switching memory off repeats the error");
});

Deno.test("without a key, the remedy stands right under the model line it answers", async () => {
  await using box = await sandbox();
  await writeConfig(box, { LLM: { provider: "openai", model: "gpt-4o-mini" }, mcpServers: {} });
  await using repl = await startRepl(box, { env: { LLM_API_KEY: undefined } });
  const lines = (await repl.tmux.screen()).split("\n");
  const model = lines.findIndex((line) => /Invalid API key/.test(line));
  assert.ok(model >= 0, lines.join("\n"));
  assert.match(lines[model + 1], /^ {2}remedy: set LLM_API_KEY/, lines.join("\n"));
});

Deno.test(".env beside the --config file is read when the working directory has none, and said", async () => {
  await using llm = await startScriptedLlm({ replies: [{ text: "keyed" }] });
  await using box = await sandbox();
  const elsewhere = join(box.home, "elsewhere");
  await Deno.mkdir(elsewhere);
  const config = join(elsewhere, "servers_config.json");
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
      mcpServers: {},
    }),
  );
  await Deno.writeTextFile(join(elsewhere, ".env"), "LLM_API_KEY=key-from-beside-config\n");

  const run = await runPatchbay(box, ["--config", config, "run", "hello"]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout.trim(), "keyed");
  assert.equal(llm.requests[0].headers["authorization"], "Bearer key-from-beside-config");
  assert.match(
    run.stderr,
    /read the environment from .*elsewhere\/\.env, beside the configuration/,
  );

  const doctor = await runDoctor(box, ["--offline"], { global: ["--config", config] });
  const envFile = doctor.check("env_file");
  assert.equal(envFile.status, "pass");
  assert.match(envFile.finding, /elsewhere\/\.env .*loaded: 1 variable|elsewhere\/\.env \(beside/);
  assert.doesNotMatch(envFile.finding, /no environment file/);
});

Deno.test("a crashing Node server: its error line is kept, not cut off by stack frames", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  const script = join(box.cwd, "crash.mjs");
  await Deno.writeTextFile(script, 'import "no-such-package-patchbay";\n');
  await writeConfig(box, {
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: { crash: { command: NODE, args: [script] } },
  });
  const result = await runPatchbay(box, ["tools"]);
  assert.equal(result.code, 1, result.stderr);
  assert.match(
    result.stderr,
    /stderr: Error \[ERR_MODULE_NOT_FOUND\]: Cannot find package 'no-such-package-patchbay'/,
  );
  assert.doesNotMatch(result.stderr, /stderr: +at /, "stack frames crowd out the error");
  assert.match(
    result.stderr,
    /exited with code 1 before completing the MCP handshake \(its last stderr lines are shown with this error\)/,
  );
});
