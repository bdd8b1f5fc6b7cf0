import assert from "node:assert/strict";
import { join } from "node:path";
import { loadConfig, parseConfig } from "../../lib/config/load.ts";
import { createEnvironment } from "../../lib/env.ts";
import { ConfigSyntaxError, ConfigValidationError, PatchbayError } from "../../lib/errors.ts";
import { tempDir } from "../support/temp_dir.ts";

const env = createEnvironment({ TOKEN: "s3cret-token", HOME: "/home/u", EMPTY: "" });
const llm = { provider: "openai", model: "gpt-4o-mini" };

function parse(value: unknown) {
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  return parseConfig(text, "servers_config.json", env);
}

/** The error `fn` throws (node's assert.throws returns nothing). */
function thrown<E extends Error = ConfigValidationError>(fn: () => unknown): E {
  try {
    fn();
  } catch (error) {
    return error as E;
  }
  assert.fail("nothing was thrown");
}

function problemsOf(value: unknown): string[] {
  try {
    parse(value);
  } catch (error) {
    assert.ok(error instanceof ConfigValidationError, `expected a validation error, got ${error}`);
    return error.problems.map((p) => `${p.message}${p.hint ? ` | ${p.hint}` : ""}`);
  }
  assert.fail("the configuration was accepted");
}

Deno.test("a syntax fault reads 'Invalid configuration: <what> at line L, column C of <file>'", () => {
  const error = thrown<ConfigSyntaxError>(() =>
    parse('{\n  "LLM": {"provider": "openai", "model": "m",},\n  "mcpServers": {}\n}')
  );
  assert.equal(
    error.message,
    "Invalid configuration: trailing comma before '}' at line 2, column 45 of servers_config.json",
  );
  assert.match(error.reason, /^JSON decode error: strict JSON allows no comma/);
  assert.match(error.remedy, /JSON validator/);
  // The offending line, then a caret under the column.
  const at = error.details.findIndex((d) => d.startsWith("    2 | "));
  assert.ok(at >= 0, error.details.join("\n"));
  assert.equal(error.details[at + 1].indexOf("^"), "    2 | ".length + 44);
});

Deno.test("several syntax faults are counted in the headline", () => {
  const error = thrown<ConfigSyntaxError>(() => parse("{'LLM': {}, // x\n}"));
  assert.match(
    error.message,
    /^Invalid configuration: single-quoted property name at line 1, column 2 of servers_config.json \(and 2 more\)$/,
  );
  assert.equal(error.problems.length, 3);
});

Deno.test("each missing required field is named", () => {
  assert.deepEqual(problemsOf({ mcpServers: {} }), [
    "Missing required field: LLM | it names the provider and model",
  ]);
  assert.deepEqual(problemsOf({ LLM: { model: "m" }, mcpServers: {} }), [
    "Missing required field: LLM.provider",
  ]);
  assert.deepEqual(problemsOf({ LLM: { provider: "openai" }, mcpServers: {} }), [
    "Missing required field: LLM.model",
  ]);
  assert.deepEqual(problemsOf({ LLM: llm }), ["Missing required field: mcpServers"]);
});

Deno.test("a missing field is the remedy's subject when it is the only kind of problem", () => {
  const error = thrown(() => parse({ LLM: llm }));
  assert.equal(error.message, "Invalid configuration: Missing required field: mcpServers");
  assert.match(error.remedy, /"mcpServers" may be an empty object \{\}/);
});

Deno.test("mcpServers may be empty", () => {
  const config = parse({ LLM: llm, mcpServers: {} });
  assert.deepEqual(config.servers, []);
});

Deno.test("wrong types name the field path, the expected type and the value seen", () => {
  assert.deepEqual(
    problemsOf({
      LLM: { ...llm, max_tokens: "lots", temperature: 3 },
      mcpServers: { fs: { command: "npx", args: "-y" } },
      AgentConfig: { tool_call_timeout: -1, max_steps: 2.5 },
    }),
    [
      'expected a number, got the string "lots"',
      "must be at most 2, got the number 3",
      'expected an array, got the string "-y"',
      "must be greater than 0, got the number -1",
      "expected an integer, got the number 2.5",
    ],
  );
  const error = thrown(() => parse({ LLM: { ...llm, max_tokens: "lots" }, mcpServers: {} }));
  assert.equal(error.problems[0].path, "LLM.max_tokens");
  assert.deepEqual(error.problems[0].position, { line: 5, column: 19 });
});

