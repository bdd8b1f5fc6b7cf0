/**
 * The failure table itself: every row has a message, causes and a remedy for each
 * surface; no scripting remedy names a slash command; every network problem has a row;
 * the typed errors read their words from it.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  AuthenticationFailedError,
  InvalidApiKeyError,
  KeychainError,
  NetworkError,
  OAuthFailedError,
  type PatchbayError,
  PermissionDeniedError,
  RateLimitError,
  remedyFor,
  SecretHelperError,
  ServerConnectError,
  StoreConnectError,
  TimeoutError,
  ToolExecutionError,
  ToolTimeoutError,
} from "../../lib/errors.ts";
import {
  type FailureKind,
  fill,
  NET_ROWS,
  perSurface,
  type Remedy,
  remedyOf,
  type RemedyText,
  ROWS,
  STEPS,
} from "../../lib/errors/failure_table.ts";
import { AGENT_STEPS } from "../../lib/errors/agent_steps.ts";
import { CONFIG_EDIT_STEPS } from "../../lib/errors/config_edit_steps.ts";
import { CONFIG_STEPS } from "../../lib/errors/config_steps.ts";
import { CONNECTION_STEPS } from "../../lib/errors/connection_steps.ts";
import { DOCTOR_STEPS } from "../../lib/errors/doctor_steps.ts";
import { MCP_EDIT_STEPS } from "../../lib/errors/mcp_edit_steps.ts";
import { MEMORY_STEPS } from "../../lib/errors/memory_steps.ts";
import { MODEL_STEPS } from "../../lib/errors/model_steps.ts";
import { OAUTH_STEPS } from "../../lib/errors/oauth_steps.ts";
import { USAGE_STEPS } from "../../lib/errors/usage_steps.ts";
import { REPL_STEPS } from "../../lib/errors/repl_steps.ts";
import { PROTOCOL_STEPS } from "../../lib/errors/protocol_steps.ts";
import { SECRETS_STEPS } from "../../lib/errors/secrets_steps.ts";
import { SESSION_STEPS } from "../../lib/errors/session_steps.ts";
import { SKILLS_STEPS } from "../../lib/errors/skills_steps.ts";
import { STORE_STEPS } from "../../lib/errors/store_steps.ts";

/** The usual paths of an MCP endpoint, as a remedy names them (not slash commands). */
const URL_PATHS = "(often /mcp, or /sse for SSE)";

/** The steps of each area, kept beside the table (`lib/errors/<area>_steps.ts`). */
const AREA_STEPS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  AGENT_STEPS,
  CONFIG_EDIT_STEPS,
  CONFIG_STEPS,
  CONNECTION_STEPS,
  DOCTOR_STEPS,
  MCP_EDIT_STEPS,
  MEMORY_STEPS,
  MODEL_STEPS,
  OAUTH_STEPS,
  USAGE_STEPS,
  PROTOCOL_STEPS,
  SECRETS_STEPS,
  SESSION_STEPS,
  SKILLS_STEPS,
  STORE_STEPS,
  // Not REPL_STEPS (lib/errors/repl_steps.ts): slash commands' usage, shown by slash commands
  // only; the test below holds them to the interactive client.
};

/** A slash command of the interactive client, which a scripting command cannot act on. */
const SLASH_COMMAND =
  /(?<![\w.:/])\/(?:debug|tools|memory|api_stats|status|connections|refresh|call|prompts?|resources?|clear|history|mcp)\b/;

const kinds = Object.keys(ROWS) as FailureKind[];

Deno.test("failure table: every row has a message, causes and both remedies", () => {
  assert.ok(kinds.length >= 14, `only ${kinds.length} rows`);
  for (const kind of kinds) {
    const row = ROWS[kind];
    assert.ok(row.messages.length > 0, `${kind}: no message`);
    for (const message of row.messages) assert.ok(message.trim(), `${kind}: empty message`);
    assert.ok(row.causes.length > 0, `${kind}: no cause`);
    for (const cause of row.causes) assert.ok(cause.trim(), `${kind}: empty cause`);
    assert.ok(row.remedy.repl.trim(), `${kind}: no interactive remedy`);
    assert.ok(row.remedy.script.trim(), `${kind}: no scripting remedy`);
  }
});

Deno.test("failure table: no scripting remedy names a slash command", () => {
  const remedies: [string, Remedy][] = kinds.map((kind) => [kind, ROWS[kind].remedy]);
  for (const [name, step] of Object.entries(STEPS)) {
    remedies.push([name, typeof step === "function" ? step("api") : step]);
  }
  // The steps of an area (lib/errors/<area>_steps.ts), functions given sample values.
  for (const [area, steps] of Object.entries(AREA_STEPS)) {
    for (const [name, step] of Object.entries(steps)) {
      const value = typeof step === "function"
        ? (step as (...args: string[]) => RemedyText)("api", "x")
        : step as RemedyText;
      const { repl, script } = remedyOf(value);
      // "/mcp" in "(often /mcp, or /sse for SSE)" is a URL's path, not the slash command.
      remedies.push([`${area}.${name}`, { repl, script: script.replace(URL_PATHS, "") }]);
    }
  }
  for (const [name, remedy] of remedies) {
    assert.doesNotMatch(remedy.script, SLASH_COMMAND, `${name}: ${remedy.script}`);
  }
  assert.match(MODEL_STEPS.requestLimit.repl, SLASH_COMMAND);
  // The interactive wording is the one that may name them: the table keeps both apart.
  assert.match(ROWS.not_running.remedy.repl, SLASH_COMMAND);
  assert.match(STEPS.retryLogin("api").repl, SLASH_COMMAND);
});

