/**
 * One voice for servers, the model and Redis: each docs/troubleshooting.md row produced under
 * real conditions — a refused port, a host name that never leaves the machine (`.invalid`),
 * the scripted provider answering 401 and 429, a web page where the model's API should be,
 * Redis with a password given wrong and a database it does not have — reads the same
 * message and cause on every surface that shows it: the interactive client (tmux), the
 * scripting commands (`tools`, `run --json`, `sessions`) and `patchbay doctor`. OAuth: an
 * authorization server that refuses the client's credentials reads the same at start-up,
 * for `/call` and `patchbay call`, in `run --json` and in the doctor. The remedy is the interactive client's, with the slash
 * commands it names replaced for the scripting commands (`expectedRemedy`).
 *
 * @module
 */

import assert from "node:assert/strict";
import type { Surface } from "../../lib/errors.ts";
import { expectedRemedy } from "../support/script_remedy.ts";
import { runPatchbay, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { runDoctor } from "../support/doctor.ts";
import { RedisServer } from "../support/redis.ts";
import { startAuthorizationServer } from "../support/oauth_server.ts";
import { startProtectedMcpServer } from "../support/protected_mcp_server.ts";
import { startRepl } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { assumingClosed, freePort } from "../support/servers.ts";

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

/** A doctor check's `finding` (`message — cause`) and remedy. */
function doctored(finding: string, remedy: string | null): Shown {
  const split = finding.indexOf(" — ");
  assert.ok(split > 0, finding);
  return {
    message: finding.slice(0, split),
    cause: finding.slice(split + 3),
    remedy: remedy ?? "",
  };
}

/** A `--json` error object. */
function fromJson(error: Record<string, string> | undefined, where: string): Shown {
  assert.ok(error, `no error in ${where}`);
  return { message: error.message, cause: error.cause, remedy: error.remedy };
}

/** A slash command of the interactive client, which a scripting command cannot act on. */
const SLASH_COMMAND =
  /(?<![\w.:/])\/(?:debug|tools|memory|api_stats|status|connections|refresh|call|prompts?|resources?|clear|history)\b/;

/** Every surface against the interactive client's reading of the same failure. */
function same(name: string, reference: Shown, others: [string, Surface, Shown][]): void {
  for (const [where, surface, shown] of others) {
    assert.equal(shown.message, reference.message, `${name}, ${where}: message`);
    assert.equal(shown.cause, reference.cause, `${name}, ${where}: cause`);
    assert.equal(
      shown.remedy,
      expectedRemedy(reference.remedy, surface),
      `${name}, ${where}: remedy`,
    );
    if (surface === "script") {
      assert.doesNotMatch(shown.remedy, SLASH_COMMAND, `${name}, ${where}: remedy`);
    }
  }
}

async function events(box: Sandbox, args: string[], env: Record<string, string> = {}) {
  const result = await runPatchbay(box, ["run", "--json", ...args], { env });
  return result.stdout.trim().split("\n").filter(Boolean).map((line) => JSON.parse(line));
}

Deno.test({
  name:
    "servers: a refused port and an unknown host read the same in the client, tools, run --json and doctor",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using llm = await startScriptedLlm({ fallback: () => ({ text: "fine" }) });
    await using box = await sandbox({ LLM_API_KEY: "test-key" });
    const closed = freePort();
    await assumingClosed(closed, async () => {
      await writeConfig(box, {
        LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
        mcpServers: {
          down: { transport_type: "streamable_http", url: `http://127.0.0.1:${closed}/mcp` },
          nowhere: {
            transport_type: "streamable_http",
            url: "http://patchbay-test.invalid:8080/mcp",
          },
        },
      });
      const rows = [
        {
          server: "down",
          cause: new RegExp(
            `^Connection refused: nothing is listening at 127\\.0\\.0\\.1:${closed} `,
          ),
        },
        {
          server: "nowhere",
          cause: /^the host name 'patchbay-test\.invalid' does not resolve \(DNS lookup failed\)$/,
        },
      ];
      let screen: string;
      {
        await using repl = await startRepl(box);
        screen = await repl.tmux.screen();
      }
      const tools = await runPatchbay(box, ["tools"]);
      const run = await events(box, ["hello"]);
      const doctor = await runDoctor(box, ["--offline"]);
      for (const row of rows) {
        const message = `Failed to connect to server '${row.server}': Session terminated`;
        const reference = printed(screen, message);
        assert.match(reference.cause, row.cause, `${row.server}: cause in the client`);
        const check = doctor.check(`server:${row.server}`);
        same(row.server, reference, [
          ["tools", "script", printed(tools.stderr, message)],
          [
            "run --json",
            "script",
            fromJson(run.find((e) => e.type === "server" && e.name === row.server)?.error, "run"),
          ],
          ["doctor", "script", doctored(check.finding, check.remedy)],
        ]);
      }
    });
  },
});