Deno.test("unknown keys are reported with a did-you-mean", () => {
  assert.deepEqual(
    problemsOf({
      llm: llm,
      LLM: { ...llm, modle: "x" },
      servers: {},
      // `type` is another client's name for transport_type, and accepted; `transport` is not.
      mcpServers: { a: { transport: "stdio", cmd: "x", command: "y", argz: [] } },
    }),
    [
      'unknown field "llm" | did you mean "LLM"?',
      'unknown field "modle" | did you mean "model"?',
      'unknown field "servers" | did you mean "mcpServers"?',
      'unknown field "transport" | did you mean "transport_type"?',
      'unknown field "cmd" | did you mean "command"?',
      'unknown field "argz" | did you mean "args"?',
    ],
  );
});

Deno.test("an unknown key with no close match lists the known fields", () => {
  const [problem] = problemsOf({ LLM: llm, mcpServers: { a: { command: "x", zzzzzz: 1 } } });
  assert.match(
    problem,
    /^unknown field "zzzzzz" \| known fields here: transport_type, command, args/,
  );
});

Deno.test("transport_type values get a suggestion", () => {
  assert.deepEqual(
    problemsOf({ LLM: llm, mcpServers: { a: { transport_type: "http", url: "http://x/mcp" } } }),
    ['expected one of "stdio", "streamable_http", "sse", got the string "http" | did you mean "streamable_http"?'],
  );
});

Deno.test("every problem in the file is reported in one run", () => {
  const problems = problemsOf({
    LLM: { provider: "opneai" },
    mcpServers: {
      a: { transport_type: "stdio" },
      b: { transport_type: "sse" },
      c: { command: "x", url: "http://h/mcp" },
    },
    AgentConfig: { max_steps: 0 },
    Extra: true,
  });
  assert.deepEqual(
    problems,
    [
      'unknown provider "opneai" | did you mean "openai"? known providers: openai, anthropic, gemini, groq, deepseek, mistral, openrouter, together, xai, azure, ollama, lmstudio, openai-compatible',
      "Missing required field: LLM.model",
      "Missing required field: mcpServers.a.command | a stdio server needs the command that starts it",
      "Missing required field: mcpServers.b.url | a sse server needs its url, http://<host>:<port>/<path>",
      "Missing required field: mcpServers.c.transport_type | the entry has both command and url; say which to use (stdio, streamable_http or sse)",
      "must be greater than 0, got the number 0",
      'unknown field "Extra" | known fields: $schema, LLM, mcpServers, AgentConfig, Memory, Trace, Hooks, Telemetry',
    ].sort((a, b) => problems.indexOf(a) - problems.indexOf(b)),
  );
  assert.equal(problems.length, 7);
});

Deno.test("fields of the other transport are rejected", () => {
  assert.deepEqual(
    problemsOf({
      LLM: llm,
      mcpServers: {
        s: { transport_type: "stdio", command: "x", url: "http://h/mcp" },
        h: { transport_type: "streamable_http", url: "http://h/mcp", args: ["a"] },
      },
    }),
    [
      '"url" does not apply to transport_type stdio | remove it, or set transport_type to streamable_http or sse for a server at a URL',
      '"args" does not apply to transport_type streamable_http | remove it, or set transport_type to stdio for a server started as a local process',
    ],
  );
});

Deno.test("transport_type is inferred from command or url", () => {
  const config = parse({
    LLM: llm,
    mcpServers: { s: { command: "node", args: ["s.js"] }, h: { url: "https://h.example/mcp" } },
  });
  assert.equal(config.servers[0].transport, "stdio");
  assert.equal(config.servers[1].transport, "streamable_http");
  assert.ok(config.servers.every((s) => s.transportInferred));
});

Deno.test("a bare url ending in /sse is SSE; an inferred transport carries why, a written one not", () => {
  const config = parse({
    LLM: llm,
    mcpServers: {
      legacy: { url: "https://h.example/v1/sse?team=a" },
      modern: { url: "https://h.example/sse/mcp" },
      written: { transport_type: "streamable_http", url: "https://h.example/sse" },
    },
  });
  const [legacy, modern, written] = config.servers;
  assert.equal(legacy.transport, "sse");
  assert.match(legacy.transportReason ?? "", /a url ending in \/sse is the legacy SSE transport/);
  assert.equal(modern.transport, "streamable_http");
  assert.match(modern.transportReason ?? "", /or SSE when the server answers the legacy way/);
  assert.equal(written.transport, "streamable_http");
  assert.equal(written.transportReason, undefined);
});

