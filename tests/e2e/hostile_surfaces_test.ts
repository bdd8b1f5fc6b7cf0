/**
 * What a hostile server sends reaches no surface with a secret in it or terminal control
 * intact (docs/security-hostile-servers.md): a stdio server that reflects its arguments
 * and environment in plain, split and base64 forms, logs OSC 52 / title / bidi
 * sequences, lists look-alike names and serves a binary resource, driven through
 * `deno task start` and the scripted model.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runPatchbay, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { DENO } from "../support/deps.ts";
import { PATCHBAY, startRepl, terminalEnv } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { TmuxSession } from "../support/tmux.ts";
import { startReflectingHttp } from "../fixtures/reflecting_http_server.ts";

const REFLECTING = fileURLToPath(new URL("../fixtures/reflecting_server.ts", import.meta.url));

/** From `.env`: a password in the server's arguments, a credential in its environment. */
const DBPASS = "Pa55-word-from-dotenv";
const UPSTREAM = "upstream-cred-7f3a9c01";
const SECRETS = [DBPASS, UPSTREAM];

/** Fails when `text` holds a secret: plain, either half of it, or inside any base64 word. */
function assertNoSecret(text: string, where: string): void {
  for (const secret of SECRETS) {
    const half = Math.floor(secret.length / 2);
    for (const part of [secret, secret.slice(0, half), secret.slice(half)]) {
      assert.ok(!text.includes(part), `${where} shows '${part}' of a secret:\n${text}`);
    }
    for (const [word] of text.matchAll(/[A-Za-z0-9+/]{12,}={0,2}/g)) {
      for (const start of [0, 1, 2, 3]) {
        let decoded = "";
        try {
          const piece = word.slice(start);
          decoded = atob(piece.slice(0, piece.length - (piece.length % 4)));
        } catch {
          continue;
        }
        assert.ok(!decoded.includes(secret), `${where} shows a secret in base64 (${word})`);
      }
    }
  }
}

async function reflectingBox(extra: Record<string, unknown> = {}): Promise<Sandbox> {
  const box = await sandbox();
  await Deno.writeTextFile(
    join(box.cwd, ".env"),
    `DBPASS=${DBPASS}\nUPSTREAM_CRED=${UPSTREAM}\nLLM_API_KEY=test-key-123456\n`,
  );
  await writeConfig(box, {
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: {
      refl: {
        command: DENO,
        args: [
          "run",
          "--allow-env",
          REFLECTING,
          "--password",
          "${DBPASS}",
          "--echo-env=UPSTREAM",
        ],
        env: { UPSTREAM: "${UPSTREAM_CRED}" },
      },
    },
    ...extra,
  });
  return box;
}

const logOf = (box: Sandbox) =>
  Deno.readTextFileSync(join(box.home, ".local/state/patchbay/patchbay.log"));

Deno.test("secrets a server reflects are masked in call, its JSON, its errors and the log", async () => {
  await using box = await reflectingBox();
  const text = await runPatchbay(box, ["call", "refl.reflect"]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /plain \[REDACTED\]/);
  assert.match(text.stdout, /split \[REDACTED\]/);
  assertNoSecret(text.stdout + text.stderr, "call");

  const json = await runPatchbay(box, ["call", "--json", "refl.reflect"]);
  assert.equal(json.code, 0, json.stderr);
  assertNoSecret(json.stdout + json.stderr, "call --json");
  JSON.parse(json.stdout);

  const failed = await runPatchbay(box, ["call", "refl.fail"]);
  assert.equal(failed.code, 1, failed.stdout);
  assert.match(failed.stderr, /rejected \[REDACTED\]/);
  assertNoSecret(failed.stdout + failed.stderr, "a tool's error");

  const log = logOf(box);
  assert.match(log, /\[REDACTED\]/);
  assertNoSecret(log, "the log");
});

