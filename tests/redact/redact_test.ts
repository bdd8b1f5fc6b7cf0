import assert from "node:assert/strict";
import { join } from "node:path";
import { Logger } from "../../lib/log/log.ts";
import { InsecureTokenEndpointError } from "@modelcontextprotocol/client";
import type { OAuthFailedError } from "../../lib/errors.ts";
import { typedOAuthFailure } from "../../lib/oauth/login_errors.ts";
import { REDACTED, Redactor } from "../../lib/redact/redact.ts";
import { tempDir } from "../support/temp_dir.ts";

Deno.test("registered secrets are replaced wherever they appear", () => {
  const r = new Redactor();
  r.addSecret("hunter2-password");
  r.addSecret("abc"); // too short to register: would mangle ordinary text
  assert.equal(r.redact("pw=hunter2-password; x=abc"), `pw=${REDACTED}; x=abc`);
});

Deno.test("secret shapes are caught even when never registered", () => {
  const r = new Redactor();
  const cases: Array<[string, string]> = [
    ["Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig", `Authorization: Bearer ${REDACTED}`],
    ["redis://default:p4ssw0rd@127.0.0.1:6379/0", `redis://default:${REDACTED}@127.0.0.1:6379/0`],
    ["https://user:pa55@example.com/mcp", `https://user:${REDACTED}@example.com/mcp`],
    ["key sk-proj-ABCDEFGHIJKLMNOPQRSTUV here", `key ${REDACTED} here`],
    [
      '{"access_token":"tok-123456","expires_in":3600}',
      `{"access_token":"${REDACTED}","expires_in":3600}`,
    ],
    ["client_secret=shhh-secret&x=1", `client_secret=${REDACTED}&x=1`],
    ["GET /callback?code=AUTHCODE123&state=s", `GET /callback?code=${REDACTED}&state=s`],
    ["REDIS_PASSWORD=topsecret", `REDIS_PASSWORD=${REDACTED}`],
  ];
  for (const [input, expected] of cases) assert.equal(r.redact(input), expected, input);
});

Deno.test("ordinary text is left alone", () => {
  const r = new Redactor();
  const text = "connected to everything (stdio) with 12 tools in 431 ms; password prompt skipped";
  assert.equal(r.redact(text), text);
});

Deno.test("redactValue walks nested JSON", () => {
  const r = new Redactor();
  r.addSecret("sekret-value");
  assert.deepEqual(
    r.redactValue({ a: ["sekret-value", 1], b: { c: "x sekret-value y" }, d: null }),
    { a: [REDACTED, 1], b: { c: `x ${REDACTED} y` }, d: null },
  );
});

Deno.test("the log file never holds a registered secret, at any level", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "state", "patchbay.log");
  const redactor = new Redactor();
  redactor.addSecret("sk-test-0123456789abcdef");
  const mirrored: string[] = [];
  const logger = new Logger({
    file,
    level: "debug",
    mirror: true,
    redactor,
    mirrorTo: (l) => mirrored.push(l),
  });
  const log = logger.child("test");
  log.debug("using key sk-test-0123456789abcdef", { header: "Bearer sk-test-0123456789abcdef" });
  log.info("plain line");
  logger.close();
  const text = await Deno.readTextFile(file);
  assert.ok(!text.includes("sk-test-0123456789abcdef"), text);
  assert.match(text, /DEBUG \[test\] using key \[REDACTED\]/);
  assert.match(text, /INFO {2}\[test\] plain line/);
  assert.equal(mirrored.length, 2);
  assert.ok(mirrored.every((l) => !l.includes("sk-test-0123456789abcdef")));
  assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
});

Deno.test("levels filter and --debug mode mirrors", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "p.log");
  const mirrored: string[] = [];
  const logger = new Logger({ file, mirrorTo: (l) => mirrored.push(l) });
  logger.child("x").debug("hidden at info level");
  logger.setDebug(true);
  logger.child("x").debug("shown in debug mode");
  logger.close();
  const text = await Deno.readTextFile(file);
  assert.ok(!text.includes("hidden at info level"));
  assert.ok(text.includes("shown in debug mode"));
  assert.equal(mirrored.length, 1);
});

