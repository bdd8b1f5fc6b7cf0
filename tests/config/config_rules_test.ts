/**
 * The rules among fields that the schema's refinements and the transports' union check
 * (lib/config/auth_rules.ts, lib/config/schema.ts): each problem's path, wording and hint.
 */
import assert from "node:assert/strict";
import { parseConfig } from "../../lib/config/load.ts";
import { createEnvironment } from "../../lib/env.ts";
import { ConfigValidationError } from "../../lib/errors.ts";

const env = createEnvironment({ KEY: "k" });
const llm = { provider: "openai", model: "m" };

function load(servers: Record<string, unknown>) {
  return parseConfig(
    JSON.stringify({ LLM: llm, mcpServers: servers }, null, 2),
    "servers_config.json",
    env,
  );
}

/** `path: message | hint` of each problem, in file order. */
function problemsOf(servers: Record<string, unknown>): string[] {
  try {
    load(servers);
  } catch (error) {
    assert.ok(error instanceof ConfigValidationError, `expected a validation error, got ${error}`);
    return error.problems.map((p) => `${p.path}: ${p.message}${p.hint ? ` | ${p.hint}` : ""}`);
  }
  assert.fail("the configuration was accepted");
}

const oauth = (auth: Record<string, unknown>) => ({
  a: { url: "http://127.0.0.1:1/mcp", auth: { method: "oauth", ...auth } },
});

Deno.test("auth: one way to authenticate the client, and a key needs its client_id", () => {
  assert.deepEqual(problemsOf(oauth({ private_key: "${KEY}", private_key_file: "key.pem" })), [
    "mcpServers.a.auth.private_key: auth.private_key needs auth.client_id: the key signs " +
    'assertions for a pre-registered client | set "client_id" to the id the authorization ' +
    "server registered the key under",
    "mcpServers.a.auth.private_key_file: auth.private_key and auth.private_key_file are " +
    "mutually exclusive | keep one: the key itself (e.g. ${CLIENT_KEY}) or the file that holds it",
  ]);
  assert.deepEqual(
    problemsOf(oauth({ private_key: "k", client_secret: "s", client_id: "c" })),
    [
      "mcpServers.a.auth.private_key: auth.client_secret and auth.private_key are two ways to " +
      "authenticate the client | keep client_secret for client_secret_basic, or the private " +
      "key for private_key_jwt",
    ],
  );
});

Deno.test("auth: grant client_credentials needs a client_id and its credentials", () => {
  assert.deepEqual(problemsOf(oauth({ grant: "client_credentials" })), [
    "mcpServers.a.auth.client_id: Missing required field: mcpServers.a.auth.client_id | " +
    'grant "client_credentials" authenticates as a pre-registered client: set client_id, ' +
    "and client_secret or private_key_file",
  ]);
  assert.deepEqual(problemsOf(oauth({ grant: "client_credentials", client_id: "c" })), [
    'mcpServers.a.auth.grant: grant "client_credentials" needs the client\'s credentials: ' +
    "auth.client_secret (client_secret_basic) or auth.private_key / auth.private_key_file " +
    '(private_key_jwt) | add "client_secret": "${CLIENT_SECRET}" (from .env), or ' +
    '"private_key_file"',
  ]);
  assert.deepEqual(
    problemsOf(oauth({
      grant: "client_credentials",
      client_id: "c",
      client_secret: "s",
      client_metadata_url: "https://m.example/client.json",
    })),
    [
      "mcpServers.a.auth.client_metadata_url: auth.client_metadata_url is for browser logins; " +
      'grant "client_credentials" uses client_id | remove client_metadata_url',
    ],
  );
});

Deno.test("auth: a private_key_alg without a key is a warning, and the defaults apply", () => {
  const config = load(oauth({ private_key_alg: "ES256" }));
  assert.deepEqual(config.warnings.map((w) => `${w.path}: ${w.message} (${w.hint})`), [
    "mcpServers.a.auth.private_key_alg: auth.private_key_alg is set but no private key is: " +
    "it is not used (add private_key or private_key_file, or remove private_key_alg)",
  ]);
  const [server] = config.servers;
  assert.ok(server.transport === "streamable_http");
  assert.equal(server.auth?.grant, "authorization_code");
  assert.equal(server.auth?.dpop, false);
});