Deno.test("a server that dies quoting its secrets on stderr: the failure's cause is masked", async () => {
  await using box = await reflectingBox();
  const config = JSON.parse(await Deno.readTextFile(join(box.cwd, "servers_config.json")));
  config.mcpServers.refl.args.push("--die-quoting");
  await writeConfig(box, config);
  const result = await runPatchbay(box, ["tools", "refl"]);
  assert.equal(result.code, 1, result.stdout);
  assert.match(result.stderr, /cannot log in with \[REDACTED\]/);
  assertNoSecret(result.stdout + result.stderr, "the failure");
  const json = await runPatchbay(box, ["tools", "--json", "refl"]);
  assertNoSecret(json.stdout + json.stderr, "the failure in JSON");
  assertNoSecret(logOf(box), "the log");
});

Deno.test("a model turn sends the model provider no secret a tool reflected", async () => {
  await using llm = await startScriptedLlm();
  await using box = await reflectingBox({
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
  });
  llm.enqueue({ toolCalls: [{ name: "refl__reflect", arguments: {} }] }, { text: "done" });
  const result = await runPatchbay(box, ["run", "--json", "--yes", "reflect it"]);
  assert.equal(result.code, 0, result.stderr + result.stdout);
  assert.equal(llm.requests.length, 2);
  const sent = JSON.stringify(llm.requests.map((r) => r.body));
  assert.match(sent, /plain \[REDACTED\]/, "the tool result reached the model");
  assertNoSecret(sent, "the model request");
  assertNoSecret(result.stdout + result.stderr, "run --json");
});

Deno.test("a sampling request a server fills with what it was given reaches the model masked", async () => {
  await using llm = await startScriptedLlm();
  await using box = await reflectingBox({
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
  });
  const config = JSON.parse(await Deno.readTextFile(join(box.cwd, "servers_config.json")));
  config.mcpServers.refl.sampling = "allow";
  await writeConfig(box, config);
  llm.enqueue(
    { toolCalls: [{ name: "refl__ask", arguments: {} }] },
    { text: "sampled answer" },
    { text: "done" },
  );
  const result = await runPatchbay(box, ["run", "--json", "--yes", "ask it"]);
  assert.equal(result.code, 0, result.stderr + result.stdout);
  assert.equal(llm.requests.length, 3);
  const sampling = JSON.stringify(llm.requests[1].body);
  assert.match(sampling, /what is \[REDACTED\] and \[REDACTED\]/);
  assert.match(sampling, /you know \[REDACTED\]/);
  assert.match(JSON.stringify(llm.requests[2].body), /model said sampled answer/);
  assertNoSecret(JSON.stringify(llm.requests.map((r) => r.body)), "the model requests");
  assertNoSecret(result.stdout + result.stderr, "run --json");
});

Deno.test("a password from a variable in a server's arguments is masked wherever the command line is shown", async () => {
  await using box = await reflectingBox();
  const check = await runPatchbay(box, ["config", "check", "--json"]);
  assert.equal(check.code, 0, check.stderr);
  assert.match(check.stdout, /"--password",\s*"\[REDACTED\]"/);
  assertNoSecret(check.stdout, "config check --json");

  const summary = await runPatchbay(box, ["config", "check"]);
  assert.match(summary.stdout, /--password \[REDACTED\] --echo-env=UPSTREAM/);
  assertNoSecret(summary.stdout, "config check");

  const tools = await runPatchbay(box, ["--debug", "tools", "refl"]);
  assert.equal(tools.code, 0, tools.stderr);
  assert.match(tools.stderr, /started pid \d+[^:]*: .* --password \[REDACTED\]/);
  assertNoSecret(tools.stdout + tools.stderr, "tools --debug");
  assertNoSecret(logOf(box), "the debug log");
});