Deno.test("an unwritable log path is reported, not thrown", () => {
  const logger = new Logger({ file: "/proc/patchbay-cannot-write/p.log" });
  assert.ok(logger.openError instanceof Error);
  logger.child("x").info("goes nowhere, without failing");
  logger.close();
});

Deno.test("shape rules leave prose alone: the word after token, Bearer or a key name", () => {
  const r = new Redactor();
  const prose = [
    // Once, "the token endpoint" became "the token [REDACTED]".
    "the token endpoint http://auth.example.test/token is not https",
    "Token Endpoint and Bearer realm are words; so is Basic authentication",
    'WWW-Authenticate: Bearer error="invalid_token", error_description="expired"',
    "OpenAI accepted LLM_API_KEY: 1 model listed",
    "password: required",
    // A variable reference names where a value comes from; once, "${input:api-key}" in a
    // message became "[REDACTED]}".
    'mcpServers.gh.env.API_KEY: "${input:api-key}" is another client\'s variable',
    "api_key=${API_KEY}",
  ];
  for (const text of prose) assert.equal(r.redact(text), text);
  const secrets: Array<[string, string]> = [
    ["Bearer abc123def456", `Bearer ${REDACTED}`],
    // After an Authorization header name, any value is the credential.
    ["Authorization: Bearer abcdefghijklmnop", `Authorization: Bearer ${REDACTED}`],
    ['{"authorization":"Basic plainwords"}', `{"authorization":"Basic ${REDACTED}"}`],
    ["Basic dXNlcjpwYXNzd29yZA==", `Basic ${REDACTED}`],
    ["token yZ3kQ9sTaBcD", `token ${REDACTED}`],
    ["Bearer abcdefghijklmnopqrstuvwxyzabcdefgh", `Bearer ${REDACTED}`],
    ["password: hunter2", `password: ${REDACTED}`],
    ["password: Secret", `password: ${REDACTED}`],
    ['"password": "required"', `"password": "${REDACTED}"`],
    ["api_key=abc", `api_key=${REDACTED}`],
  ];
  for (const [input, expected] of secrets) assert.equal(r.redact(input), expected, input);
});

Deno.test("an OAuth failure message survives the redactor word for word", () => {
  const failure = typedOAuthFailure(
    new InsecureTokenEndpointError("http://auth.example.test/token"),
    {
      server: "s",
      serverUrl: new URL("https://mcp.example.test/mcp"),
      redirectUri: "http://localhost:3000/callback",
    },
  ) as OAuthFailedError;
  const r = new Redactor();
  assert.match(
    failure.reason,
    /^the token_endpoint http:\/\/auth\.example\.test\/token is not https/,
  );
  assert.equal(r.redact(failure.reason), failure.reason);
  assert.equal(r.redact(failure.remedy), failure.remedy);
});

Deno.test("credentials in configured URLs are registered: password, key-as-user, secret query values", () => {
  const r = new Redactor();
  r.addUrlSecrets(
    "https://gateway-user:p%40ss-w0rd-x@llm.example.test/v1?api_key=k%2Bey-123456&api-version=2024-10-21",
  );
  r.addUrlSecrets("https://gw-key-0a1b2c3d4e@llm.example.test/v1");
  r.addUrlSecrets("https://llm.example.test/v1?sig=signature-value-1&region=europe-west");
  r.addUrlSecrets("not a url");
  const text = "seen: p%40ss-w0rd-x p@ss-w0rd-x k%2Bey-123456 k+ey-123456 gw-key-0a1b2c3d4e " +
    "signature-value-1 2024-10-21 europe-west gateway-user";
  assert.equal(
    r.redact(text),
    `seen: ${REDACTED} ${REDACTED} ${REDACTED} ${REDACTED} ${REDACTED} ${REDACTED} ` +
      "2024-10-21 europe-west gateway-user",
  );
});