Deno.test("failure table: a step reached by both surfaces names slash commands in the REPL only", () => {
  // A server lost and being restarted: the REPL's remedy says where to watch and retry.
  const restarting = CONNECTION_STEPS.whileRestarting(ROWS.not_running.remedy);
  assert.equal(
    restarting.repl,
    `${ROWS.not_running.remedy.repl}; meanwhile patchbay keeps trying to reconnect ` +
      "(/connections shows the next attempt; /refresh tries at once)",
  );
  assert.equal(
    restarting.script,
    `${ROWS.not_running.remedy.script}; meanwhile patchbay keeps trying to reconnect`,
  );
  // A tool withheld by include_tools / exclude_tools: /refresh, or the command run again.
  const filtered = CONNECTION_STEPS.toolFiltered("everything");
  assert.match(
    filtered.repl,
    /include_tools \/ exclude_tools in the configuration \(then \/refresh\)$/,
  );
  assert.match(filtered.script, /\(then run the command again\)$/);
  assert.doesNotMatch(filtered.script, SLASH_COMMAND);
  assert.match(AGENT_STEPS.hookInputRefused.repl, /\/tools shows it.*\/debug logs for it/);
  assert.match(AGENT_STEPS.hookInputRefused.script, /`patchbay tools --json` shows it.*--debug/);
});

Deno.test("failure table: the slash commands' steps are used by the interactive client only", async () => {
  const root = new URL("../../", import.meta.url);
  const users: string[] = [];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(new URL(dir, root))) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (path.endsWith(".ts")) {
        const source = await Deno.readTextFile(new URL(path, root));
        if (/from "[./]*(?:errors\/)?repl_steps\.ts"/.test(source)) users.push(path);
      }
    }
  };
  await walk("lib");
  await walk("commands");
  assert.ok(users.length > 0, "no file uses REPL_STEPS");
  assert.deepEqual(users.filter((path) => !path.startsWith("lib/repl/")), []);
  // Each names the slash command it is about (and so must stay out of scripts' reach).
  assert.match(REPL_STEPS.image, /\/image/);
});

Deno.test("failure table: every network problem has a row whose message it starts", () => {
  for (const [problem, { kind, label }] of Object.entries(NET_ROWS)) {
    assert.ok(kind in ROWS, `${problem}: no row ${kind}`);
    assert.ok(
      (ROWS[kind].messages as readonly string[]).includes(label),
      `${problem}: ${label} is not a message of ${kind}`,
    );
  }
});

Deno.test("failure table: remedies compose per surface", () => {
  const composed = perSurface`${ROWS.not_running.remedy}; check "url" (${3} tries)`;
  assert.deepEqual(composed, {
    repl: `${ROWS.not_running.remedy.repl}; check "url" (3 tries)`,
    script: `${ROWS.not_running.remedy.script}; check "url" (3 tries)`,
  });
  assert.equal(
    fill("Tool timeout: <tool> within <seconds> s", { tool: "t" }),
    "Tool timeout: t within <seconds> s",
  );
  // A value is never read as a placeholder itself.
  assert.equal(fill("at <target>", { target: "<store>" }), "at <store>");
});

Deno.test("failure table: the typed errors read their words and codes from it", () => {
  const check = (error: PatchbayError, message: string, kind: FailureKind) => {
    assert.equal(error.message, message);
    assert.deepEqual(error.remedies, ROWS[kind].remedy, `${kind}: remedy`);
    assert.ok(
      (ROWS[kind].codes as readonly string[]).includes(error.code),
      `${kind}: code ${error.code}`,
    );
  };
  check(
    new ServerConnectError("fs", { reason: "r", remedy: ROWS.not_running.remedy }),
    "Failed to connect to server 'fs': Session terminated",
    "not_running",
  );
  check(new InvalidApiKeyError("r"), "Invalid API key", "api_key");
  check(new AuthenticationFailedError("r"), "Authentication failed", "api_key");
  check(
    new OAuthFailedError("fs", { reason: "r" }),
    "OAuth authentication failed for server 'fs'",
    "oauth",
  );
  check(new ToolExecutionError("fs_read", "r"), "Tool execution failed: fs_read", "tool");
  check(
    new ToolTimeoutError("fs_read", 30),
    "Tool timeout: fs_read did not finish within 30 s",
    "tool",
  );
  check(new PermissionDeniedError("/etc/x", "r"), "Permission denied: /etc/x", "file_permission");
  check(
    new StoreConnectError("Redis", "127.0.0.1:6379 db 0", "connection refused"),
    "Could not connect to Redis at 127.0.0.1:6379 db 0: connection refused",
    "store",
  );
  check(new RateLimitError("r"), "Rate limit exceeded (Too many requests)", "rate_limit");
  check(new TimeoutError("Request timeout", "r"), "Request timeout", "timeout");
  check(new NetworkError("Connection refused", "r"), "Connection refused", "network");
  check(
    new SecretHelperError({ kind: "headers", server: "fs" }, { reason: "r" }),
    "Headers helper failed for server 'fs'",
    "secret_helper",
  );
  check(
    new SecretHelperError({ kind: "api_key" }, { reason: "r" }),
    "API key helper failed",
    "secret_helper",
  );
  const keychain = { reason: "r", remedy: ROWS.keychain.remedy };
  check(new KeychainError("K", "missing", keychain), "Keychain entry 'K' not found", "keychain");
  check(
    new KeychainError("K", "unavailable", keychain),
    "Could not read 'K' from the keychain",
    "keychain",
  );
  // The surface's own words, picked, not rewritten.
  assert.equal(remedyFor(new RateLimitError("r"), "script"), ROWS.rate_limit.remedy.script);
  assert.equal(remedyFor(new RateLimitError("r"), "repl"), ROWS.rate_limit.remedy.repl);
  assert.equal(remedyFor("the same on both", "script"), "the same on both");
});