Deno.test("a server's log notification reaches --debug and the log file with its control sequences escaped", async () => {
  await using box = await reflectingBox();
  const result = await runPatchbay(box, ["--debug", "tools", "refl"]);
  assert.equal(result.code, 0, result.stderr);
  for (const [where, text] of [["stderr", result.stderr], ["log file", logOf(box)]]) {
    assert.ok(!text.includes("\u001b"), `${where} holds an escape character`);
    assert.ok(!text.includes("\u202e"), `${where} holds a bidi override`);
    assert.match(text, /clip\\x1b\]52;c;SGFja2Vk\\x07/, `${where}: OSC 52 shown, escaped`);
    assert.match(text, /bidi\\u\{202e\}TXT\.EXE/, `${where}: the override shown, escaped`);
    assert.match(text, /evil\\x1b\]0;LOGGER-TITLE\\x07/, `${where}: logger name escaped`);
    assertNoSecret(text, where);
  }
});

Deno.test("names with invisible characters are shown escaped, on one line, and look-alikes are warned about", async () => {
  await using box = await reflectingBox();
  const result = await runPatchbay(box, ["tools", "refl"]);
  assert.equal(result.code, 0, result.stderr);
  const lines = result.stdout.split("\n");
  assert.ok(lines.some((l) => /^ {2}read_file\(\)$/.test(l)), result.stdout);
  assert.ok(lines.some((l) => /^ {2}read\\u\{200b\}_file\(\)$/.test(l)), result.stdout);
  assert.ok(lines.some((l) => /^ {2}ok\\nargs: \{\}\(\)$/.test(l)), result.stdout);
  assert.ok(!lines.some((l) => /^args: \{\}/.test(l)), "a name drew a line of its own");
  assert.match(
    result.stdout,
    /⚠ tools 'read_file' and 'read\\u\{200b\}_file' differ only by invisible characters/,
  );
  assert.match(logOf(box), /WARN .*tools 'read_file' and 'read\\u\{200b\}_file' differ only/);
  const called = await runPatchbay(box, ["call", "refl.read\u200b_file"]);
  assert.equal(called.code, 0, called.stderr);
  assert.match(called.stdout, /ran read\u200b_file|ran read_file/);
});

Deno.test("read passes a binary resource's bytes to a pipe, or to the file --output names, as they are", async () => {
  await using box = await reflectingBox();
  const result = await runPatchbay(box, ["read", "blob://bytes"]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, "\u001b]2;BLOB-TITLE\u0007raw");
  const saved = await runPatchbay(box, ["read", "blob://bytes", "--output", "saved.png"]);
  assert.equal(saved.code, 0, saved.stderr);
  assert.equal(saved.stdout, "");
  assert.match(saved.stderr, /Wrote 18 bytes to saved\.png/);
  assert.equal(
    await Deno.readTextFile(join(box.cwd, "saved.png")),
    "\u001b]2;BLOB-TITLE\u0007raw",
  );
});

Deno.test("the interactive client: /call, a model turn, /history and /debug show no secret and no raw control", async () => {
  await using llm = await startScriptedLlm();
  await using box = await reflectingBox({
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
  });
  await using repl = await startRepl(box, { args: ["--yes"] });
  const called = await repl.send("/call refl.reflect", "[REDACTED] end");
  assert.match(called, /plain \[REDACTED\]/);
  assertNoSecret(called, "/call");

  llm.enqueue({ toolCalls: [{ name: "refl__reflect", arguments: {} }] }, { text: "reflected" });
  await repl.send("reflect it", /reflected[\s\S]*\d+ tokens/);
  assertNoSecret(JSON.stringify(llm.requests.map((r) => r.body)), "the model request");
  const history = await repl.send("/history", "conversation ");
  assertNoSecret(history, "/history");
  const connections = await repl.send("/connections", /reflect\\u\{202e\}ing 1\.0\.0/);
  assert.match(connections, /--password \[REDACTED\]/);
  assertNoSecret(connections, "/connections");

  await repl.send("/debug", /[Dd]ebug/);
  const debug = await repl.send("/refresh refl", "LOGGER-TITLE");
  assert.match(debug, /clip\\x1b\]52;c;SGFja2Vk\\x07/);
  assert.match(debug, /bidi\\u\{202e\}TXT\.EXE/);
  assertNoSecret(await repl.tmux.screen(), "the screen");
});