Deno.test("defaults are applied and durations stay in seconds", () => {
  const config = parse({
    LLM: llm,
    mcpServers: { h: { transport_type: "sse", url: "http://127.0.0.1:9/sse" } },
  });
  assert.equal(config.llm.maxTokens, 4096);
  assert.equal(config.llm.temperature, undefined);
  assert.equal(config.agent.toolCallTimeoutSeconds, 30);
  assert.equal(config.agent.maxSteps, 20);
  assert.equal(config.agent.requestLimit, undefined);
  const server = config.servers[0];
  assert.ok(server.transport === "sse");
  assert.equal(server.timeoutSeconds, 30);
  assert.equal(server.sseReadTimeoutSeconds, 300);
  assert.equal(server.trusted, false);
  assert.equal(config.memory.backend, "auto");
});

Deno.test("${VAR} and ${VAR:-default} expand in command, args, env, url and headers", () => {
  const config = parse({
    LLM: llm,
    mcpServers: {
      s: {
        command: "${HOME}/bin/server",
        args: ["--root", "${ROOT:-/srv}", "${EMPTY:-fallback}", "$${literal}"],
        env: { API_TOKEN: "${TOKEN}" },
      },
      h: {
        url: "http://${HOST:-127.0.0.1}:8080/mcp",
        headers: { Authorization: "Bearer ${TOKEN}" },
      },
    },
  });
  const [s, h] = config.servers;
  assert.ok(s.transport === "stdio" && h.transport === "streamable_http");
  assert.equal(s.command, "/home/u/bin/server");
  assert.deepEqual(s.args, ["--root", "/srv", "fallback", "${literal}"]);
  assert.deepEqual(s.env, { API_TOKEN: "s3cret-token" });
  assert.equal(h.url, "http://127.0.0.1:8080/mcp");
  assert.deepEqual(h.headers, { Authorization: "Bearer s3cret-token" });
});

Deno.test("an unset variable without default names the server field and the variable", () => {
  const error = thrown(() =>
    parse({
      LLM: llm,
      mcpServers: {
        github: { url: "https://h/mcp", headers: { Authorization: "Bearer ${GITHUB_TOKEN}" } },
      },
    })
  );
  assert.equal(error.problems.length, 1);
  assert.equal(error.problems[0].path, "mcpServers.github.headers.Authorization");
  assert.equal(error.problems[0].message, "environment variable GITHUB_TOKEN is not set");
  assert.match(error.problems[0].hint!, /\$\{GITHUB_TOKEN:-value\}/);
  assert.ok(error.details.some((d) => d.includes("mcpServers.github.headers.Authorization")));
});

Deno.test("urls must be http(s), with a hint for a missing scheme", () => {
  assert.deepEqual(
    problemsOf({ LLM: llm, mcpServers: { h: { url: "localhost:8080/mcp" } } }),
    ['"localhost:8080/mcp" is not an http(s) URL | add the scheme: http://localhost:8080/mcp'],
  );
});

Deno.test("OAuth and an Authorization header are mutually exclusive", () => {
  assert.deepEqual(
    problemsOf({
      LLM: llm,
      mcpServers: {
        h: {
          url: "https://h/mcp",
          auth: { method: "oauth" },
          headers: { authorization: "Bearer x" },
        },
      },
    }),
    ["auth (OAuth) and an Authorization header are mutually exclusive | keep auth for OAuth, or remove auth and keep the bearer header"],
  );
});

Deno.test("provider-specific requirements: azure and openai-compatible", () => {
  assert.deepEqual(problemsOf({ LLM: { provider: "azure", model: "gpt-4o" }, mcpServers: {} }), [
    "Missing required field: LLM.endpoint | Azure OpenAI needs its resource endpoint, https://<resource>.openai.azure.com",
    "Missing required field: LLM.api_version | Azure OpenAI needs an API version, e.g. 2024-10-21",
  ]);
  assert.deepEqual(
    problemsOf({ LLM: { provider: "openai-compatible", model: "m" }, mcpServers: {} }),
    ["Missing required field: LLM.base_url | provider openai-compatible needs the server's base_url, e.g. http://localhost:8000/v1"],
  );
});

Deno.test("duplicate server names are a problem", () => {
  const [problem] = problemsOf(
    '{"LLM": {"provider": "openai", "model": "m"}, "mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}',
  );
  assert.match(problem, /^duplicate key "a" \(first at line 1\)/);
});

Deno.test("a relative cwd is resolved against the configuration file's folder", () => {
  const config = parseConfig(
    JSON.stringify({ LLM: llm, mcpServers: { s: { command: "x", cwd: "servers/s" } } }),
    "/etc/patchbay/servers_config.json",
    env,
  );
  const [s] = config.servers;
  assert.ok(s.transport === "stdio");
  assert.equal(s.cwd, "/etc/patchbay/servers/s");
});

