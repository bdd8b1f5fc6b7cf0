import assert from "node:assert/strict";
import { expandVariables } from "../lib/config/expand.ts";

const vars: Record<string, string> = { A: "alpha", EMPTY: "" };
const lookup = (name: string) => vars[name];

Deno.test("plain references and defaults", () => {
  assert.deepEqual(expandVariables("x-${A}-y", lookup), {
    value: "x-alpha-y",
    missing: [],
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
    malformed: false,
  });
});

Deno.test("malformed references are flagged", () => {
  assert.equal(expandVariables("${1A}", lookup).malformed, true);
  assert.equal(expandVariables("${A", lookup).malformed, true);
  assert.equal(expandVariables("$A stays", lookup).malformed, false);
  assert.equal(expandVariables("$A stays", lookup).value, "$A stays");
});
