/**
 * Server entries pasted from other clients (Claude Desktop and Code, Cursor, VS Code,
 * gemini-cli) read as patchbay's own fields; the forms that mean something else are
 * refused where they are written, with a remedy.
 */

import assert from "node:assert/strict";
import { referencedVariables } from "../../lib/config/expand.ts";
import { parseConfig } from "../../lib/config/load.ts";
import type { HttpServerConfig, StdioServerConfig } from "../../lib/config/types.ts";
import { createEnvironment } from "../../lib/env.ts";
import { ConfigValidationError } from "../../lib/errors.ts";

const env = createEnvironment({ DOCS_KEY: "k-123", TOKEN: "t-456" });
const llm = { provider: "openai", model: "gpt-4o-mini" };

function servers(mcpServers: Record<string, unknown>) {
  const text = JSON.stringify({ LLM: llm, mcpServers }, null, 2);
  return parseConfig(text, "servers_config.json", env).servers;
}

function problems(mcpServers: Record<string, unknown>): string[] {
  const text = JSON.stringify({ LLM: llm, mcpServers }, null, 2);
  try {
    parseConfig(text, "servers_config.json", env);
  } catch (error) {
    assert.ok(error instanceof ConfigValidationError, String(error));
    return error.problems.map((p) =>
      `${p.path} @${p.position?.line}:${p.position?.column}: ${p.message} | ${p.hint}`
    );
  }
  assert.fail("accepted");
}

Deno.test("other clients' type values map onto transport_type", () => {
  const read = servers({
    a: { type: "stdio", command: "node" },
    b: { type: "http", url: "http://127.0.0.1:1/mcp" },
    c: { type: "streamable-http", url: "http://127.0.0.1:1/mcp" },
    d: { type: "sse", url: "http://127.0.0.1:1/sse" },
    e: { url: "http://127.0.0.1:1/mcp" },
  });
  assert.deepEqual(read.map((s) => [s.name, s.transport, s.transportInferred]), [
    ["a", "stdio", false],
    ["b", "streamable_http", false],
    ["c", "streamable_http", false],
    ["d", "sse", false],
    ["e", "streamable_http", true],
  ]);
});

Deno.test("httpUrl (gemini-cli) and serverUrl are the url; enabled is the opposite of disabled", () => {
  const [gemini, other, off, on] = servers({
    gemini: { httpUrl: "http://127.0.0.1:1/mcp" },
    other: { serverUrl: "http://127.0.0.1:2/sse", type: "sse" },
    off: { command: "node", enabled: false },
    on: { command: "node", enabled: true },
  }) as [HttpServerConfig, HttpServerConfig, StdioServerConfig, StdioServerConfig];
  assert.equal(gemini.transport, "streamable_http");
  assert.equal(gemini.url, "http://127.0.0.1:1/mcp");
  assert.equal(other.transport, "sse");
  assert.equal(other.url, "http://127.0.0.1:2/sse");
  assert.equal(off.disabled, true);
  assert.equal(on.disabled, false);
});

Deno.test("${env:VAR} (Cursor, VS Code) expands as ${VAR} does", () => {
  const [docs] = servers({
    docs: {
      url: "http://127.0.0.1:1/mcp",
      headers: { "X-Api-Key": "${env:DOCS_KEY}", Authorization: "Bearer ${TOKEN}" },
    },
  }) as HttpServerConfig[];
  assert.deepEqual(docs.headers, { "X-Api-Key": "k-123", Authorization: "Bearer t-456" });
});

Deno.test("${env:VAR} names VAR for the permission plan, as ${VAR} does", () => {
  assert.deepEqual(referencedVariables("${env:DOCS_KEY} ${TOKEN} ${input:x} $${env:NOT}"), [
    "DOCS_KEY",
    "TOKEN",
  ]);
});

Deno.test("VS Code's ${input:…} is refused where it is written, with what to do instead", () => {
  const [problem] = problems({
    github: {
      type: "http",
      url: "http://127.0.0.1:1/mcp",
      headers: { Authorization: "Bearer ${input:github-token}" },
    },
  });
  assert.match(problem, /^mcpServers\.github\.headers\.Authorization @11:\d+: /);
  assert.match(problem, / \$\{input:github-token\} is another client's variable/);
  assert.match(
    problem,
    /set GITHUB_TOKEN to the value in \.env and write \$\{GITHUB_TOKEN\} in place of \$\{input:github-token\}/,
  );
});

Deno.test("gemini-cli's timeout in milliseconds is refused beside httpUrl, with the seconds", () => {
  const [problem] = problems({ g: { httpUrl: "http://127.0.0.1:1/mcp", timeout: 30000 } });
  assert.match(problem, /^mcpServers\.g\.timeout @\d+:\d+: "timeout": 30000 beside httpUrl/);
  assert.match(problem, /milliseconds/);
  assert.match(problem, /"timeout": 30 \(seconds\)/);
});

Deno.test("contradicting forms are problems at the other client's field", () => {
  const found = problems({
    a: { type: "sse", transport_type: "stdio", command: "x" },
    b: { url: "http://127.0.0.1:1/mcp", serverUrl: "http://127.0.0.1:2/mcp" },
    c: { command: "x", enabled: true, disabled: true },
    d: { httpUrl: "http://127.0.0.1:1/mcp", type: "sse" },
  });
  assert.equal(found.length, 4, found.join("\n"));
  assert.match(found[0], /^mcpServers\.a\.type .*disagree \| keep transport_type/);
  assert.match(found[1], /^mcpServers\.b\.serverUrl .*gives its address twice/);
  assert.match(found[2], /^mcpServers\.c\.enabled .*contradict each other/);
  assert.match(found[3], /^mcpServers\.d\.type .*httpUrl is a streamable HTTP address/);
});

Deno.test("a field of the other transport is reported at the name the entry uses", () => {
  const [problem] = problems({ a: { type: "stdio", command: "x", serverUrl: "http://h/mcp" } });
  assert.match(problem, /^mcpServers\.a\.serverUrl @\d+:\d+: "serverUrl" does not apply/);
});

Deno.test("an unknown type value is named with the accepted ones", () => {
  const [problem] = problems({ a: { type: "websocket", url: "ws://h" } });
  assert.match(problem, /^mcpServers\.a\.type .*"stdio", "http", "streamable-http"/);
});