Deno.test("sse: a stateless protocol revision is refused, with the other problems of the entry", () => {
  assert.deepEqual(
    problemsOf({ a: { transport_type: "sse", protocol: "2026-07-28", command: "x" } }),
    [
      "mcpServers.a.url: Missing required field: mcpServers.a.url | a sse server needs its " +
      "url, http://<host>:<port>/<path>",
      "mcpServers.a.protocol: protocol revision 2026-07-28 has no legacy SSE transport | " +
      'use "transport_type": "streamable_http" with the server\'s MCP endpoint, or ' +
      '"protocol": "legacy" for an SSE server',
      'mcpServers.a.command: "command" does not apply to transport_type sse | remove it, or ' +
      "set transport_type to stdio for a server started as a local process",
    ],
  );
});

Deno.test("an entry's problems come in one pass; a field of the other transport does not stop it", () => {
  // A field with a problem is reported and left out; the rest of the entry is read on.
  assert.deepEqual(
    problemsOf({ a: { transport_type: "stdio", command: "${NOT_SET_HERE}", auth: {} } }),
    [
      "mcpServers.a.command: environment variable NOT_SET_HERE is not set | set NOT_SET_HERE " +
      "in .env or the environment, or give a default: ${NOT_SET_HERE:-value}",
      'mcpServers.a.auth.method: expected one of "oauth", got nothing',
    ],
  );
  // A refused field that decides the transport leaves the transport's rules unjudged
  // (no guess from what is left), but another client's forms are still read.
  assert.deepEqual(
    problemsOf({
      b: { type: "ws", url: "${NOT_SET_HERE}", enabled: true, disabled: true },
    }).map((problem) => problem.split(" | ")[0]),
    [
      'mcpServers.b.type: expected one of "stdio", "http", "streamable-http", ' +
      '"streamable_http", "streamableHttp", "sse", got the string "ws"',
      'mcpServers.b.enabled: "enabled": true and "disabled": true contradict each other',
    ],
  );
  // A sound one is read on past the misplaced field: its values are checked too.
  assert.deepEqual(
    problemsOf({
      a: { transport_type: "stdio", command: "${NOT_SET_HERE}", auth: { method: "oauth" } },
    }),
    [
      "mcpServers.a.command: environment variable NOT_SET_HERE is not set | set NOT_SET_HERE " +
      "in .env or the environment, or give a default: ${NOT_SET_HERE:-value}",
      'mcpServers.a.auth: "auth" does not apply to transport_type stdio | remove it, or set ' +
      "transport_type to streamable_http or sse for a server at a URL",
    ],
  );
});

Deno.test('sse: "legacy", "auto" and a 2025 revision are accepted (the modes are not revisions)', () => {
  for (const protocol of ["legacy", "auto", "2025-11-25"]) {
    const config = load({ a: { transport_type: "sse", url: "http://127.0.0.1:1/sse", protocol } });
    const server = config.servers[0];
    assert.equal(server.transport, "sse", `protocol ${protocol}`);
    assert.equal(server.protocol, protocol);
  }
});

Deno.test("a command holding a control or invisible character is refused, shown escaped", () => {
  const hidden = {
    // OSC 52: a terminal that printed it would set the clipboard.
    osc: "npx\u001b]52;c;aGk=\u0007",
    c1: "node\u009b31m",
    del: "no\u007fde",
    bidi: "sh\u202e",
    zeroWidth: "np\u200bx",
    fromVariable: "${CMD}",
  };
  const servers = Object.fromEntries(
    Object.entries(hidden).map(([name, command]) => [name, { command, args: ["-y", "x"] }]),
  );
  const problems = (() => {
    try {
      parseConfig(
        JSON.stringify({ LLM: llm, mcpServers: servers }),
        "servers_config.json",
        createEnvironment({ CMD: "run\u0000me" }),
      );
    } catch (error) {
      assert.ok(error instanceof ConfigValidationError, String(error));
      return error.problems.map((p) => `${p.path}: ${p.message}`);
    }
    assert.fail("the configuration was accepted");
  })();
  const shown = (text: string) =>
    `the command holds a control or invisible character, shown escaped: "${text}"`;
  assert.deepEqual(problems, [
    `mcpServers.osc.command: ${shown("npx\\x1b]52;c;aGk=\\x07")}`,
    `mcpServers.c1.command: ${shown("node\\x9b31m")}`,
    `mcpServers.del.command: ${shown("no\\x7fde")}`,
    `mcpServers.bidi.command: ${shown("sh\\u{202e}")}`,
    `mcpServers.zeroWidth.command: ${shown("np\\u{200b}x")}`,
    `mcpServers.fromVariable.command: ${shown("run\\x00me")}`,
  ]);
  for (const problem of problems) {
    // deno-lint-ignore no-control-regex -- what must not be in the message
    assert.doesNotMatch(problem, /[\u0000-\u001f\u007f-\u009f\u200b\u202e]/);
  }
  // Arguments are the program's to read (a prompt, a pattern): not refused.
  assert.doesNotThrow(() => load({ fine: { command: "node", args: ["a\tb", "é"] } }));
});