Deno.test("read describes a binary resource on a terminal instead of writing its bytes", async () => {
  await using box = await reflectingBox();
  await using tmux = await TmuxSession.start({
    command: [...PATCHBAY, "read", "blob://bytes"],
    env: terminalEnv(box),
    cwd: box.cwd,
    width: 200,
    height: 20,
  });
  assert.equal(await tmux.exitCode(60_000), 0, await tmux.screen());
  const screen = await tmux.screen();
  assert.match(
    screen,
    /\[binary content of blob:\/\/bytes: image\/png, 18 bytes; not written to a terminal\. To save it: patchbay read 'blob:\/\/bytes' --output FILE\]/,
  );
  assert.ok(!screen.includes("raw"), `the bytes reached the terminal:\n${screen}`);
});

Deno.test("a bearer token an HTTP server reflects is masked in call, its errors and the log", async () => {
  await using server = startReflectingHttp();
  await using box = await sandbox();
  const token = "bearer-token-from-env-81c2";
  await Deno.writeTextFile(join(box.cwd, ".env"), `SERVICE_TOKEN_VALUE=${token}\n`);
  await writeConfig(box, {
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: {
      web: {
        transport_type: "streamable_http",
        url: server.url,
        headers: { Authorization: "Bearer ${SERVICE_TOKEN_VALUE}" },
      },
    },
  });
  const called = await runPatchbay(box, ["call", "web.whoami"]);
  assert.equal(called.code, 0, called.stderr);
  assert.match(called.stdout, /you sent Bearer \[REDACTED\]/);
  assert.match(called.stdout, /encoded [A-Za-z0-9+/]*\[REDACTED\]/);
  const failed = await runPatchbay(box, ["call", "web.fail"]);
  assert.equal(failed.code, 1, failed.stdout);
  assert.match(failed.stderr, /you sent Bearer \[REDACTED\]/);
  for (
    const [where, text] of [["call", called.stdout + called.stderr], ["error", failed.stderr], [
      "log",
      logOf(box),
    ]]
  ) {
    assert.ok(!text.includes(token), `${where} shows the token:\n${text}`);
    assert.ok(!text.includes(btoa(`Bearer ${token}`).slice(4, 24)), `${where}: in base64`);
  }
});

Deno.test("the approval names the tool that runs, escaped and on one line", async () => {
  await using llm = await startScriptedLlm();
  await using box = await reflectingBox({
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
  });
  const listed = await runPatchbay(box, ["tools", "--json", "refl"]);
  assert.equal(listed.code, 0, listed.stderr);
  const tools = JSON.parse(listed.stdout).tools as { name: string; tool: string }[];
  const modelName = (tool: string) => tools.find((t) => t.tool === tool)!.name;
  assert.notEqual(modelName("read\u200b_file"), modelName("read_file"));

  await using repl = await startRepl(box);
  llm.enqueue(
    { toolCalls: [{ name: modelName("read\u200b_file"), arguments: {} }] },
    { text: "first declined" },
  );
  const lookalike = await repl.send("use it", "(default No)");
  assert.match(lookalike, /Run refl › read\\u\{200b\}_file/);
  // The turn's summary line closes it; typing before it would be lost.
  await repl.send("n", /first declined[\s\S]*\d+ tokens/);

  llm.enqueue(
    { toolCalls: [{ name: modelName("ok\nargs: {}"), arguments: {} }] },
    { text: "second declined" },
  );
  const newline = await repl.send("use the other", "(default No)");
  assert.match(newline, /Run refl › ok\\nargs: \{\}/);
  assert.ok(!/^\s*args: \{\}/m.test(newline), `a name drew a line of its own:\n${newline}`);
  await repl.send("n", /second declined[\s\S]*\d+ tokens/);
});
