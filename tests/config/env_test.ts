import assert from "node:assert/strict";
import { join } from "node:path";
import { createEnvironment, isSecretName, loadEnvironment, parseDotenv } from "../../lib/env.ts";
import { PatchbayError } from "../../lib/errors.ts";
import { tempDir } from "../support/temp_dir.ts";

Deno.test("dotenv syntax: export, quotes, escapes, comments, multi-line values", () => {
  const { values, problems } = parseDotenv([
    "# a comment",
    "LLM_API_KEY=sk-abc123 # trailing comment",
    "export REDIS_HOST=localhost",
    "SINGLE='no $expansion \\n here'",
    'DOUBLE="line1\\nline2 \\"quoted\\""',
    'MULTI="first',
    'second"',
    "EMPTY=",
    "HASH=a#b",
    "SPACED = value with spaces ",
    "",
  ].join("\n"));
  assert.deepEqual(problems, []);
  assert.deepEqual(Object.fromEntries(values), {
    LLM_API_KEY: "sk-abc123",
    REDIS_HOST: "localhost",
    SINGLE: "no $expansion \\n here",
    DOUBLE: 'line1\nline2 "quoted"',
    MULTI: "first\nsecond",
    EMPTY: "",
    HASH: "a#b",
    SPACED: "value with spaces",
  });
});

Deno.test("bad lines are reported with their line numbers and skipped", () => {
  const { values, problems } = parseDotenv('GOOD=1\nnot a pair\n1BAD=x\nOPEN="never closed\n');
  assert.deepEqual(Object.fromEntries(values), { GOOD: "1" });
  assert.deepEqual(problems, [
    { line: 2, message: "expected NAME=value" },
    { line: 3, message: "'1BAD' is not a valid variable name" },
    { line: 4, message: 'value of OPEN has no closing "' },
  ]);
});

Deno.test("the process environment wins over the .env file", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, ".env");
  await Deno.writeTextFile(path, "LLM_API_KEY=from-file\nREDIS_PORT=6380\n");
  const env = await loadEnvironment({ path, processEnv: { LLM_API_KEY: "from-process" } });
  assert.equal(env.get("LLM_API_KEY"), "from-process");
  assert.equal(env.source("LLM_API_KEY"), "process");
  assert.equal(env.get("REDIS_PORT"), "6380");
  assert.equal(env.source("REDIS_PORT"), "file");
  assert.equal(env.get("MISSING"), undefined);
  assert.deepEqual(env.file, { path, loaded: true, count: 2, problems: [] });
});

Deno.test("a missing default .env is fine; a missing explicit --env-file is an error", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, ".env");
  const env = await loadEnvironment({ path, processEnv: {} });
  assert.equal(env.file.loaded, false);
  const error = await loadEnvironment({ path, required: true, processEnv: {} }).catch((e) => e);
  assert.ok(error instanceof PatchbayError);
  assert.equal(error.message, `Could not read environment file ${path}`);
  assert.equal(error.reason, "the file does not exist");
  assert.match(error.remedy, /--env-file/);
});

Deno.test("loading never writes into Deno.env", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, ".env");
  await Deno.writeTextFile(path, "PATCHBAY_TEST_ONLY_VAR=1\n");
  const env = await loadEnvironment({ path });
  assert.equal(env.get("PATCHBAY_TEST_ONLY_VAR"), "1");
  assert.equal(Deno.env.get("PATCHBAY_TEST_ONLY_VAR"), undefined);
});

Deno.test("secret-looking names", () => {
  for (
    const name of ["LLM_API_KEY", "REDIS_PASSWORD", "GITHUB_TOKEN", "CLIENT_SECRET", "AUTH_TOKEN"]
  ) {
    assert.ok(isSecretName(name), name);
  }
  for (const name of ["REDIS_HOST", "PATH", "KEYBOARD", "MONKEY_BUSINESS"]) {
    assert.ok(!isSecretName(name), name);
  }
  assert.deepEqual(createEnvironment({ A: "1" }).names(), ["A"]);
});