/** A web server where the model's API should be: every path answers with a page. */
function webPage() {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () =>
      new Response("<!doctype html><title>Welcome to nginx!</title>", {
        headers: { "content-type": "text/html; charset=utf-8" },
      }),
  );
  return {
    baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

Deno.test({
  name:
    "the model: 401, 429 and a web page at base_url read the same in a turn, run --json and doctor",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    for (
      const row of [
        {
          name: "401",
          message: "Authentication failed",
          options: { apiKey: "the-right-key" },
          cause: /refused LLM_API_KEY/,
        },
        {
          name: "429",
          message: "Rate limit exceeded (Too many requests)",
          options: {
            fallback: () => ({ status: 429, errorMessage: "Rate limit reached for requests" }),
            modelsReplies: Array.from({ length: 10 }, () => ({
              status: 429,
              errorMessage: "Rate limit reached for requests",
            })),
          },
          cause: /limited requests for model "scripted-model"/,
        },
        {
          name: "a web page",
          message:
            "Model request failed: OpenAI-compatible server sent an answer patchbay cannot read",
          page: true,
          cause:
            /^127\.0\.0\.1:\d+ answered, but the answer is not the API's \(text\/html\): "<!doctype html><title>Welcome to nginx!<\/title>"$/,
        },
      ]
    ) {
      await using llm = "page" in row ? webPage() : await startScriptedLlm(row.options);
      await using box = await sandbox({ LLM_API_KEY: "a-wrong-key" });
      await writeConfig(box, {
        LLM: {
          provider: "openai-compatible",
          model: "scripted-model",
          base_url: llm.baseUrl,
          max_retries: 0,
        },
        mcpServers: {},
      });
      let turn: string;
      {
        await using repl = await startRepl(box);
        turn = await repl.send("hello", /remedy: .+\n/, 30_000);
      }
      const reference = printed(turn, row.message);
      assert.match(reference.cause, row.cause, `${row.name}: cause in a turn`);
      const run = await events(box, ["hello"]);
      const doctor = await runDoctor(box);
      const provider = doctor.check("provider");
      same(row.name, reference, [
        ["run --json", "script", fromJson(run.find((e) => e.type === "error")?.error, "run")],
        ["doctor", "script", doctored(provider.finding, provider.remedy)],
      ]);
    }
  },
});

Deno.test({
  name:
    "Redis: a wrong password and a missing database read the same in the client, sessions and doctor",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using redis = await RedisServer.start({
      password: "right-password",
      args: ["--databases", "4"],
    });
    await using llm = await startScriptedLlm();
    await using box = await sandbox({ LLM_API_KEY: "test-key" });
    await writeConfig(box, {
      LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
      mcpServers: {},
      Memory: { backend: "redis" },
    });
    const at = `127.0.0.1:${redis.port}`;
    for (
      const row of [
        {
          name: "wrong password",
          env: { ...redis.env, REDIS_PASSWORD: "wrong-password" },
          message: `Could not connect to Redis at ${at} db 0: wrong password`,
        },
        {
          name: "missing database",
          env: { ...redis.env, REDIS_DB: "9" },
          message: `Could not connect to Redis at ${at} db 9: database 9 does not exist ` +
            "(this server has 4: 0-3)",
        },
      ]
    ) {
      let screen: string;
      {
        await using repl = await startRepl(box, { env: row.env });
        screen = await repl.tmux.screen();
      }
      const reference = printed(screen, row.message);
      const sessions = await runPatchbay(box, ["sessions"], { env: row.env });
      const doctor = await runDoctor(box, ["--offline"], { env: row.env });
      const memory = doctor.check("memory");
      same(row.name, reference, [
        ["sessions", "script", printed(sessions.stderr, row.message)],
        ["doctor", "script", doctored(memory.finding, memory.remedy)],
      ]);
    }
  },
});