Deno.test("roots: expanded, made absolute against the file's folder; absent means none", async () => {
  await using tmp = await tempDir("patchbay-config-roots-");
  const dir = await Deno.realPath(tmp.path);
  await Deno.mkdir(join(dir, "project"));
  await Deno.mkdir(join(dir, "data"));
  const config = parseConfig(
    JSON.stringify({
      LLM: llm,
      mcpServers: {
        files: { command: "x", roots: ["project", "${DATA_DIR}", `${dir}/project/../data`] },
        remote: { url: "http://localhost:1/mcp", roots: ["project"] },
        plain: { command: "x" },
      },
    }),
    join(dir, "servers_config.json"),
    createEnvironment({ DATA_DIR: join(dir, "data") }),
  );
  const [files, remote, plain] = config.servers;
  assert.deepEqual(files.roots, [join(dir, "project"), join(dir, "data")]);
  assert.deepEqual(remote.roots, [join(dir, "project")]);
  assert.equal(plain.roots, undefined);
  // The same folder twice is worth a word, not a failure.
  assert.deepEqual(config.warnings.map((w) => [w.path, w.message]), [
    ["mcpServers.files.roots[2]", `the root ${join(dir, "data")} is listed twice`],
  ]);
});

Deno.test("roots: URLs, ~, files, empty lists and unset variables are problems; a missing folder warns", async () => {
  await using tmp = await tempDir("patchbay-config-roots-");
  const dir = await Deno.realPath(tmp.path);
  await Deno.writeTextFile(join(dir, "notes.txt"), "");
  const entry = (roots: unknown) => ({ LLM: llm, mcpServers: { s: { command: "x", roots } } });
  const problems = (roots: unknown) => {
    try {
      parseConfig(JSON.stringify(entry(roots)), join(dir, "servers_config.json"), env);
    } catch (error) {
      assert.ok(error instanceof ConfigValidationError, String(error));
      return error.problems.map((p) => `${p.path}: ${p.message}${p.hint ? ` | ${p.hint}` : ""}`);
    }
    assert.fail("the roots were accepted");
  };
  assert.deepEqual(problems(["file:///srv/data", "https://example.com/x"]), [
    'mcpServers.s.roots[0]: "file:///srv/data" is a URL; roots are local folder paths | ' +
    "write the path itself, e.g. /srv/data",
    'mcpServers.s.roots[1]: "https://example.com/x" is a URL; roots are local folder paths | ' +
    "give the folder on this machine the server may work in",
  ]);
  assert.deepEqual(problems(["~/projects"]), [
    'mcpServers.s.roots[0]: "~/projects": ~ is not expanded in the configuration | ' +
    "write ${HOME}/projects",
  ]);
  assert.deepEqual(problems(["notes.txt"]), [
    `mcpServers.s.roots[0]: the root ${join(dir, "notes.txt")} is a file, not a folder | ` +
    "name the folder around it",
  ]);
  assert.deepEqual(problems([]), ["mcpServers.s.roots: must not be empty, got an array"]);
  assert.deepEqual(problems("data"), [
    'mcpServers.s.roots: expected an array, got the string "data"',
  ]);
  assert.deepEqual(problems(["${NOT_SET_ANYWHERE}"]), [
    "mcpServers.s.roots[0]: environment variable NOT_SET_ANYWHERE is not set | " +
    "set NOT_SET_ANYWHERE in .env or the environment, or give a default: ${NOT_SET_ANYWHERE:-value}",
  ]);
  assert.deepEqual(problems(["${EMPTY:-}"]), [
    'mcpServers.s.roots[0]: root "${EMPTY:-}" expands to an empty path',
  ]);

  const config = parseConfig(
    JSON.stringify(entry(["later"])),
    join(dir, "servers_config.json"),
    env,
  );
  assert.deepEqual(config.servers[0].roots, [join(dir, "later")]);
  assert.deepEqual(config.warnings.map((w) => `${w.path}: ${w.message} (${w.hint})`), [
    `mcpServers.s.roots[0]: the root folder ${join(dir, "later")} does not exist ` +
    "(servers skip roots they cannot find; create it or fix the path)",
  ]);
});

Deno.test("loadConfig: a missing file says where it looked and how to fix it", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  const path = join(dir, "nope.json");
  const error = await loadConfig(path, env).catch((e) => e);
  assert.ok(error instanceof PatchbayError);
  assert.equal(error.message, `Invalid configuration: ${path} not found`);
  assert.match(error.remedy, /servers_config.example.json|--config/);
  const dirError = await loadConfig(dir, env).catch((e) => e);
  assert.equal(dirError.message, `Invalid configuration: ${dir} is a directory`);
});
