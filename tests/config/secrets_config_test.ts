/**
 * The configuration of secrets that never touch a file (docs/secrets.md): `${keychain:NAME}`
 * wherever `${VAR}` works (left as written until a command that uses the values reads the
 * keychain; every value read a secret), and the helper fields as patchbay runs them.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  expandVariables,
  referencedKeychainEntries,
  referencedVariables,
} from "../../lib/config/expand.ts";
import { loadConfig, parseConfig } from "../../lib/config/load.ts";
import type { HttpServerConfig } from "../../lib/config/types.ts";
import { DEFAULTS } from "../../lib/defaults.ts";
import { createEnvironment } from "../../lib/env.ts";
import { ConfigValidationError } from "../../lib/errors.ts";
import { tempDir } from "../support/temp_dir.ts";

const env = createEnvironment({ TEAM: "acme" });
const LLM = { provider: "openai-compatible", model: "m", base_url: "http://127.0.0.1:1/v1" };

function configText(servers: Record<string, unknown>, llm: Record<string, unknown> = {}): string {
  return JSON.stringify({ LLM: { ...LLM, ...llm }, mcpServers: servers });
}

function problemsOf(text: string): string[] {
  try {
    parseConfig(text, "/work/servers_config.json", env);
  } catch (error) {
    assert.ok(error instanceof ConfigValidationError, String(error));
    return error.problems.map((p) => `${p.path}: ${p.message}`);
  }
  return [];
}

Deno.test("${keychain:NAME}: its value from the lookup, or written as it is without one", () => {
  const lookup = (name: string) => name === "TOKEN" ? "kc-secret-value" : undefined;
  const written = "Bearer ${keychain:TOKEN} for ${TEAM}";
  assert.deepEqual(expandVariables(written, (name) => env.get(name), lookup), {
    value: "Bearer kc-secret-value for acme",
    missing: [],
    keychain: ["TOKEN"],
    malformed: false,
  });
  assert.equal(
    expandVariables(written, (name) => env.get(name)).value,
    "Bearer ${keychain:TOKEN} for acme",
  );
  // A keychain entry is no environment variable: the plan grants it no --allow-env.
  assert.deepEqual(referencedVariables(written), ["TEAM"]);
  assert.deepEqual(referencedKeychainEntries(`${written} $\${keychain:ESCAPED}`), ["TOKEN"]);
  // Only a default that is used needs its entry.
  assert.deepEqual(referencedKeychainEntries("${TEAM:-${keychain:FALLBACK}}"), ["FALLBACK"]);
  assert.deepEqual(
    expandVariables("${TEAM:-${keychain:FALLBACK}}", (name) => env.get(name)).keychain,
    [],
  );
});

Deno.test("${keychain:…} malformed: a name of letters, digits and _ . @ -, no default", () => {
  for (
    const bad of [
      "${keychain:}",
      "${keychain:a b}",
      "${keychain:X:-d}",
      "${keychain:X",
      // An option to the keychain's tool: secret-tool printed its usage as the secret.
      "${keychain:--help}",
      "${keychain:-w}",
    ]
  ) {
    const result = expandVariables(bad, () => undefined);
    assert.equal(result.malformed, true, bad);
    assert.match(result.detail!, /write \$\{keychain:NAME\}/, bad);
  }
});

Deno.test("a configuration's keychain entries: listed, their values secrets wherever written", () => {
  const text = configText({
    remote: {
      url: "http://127.0.0.1:1/mcp?team=${keychain:TEAM_ID}",
      headers: { Authorization: "Bearer ${keychain:MCP_TOKEN}" },
    },
    local: { command: "server", cwd: "${keychain:FOLDER}" },
  });
  const deferred = parseConfig(text, "/work/servers_config.json", env);
  assert.deepEqual(deferred.keychainEntries, ["TEAM_ID", "MCP_TOKEN", "FOLDER"]);
  const remote = deferred.servers[0] as HttpServerConfig;
  assert.equal(remote.headers.Authorization, "Bearer ${keychain:MCP_TOKEN}");
  const values: Record<string, string> = {
    TEAM_ID: "team-id-1234",
    MCP_TOKEN: "mcp-token-5678",
    FOLDER: "/srv/folder-secret",
  };
  const read = parseConfig(text, "/work/servers_config.json", env, (name) => values[name]);
  assert.equal(
    (read.servers[0] as HttpServerConfig).headers.Authorization,
    "Bearer mcp-token-5678",
  );
  assert.equal(
    (read.servers[0] as HttpServerConfig).url,
    "http://127.0.0.1:1/mcp?team=team-id-1234",
  );
  // Even a value put where paths go (cwd) is a secret: the keychain holds nothing else.
  for (const value of Object.values(values)) assert.ok(read.secretValues?.includes(value), value);
});

Deno.test("loadConfig reads the keychain only when asked, and only once the file is sound", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "servers_config.json");
  await Deno.writeTextFile(
    file,
    configText({ remote: { url: "http://127.0.0.1:1/mcp", headers: { "X-K": "${keychain:K1}" } } }),
  );
  const asked: string[][] = [];
  const keychain = (names: readonly string[]) => {
    asked.push([...names]);
    return Promise.resolve(new Map([["K1", "value-of-k1"]]));
  };
  const deferred = await loadConfig(file, env);
  assert.equal((deferred.servers[0] as HttpServerConfig).headers["X-K"], "${keychain:K1}");
  const read = await loadConfig(file, env, { keychain });
  assert.equal((read.servers[0] as HttpServerConfig).headers["X-K"], "value-of-k1");
  assert.deepEqual(asked, [["K1"]]);
  // A file with another problem is reported as it is, before any keychain is asked.
  await Deno.writeTextFile(
    file,
    configText({
      remote: { url: "http://127.0.0.1:1/mcp", headers: { "X-K": "${keychain:K1}" }, timeout: -1 },
    }),
  );
  await assert.rejects(() => loadConfig(file, env, { keychain }), ConfigValidationError);
  assert.equal(asked.length, 1);
});

Deno.test("a keychain value cannot be a URL's host or port", () => {
  assert.deepEqual(
    problemsOf(configText({ remote: { url: "https://${keychain:HOST}/mcp" } })),
    ["mcpServers.remote.url: a ${keychain:…} value cannot be the URL's host or port"],
  );
  assert.deepEqual(
    problemsOf(configText({ remote: { url: "https://user:${keychain:PASS}@example.com/mcp" } })),
    [],
  );
});

Deno.test("helpers: a program and its arguments, relative paths from the file's folder", () => {
  const config = parseConfig(
    configText(
      {
        remote: {
          url: "http://127.0.0.1:1/mcp",
          headers_helper: "./bin/headers.sh",
          headers_helper_ttl: 600,
        },
        other: {
          url: "http://127.0.0.1:2/mcp",
          headers_helper: { command: "vault", args: ["read", "-field=token", "${TEAM}"] },
        },
      },
      { api_key_helper: { command: "sh", args: ["-c", "pass show llm"], env: { X: "${TEAM}" } } },
    ),
    "/work/servers_config.json",
    env,
  );
  const [remote, other] = config.servers as HttpServerConfig[];
  assert.deepEqual(remote.headersHelper, {
    command: "/work/bin/headers.sh",
    args: [],
    env: {},
    cwd: "/work",
  });
  assert.equal(remote.headersHelperTtlSeconds, 600);
  assert.deepEqual(other.headersHelper?.args, ["read", "-field=token", "acme"]);
  assert.equal(other.headersHelperTtlSeconds, undefined);
  assert.deepEqual(config.llm.apiKeyHelper, {
    command: "sh",
    args: ["-c", "pass show llm"],
    env: { X: "acme" },
    cwd: "/work",
  });
  assert.equal(config.llm.apiKeyHelperTtlSeconds, DEFAULTS.secrets.apiKeyHelperTtlSeconds);
});

Deno.test("helpers: a shell line, OAuth beside it, or a stdio entry are refused with a remedy", () => {
  assert.deepEqual(
    problemsOf(configText({ r: { url: "http://h/mcp", headers_helper: "vault read x" } })),
    [
      "mcpServers.r.headers_helper: a helper is a program, run without a shell, and no file has this name",
    ],
  );
  assert.deepEqual(
    problemsOf(
      configText({ r: { url: "http://h/mcp", headers_helper: "h", auth: { method: "oauth" } } }),
    ),
    [
      "mcpServers.r.headers_helper: auth (OAuth) and headers_helper are mutually exclusive: " +
      "OAuth sets the credential",
    ],
  );
  const stdio = problemsOf(configText({ s: { command: "server", headers_helper: "h" } }));
  assert.equal(stdio.length, 1);
  assert.match(stdio[0], /"headers_helper" does not apply to transport_type stdio/);
  const shape = problemsOf(configText({ r: { url: "http://h/mcp", headers_helper: 3 } }));
  assert.match(shape.join("\n"), /expected the program as a string, or \{"command"/);
  // Claude Code's name gets patchbay's (its shell line is not run as it is).
  assert.throws(
    () =>
      parseConfig(
        configText({ r: { url: "http://h/mcp", headersHelper: "h" } }),
        "/work/servers_config.json",
        env,
      ),
    (error: unknown) =>
      error instanceof ConfigValidationError &&
      /did you mean "headers_helper"/.test(error.problems[0].hint ?? ""),
  );
});