Deno.test({
  name:
    "OAuth: credentials the authorization server refuses read the same at start-up, /call, call, run --json and doctor",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using llm = await startScriptedLlm({ fallback: () => ({ text: "fine" }) });
    await using box = await sandbox({ LLM_API_KEY: "test-key" });
    // client_credentials: the login is the token request alone (no browser, no port 3000).
    const secret = "the-right-secret";
    const client = { client_id: "ci-bot", client_secret: secret, redirect_uris: [] };
    const clientRemedy = /^check auth\.client_id and auth\.client_secret in the entry for 'ci'/;
    for (
      const row of [
        {
          name: "wrong client secret",
          server: {},
          auth: { client_id: "ci-bot", client_secret: "not-the-secret" },
          cause: /^the authorization server answered invalid_client\b/,
          remedy: clientRemedy,
        },
        {
          name: "unknown client",
          server: {},
          auth: { client_id: "nobody", client_secret: secret },
          cause: /^the authorization server answered invalid_client\b/,
          remedy: clientRemedy,
        },
        {
          // A generic refusal: its remedy names /refresh, which the scripts word their way.
          name: "authorization server failing",
          server: {
            tokenError: { error: "temporarily_unavailable", description: "down for maintenance" },
          },
          auth: { client_id: "ci-bot", client_secret: secret },
          cause:
            /^the authorization server answered temporarily_unavailable: down for maintenance$/,
          remedy: /^retry the login \(\/refresh, or patchbay auth login ci\)/,
        },
      ]
    ) {
      await using as = startAuthorizationServer({
        clientCredentials: true,
        clients: [client],
        ...row.server,
      });
      await using rs = startProtectedMcpServer({ authorizationServer: as });
      await writeConfig(box, {
        LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
        mcpServers: {
          ci: {
            transport_type: "streamable_http",
            url: rs.url,
            auth: { method: "oauth", grant: "client_credentials", ...row.auth },
          },
        },
      });
      const message = "OAuth authentication failed for server 'ci'";
      let screen: string;
      let slashCall: string;
      {
        await using repl = await startRepl(box);
        screen = await repl.tmux.screen();
        slashCall = await repl.send('/call ci.echo {"text": "hi"}', /remedy: .+\n/);
      }
      const reference = printed(screen, message);
      assert.match(reference.cause, row.cause, `${row.name}: cause at start-up`);
      assert.match(reference.remedy, row.remedy, `${row.name}: remedy at start-up`);
      const call = await runPatchbay(box, ["call", "ci.echo", '{"text": "hi"}']);
      assert.equal(call.code, 1, call.stderr);
      const run = await events(box, ["hello"]);
      const doctor = await runDoctor(box, ["--offline"]);
      const check = doctor.check("server:ci");
      same(row.name, reference, [
        ["/call", "repl", printed(slashCall, message)],
        [
          "call",
          "script",
          printed(call.stderr.slice(call.stderr.lastIndexOf("\nerror: ")), message),
        ],
        [
          "run --json",
          "script",
          fromJson(run.find((e) => e.type === "server" && e.name === "ci")?.error, "run"),
        ],
        ["doctor", "script", doctored(check.finding, check.remedy)],
      ]);
      // Each surface really asked the authorization server (none reused an earlier answer).
      assert.ok(as.log.token.length >= 4, `${row.name}: token requests`);
      for (const output of [screen, slashCall, call.stderr, JSON.stringify(run)]) {
        assert.ok(!output.includes(row.auth.client_secret), `${row.name}: the secret is shown`);
      }
    }
  },
});
