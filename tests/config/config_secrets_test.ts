/** Secrets found in a server entry, and the .env variables they are given. */

import assert from "node:assert/strict";
import { argSecrets, maskedArgs } from "../../lib/config/arg_secrets.ts";
import { findSecrets, withReferences } from "../../lib/config/secrets.ts";
import { urlSecrets } from "../../lib/config/url_secrets.ts";
import { createEnvironment } from "../../lib/env.ts";

Deno.test("secret env values and credential headers are found; references and plain values are not", () => {
  const env = createEnvironment({});
  const entry = {
    env: { GITHUB_TOKEN: "ghp_x", LOG_LEVEL: "debug", API_KEY: "${API_KEY}" },
    headers: { Authorization: "Bearer abc", "X-Api-Key": "k1", Accept: "text/plain" },
  };
  const found = findSecrets("my-server", entry, env);
  assert.deepEqual(found.map((s) => [s.field, s.variable, s.replacement]), [
    ["env.GITHUB_TOKEN", "GITHUB_TOKEN", "${GITHUB_TOKEN}"],
    ["headers.Authorization", "MY_SERVER_TOKEN", "Bearer ${MY_SERVER_TOKEN}"],
    ["headers.X-Api-Key", "MY_SERVER_X_API_KEY", "${MY_SERVER_X_API_KEY}"],
  ]);
  assert.deepEqual(found.map((s) => s.value), ["ghp_x", "abc", "k1"]);
  const moved = withReferences(entry, found);
  assert.deepEqual(moved.headers, {
    Authorization: "Bearer ${MY_SERVER_TOKEN}",
    "X-Api-Key": "${MY_SERVER_X_API_KEY}",
    Accept: "text/plain",
  });
  assert.equal(entry.env.GITHUB_TOKEN, "ghp_x", "the entry itself is left alone");
});

Deno.test("a name set to another value (process or .env) is not reused; the same value is", () => {
  const env = createEnvironment(
    { GITHUB_TOKEN: "someone-elses" },
    new Map([["SAME", "v"], ["OTHER", "w"]]),
  );
  const [a] = findSecrets("gh", { env: { GITHUB_TOKEN: "mine" } }, env);
  assert.equal(a.variable, "GH_GITHUB_TOKEN");
  const [b] = findSecrets("s", { env: { SAME_TOKEN: "v" } }, env);
  assert.equal(b.variable, "SAME_TOKEN");
  const found = findSecrets("s", { env: { SECRET: "v", OTHER_SECRET: "x" } }, env);
  assert.deepEqual(found.map((s) => s.variable), ["SECRET", "OTHER_SECRET"]);
  const chosen = new Map<string, string>();
  const first = findSecrets("one", { env: { API_KEY: "1" } }, env, chosen);
  const second = findSecrets("two", { env: { API_KEY: "2" } }, env, chosen);
  assert.deepEqual([first[0].variable, second[0].variable], ["API_KEY", "TWO_API_KEY"]);
});

Deno.test("present: .env already holds the value, so nothing is added", () => {
  const env = createEnvironment({ FROM_PROCESS_TOKEN: "p" }, new Map([["FILE_TOKEN", "f"]]));
  const found = findSecrets("s", { env: { FILE_TOKEN: "f", FROM_PROCESS_TOKEN: "p" } }, env);
  assert.deepEqual(found.map((s) => [s.variable, s.present]), [
    ["FILE_TOKEN", true],
    ["FROM_PROCESS_TOKEN", false],
  ]);
});

Deno.test("argument secrets: a secret flag's value, --flag=value, a credential shape; not files or references", () => {
  const args = [
    "-y",
    "srv",
    "--api-key",
    "k1",
    "--token=t1",
    "--key-file",
    "/path/key.pem",
    "--token-endpoint",
    "https://auth.example/token",
    "--auth-timeout",
    "30",
    "--auth-token",
    "${ALREADY}",
    "--password",
    "--verbose",
    "Authorization: Bearer abcdef123456",
  ];
  const found = argSecrets(args);
  assert.deepEqual(found.map((s) => [s.index, s.value, s.flag]), [
    [3, "k1", "--api-key"],
    [4, "t1", "--token"],
    [15, "abcdef123456", undefined],
  ]);
  assert.equal(found[1].replace("${T}"), "--token=${T}");
  assert.equal(found[2].replace("${T}"), "Authorization: Bearer ${T}");
  assert.deepEqual(maskedArgs(["--api-key", "k1", "x"]), ["--api-key", "[REDACTED]", "x"]);
});

Deno.test("URL credentials: user:password@ and secret-named parameters, as written; references left alone", () => {
  const found = urlSecrets("https://me:p%40ss@h.example/mcp?api_key=a%2Fb&region=eu&token=t1#x");
  assert.deepEqual(found.map((s) => [s.key, s.value, s.from]), [
    ["password", "p%40ss", "me:p%40ss@"],
    ["api_key", "a%2Fb", "?api_key=a%2Fb"],
    ["token", "t1", "&token=t1"],
  ]);
  assert.equal(found[1].to("${K}"), "?api_key=${K}");
  assert.deepEqual(urlSecrets("https://h.example/mcp?api_key=${K}"), []);
  assert.deepEqual(urlSecrets("https://h.example/mcp?page=2"), []);
  const entry = { url: "https://me:pw1@h.example/mcp?key=k1" };
  const moved = withReferences(entry, findSecrets("s", entry, createEnvironment({})));
  assert.equal(moved.url, "https://me:${S_PASSWORD}@h.example/mcp?key=${S_KEY}");
});
