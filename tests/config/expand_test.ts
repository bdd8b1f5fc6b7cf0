import assert from "node:assert/strict";
import {
  expandVariables,
  MAX_REFERENCE_NESTING,
  referencedVariables,
} from "../../lib/config/expand.ts";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";

const vars: Record<string, string> = { A: "alpha", EMPTY: "" };
const lookup = (name: string) => vars[name];

Deno.test("plain references and defaults", () => {
  assert.deepEqual(expandVariables("x-${A}-y", lookup), {
    value: "x-alpha-y",
    missing: [],
    keychain: [],
    malformed: false,
  });
  assert.equal(expandVariables("${B:-beta}", lookup).value, "beta");
  assert.equal(expandVariables("${A:-beta}", lookup).value, "alpha");
});

Deno.test("an empty variable takes the default, as in the shell's :-", () => {
  assert.equal(expandVariables("${EMPTY:-d}", lookup).value, "d");
});

Deno.test("a default may be empty, contain colons, slashes and escaped braces", () => {
  assert.equal(expandVariables("${B:-}", lookup).value, "");
  assert.equal(
    expandVariables("${URL:-http://127.0.0.1:8080/mcp}", lookup).value,
    "http://127.0.0.1:8080/mcp",
  );
  assert.equal(expandVariables("${B:-a\\}b}", lookup).value, "a}b");
});

Deno.test("unset variables without default are reported by name, each once per use", () => {
  const result = expandVariables("${NOPE}/${ALSO_NOPE}/${A}", lookup);
  assert.deepEqual(result.missing, [{ name: "NOPE" }, { name: "ALSO_NOPE" }]);
  const empty = expandVariables("${EMPTY}", lookup);
  assert.deepEqual(empty.missing, [{ name: "EMPTY" }]);
});

Deno.test("$${ writes a literal ${ and is not expanded", () => {
  assert.deepEqual(expandVariables("$${A} and ${A}", lookup), {
    value: "${A} and alpha",
    missing: [],
    keychain: [],
    malformed: false,
  });
});

Deno.test("malformed references are flagged", () => {
  assert.equal(expandVariables("${1A}", lookup).malformed, true);
  assert.equal(expandVariables("${A", lookup).malformed, true);
  assert.equal(expandVariables("$A stays", lookup).malformed, false);
  assert.equal(expandVariables("$A stays", lookup).value, "$A stays");
});

Deno.test("a default may hold references, resolved left to right as in the shell", () => {
  const env: Record<string, string> = { B: "bravo", C: "charlie" };
  const look = (name: string) => env[name];
  assert.equal(expandVariables("${A:-${B:-${C}}}", look).value, "bravo");
  assert.equal(expandVariables("${A:-${NOPE:-${C}}}", look).value, "charlie");
  assert.equal(expandVariables("x/${A:-${NOPE:-lit\\}eral}}/y", look).value, "x/lit}eral/y");
  assert.deepEqual(expandVariables("${B:-${NOPE}}", look), {
    value: "bravo",
    missing: [],
    keychain: [],
    malformed: false,
  }, "a default that is not used needs nothing");
  assert.deepEqual(expandVariables("${A:-${NOPE}}", look).missing, [{ name: "NOPE" }]);
  assert.deepEqual(referencedVariables("${A:-${B:-${C}}} $${D} ${E}"), ["A", "B", "C", "E"]);
});

Deno.test("nesting beyond the limit and unclosed defaults are malformed, with what is wrong", () => {
  const deep = "${A:-".repeat(MAX_REFERENCE_NESTING + 1) + "x" + "}".repeat(
    MAX_REFERENCE_NESTING + 1,
  );
  const result = expandVariables(deep, lookup);
  assert.equal(result.malformed, true);
  assert.match(result.detail!, /nest more than 8 deep/);
  const ok = "${A:-".repeat(MAX_REFERENCE_NESTING) + "x" + "}".repeat(MAX_REFERENCE_NESTING);
  assert.equal(expandVariables(ok, lookup).malformed, false);
  assert.match(expandVariables("${B:-${C:-x}", lookup).detail!, /never closed/);
  assert.match(expandVariables("${1A}", lookup).detail!, /followed by a variable name/);
});

Deno.test("config check expands nested defaults in a real file, and names the innermost unset variable", async () => {
  await using box = await sandbox();
  await writeConfig(
    box,
    configWith({ s: { command: "node", args: ["${A:-${B:-${C}}}", "${A:-${NOPE:-fallback}}"] } }),
  );
  const withB = await runPatchbay(box, ["config", "check", "--json"], { env: { B: "bravo" } });
  assert.equal(withB.code, 0, withB.stderr);
  assert.deepEqual(JSON.parse(withB.stdout).config.servers[0].args, ["bravo", "fallback"]);
  const without = await runPatchbay(box, ["config", "check"]);
  assert.equal(without.code, 1);
  assert.match(without.stderr, /mcpServers\.s\.args\[0\]: environment variable C is not set/);
  assert.doesNotMatch(without.stderr, /args\[1\]/, "the second default needs nothing unset");
});