Deno.test("auth: the organisation grants need their sources, one each; their fields elsewhere are unused", () => {
  assert.deepEqual(problemsOf(oauth({ grant: "jwt_bearer" })), [
    "mcpServers.a.auth.assertion_file: Missing required field: " +
    "mcpServers.a.auth.assertion_file | " +
    'grant "jwt_bearer" presents the workload\'s JWT: set ' +
    "auth.assertion_file (e.g. /var/run/secrets/tokens/mcp) or auth.assertion_command",
  ]);
  assert.deepEqual(
    problemsOf(oauth({
      grant: "jwt_bearer",
      assertion_file: "t.jwt",
      assertion_command: ["print-token"],
    })),
    [
      "mcpServers.a.auth.assertion_command: auth.assertion_file and auth.assertion_command " +
      "are mutually exclusive | keep the file the platform writes, or the command",
    ],
  );
  assert.deepEqual(problemsOf(oauth({ grant: "token_exchange", idp: {} })), [
    "mcpServers.a.auth.client_id: Missing required field: mcpServers.a.auth.client_id | " +
    'grant "token_exchange" presents the identity provider\'s ' +
    "grant as a pre-registered client of the server's authorization server: set client_id " +
    "(and client_secret)",
    "mcpServers.a.auth.idp.issuer: Missing required field: mcpServers.a.auth.idp.issuer | " +
    "auth.idp needs issuer or token_endpoint",
    "mcpServers.a.auth.idp.client_id: Missing required field: " +
    "mcpServers.a.auth.idp.client_id | auth.idp needs client_id: patchbay's client at the " +
    "identity provider, the audience of the person's ID token",
    "mcpServers.a.auth.idp.subject_token_file: Missing required field: " +
    "mcpServers.a.auth.idp.subject_token_file | auth.idp needs the person's ID token: " +
    "subject_token_file or subject_token_command (e.g. the command of your single sign-on " +
    "tool that prints it)",
  ]);
  const config = load(oauth({ assertion_file: "t.jwt", idp: { issuer: "https://idp.example" } }));
  assert.deepEqual(config.warnings.map((w) => `${w.path}: ${w.message} (${w.hint})`), [
    'mcpServers.a.auth.assertion_file: auth.assertion_file is only used with grant "jwt_bearer" ' +
    '(set "grant": "jwt_bearer", or remove it)',
    'mcpServers.a.auth.idp: auth.idp is only used with grant "token_exchange" (set "grant": ' +
    '"token_exchange", or remove idp)',
  ]);
});

Deno.test("auth: the organisation grants' values: paths against the file's folder, ${VAR} expanded", () => {
  const config = parseConfig(
    JSON.stringify({
      LLM: llm,
      mcpServers: {
        wl: {
          url: "https://mcp.example.com/mcp",
          auth: {
            method: "oauth",
            grant: "jwt_bearer",
            assertion_command: ["get-token", "${KEY}"],
          },
        },
        ema: {
          url: "https://mcp.example.com/mcp",
          auth: {
            method: "oauth",
            grant: "token_exchange",
            client_id: "c",
            idp: {
              issuer: "https://idp.example.com",
              client_id: "p",
              client_secret: "${KEY}",
              subject_token_file: "tokens/id.jwt",
            },
          },
        },
      },
    }),
    "/work/servers_config.json",
    env,
  );
  const [wl, ema] = config.servers;
  assert.ok(wl.transport !== "stdio" && ema.transport !== "stdio");
  assert.deepEqual(wl.auth?.assertion, {
    field: "auth.assertion_command",
    command: ["get-token", "k"],
  });
  assert.deepEqual(ema.auth?.idp, {
    issuer: "https://idp.example.com",
    tokenEndpoint: undefined,
    clientId: "p",
    clientSecret: "k",
    subjectToken: { field: "auth.idp.subject_token_file", file: "/work/tokens/id.jwt" },
  });
});
