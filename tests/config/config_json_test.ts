import assert from "node:assert/strict";
import { parseJson } from "../../lib/config/json.ts";

function faultsOf(text: string) {
  const result = parseJson(text);
  assert.equal(result.value, undefined, "a faulty text must not yield a value");
  return result.faults.map((f) => ({ message: f.message, ...f.position }));
}

Deno.test("valid JSON parses to the same value as JSON.parse, with positions", () => {
  const text = '{\n  "a": [1, -2.5e3, true, null],\n  "b": {"c": "x\\ny\\u0041"}\n}';
  const result = parseJson(text);
  assert.deepEqual(result.faults, []);
  assert.deepEqual(result.value, JSON.parse(text));
  assert.deepEqual(result.valuePositions.get(JSON.stringify(["a", 1])), { line: 2, column: 12 });
  assert.deepEqual(result.keyPositions.get(JSON.stringify(["b", "c"])), { line: 3, column: 9 });
});

Deno.test("trailing comma in an object is located at the comma", () => {
  assert.deepEqual(faultsOf('{\n  "a": 1,\n}'), [
    { message: "trailing comma before '}'", line: 2, column: 9 },
  ]);
});

Deno.test("trailing comma in an array is located at the comma", () => {
  assert.deepEqual(faultsOf('{"args": ["-y", "pkg",]}'), [
    { message: "trailing comma before ']'", line: 1, column: 22 },
  ]);
});

Deno.test("missing comma between members points at the second member", () => {
  assert.deepEqual(faultsOf('{\n  "a": 1\n  "b": 2\n}'), [
    { message: "missing comma between object members", line: 3, column: 3 },
  ]);
});

Deno.test("missing comma between array elements", () => {
  assert.deepEqual(faultsOf('["a" "b"]'), [
    { message: "missing comma between array elements", line: 1, column: 6 },
  ]);
});

Deno.test("line and block comments are reported, hash comments too", () => {
  assert.deepEqual(faultsOf('{\n  // note\n  "a": /* x */ 1\n}\n# end'), [
    { message: "comment", line: 2, column: 3 },
    { message: "comment", line: 3, column: 8 },
    { message: "comment", line: 5, column: 1 },
  ]);
});

Deno.test("unquoted keys are reported with the name", () => {
  assert.deepEqual(faultsOf("{mcpServers: {}}"), [
    { message: "unquoted property name 'mcpServers'", line: 1, column: 2 },
  ]);
});

Deno.test("single quotes on keys and values", () => {
  assert.deepEqual(faultsOf("{'a': 'b'}"), [
    { message: "single-quoted property name", line: 1, column: 2 },
    { message: "single-quoted string", line: 1, column: 7 },
  ]);
});

Deno.test("every recoverable fault is reported in one run", () => {
  const faults = faultsOf('{\n  "a": 1,\n  // c\n  b: \'x\'\n  "c": [1,],\n}');
  assert.deepEqual(faults.map((f) => [f.message, f.line]), [
    ["comment", 3],
    ["unquoted property name 'b'", 4],
    ["single-quoted string", 4],
    ["missing comma between object members", 5],
    ["trailing comma before ']'", 5],
    ["trailing comma before '}'", 5],
  ]);
});

Deno.test("an unclosed object names where it was opened", () => {
  const [fault] = faultsOf('{\n  "a": {\n    "b": 1\n}');
  assert.match(fault.message, /'\{' opened at line 1, column 1 is never closed/);
  assert.equal(fault.line, 4);
});

Deno.test("an unterminated string is located at its opening quote", () => {
  assert.deepEqual(faultsOf('{"a": "abc\n}'), [
    { message: "unterminated string", line: 1, column: 7 },
  ]);
});

Deno.test("an empty file, python literals and bad numbers", () => {
  assert.deepEqual(faultsOf("  \n"), [{ message: "the file is empty", line: 1, column: 1 }]);
  assert.equal(faultsOf('{"a": True}')[0].message, "invalid value 'True'");
  assert.equal(faultsOf('{"a": 01}')[0].message, "invalid number '01'");
  assert.equal(faultsOf('{"a": .5}')[0].message, "invalid number '.5'");
});

Deno.test("a lone backslash (Windows path) is an invalid escape", () => {
  const [fault] = faultsOf('{"cwd": "C:\\Users"}');
  assert.equal(fault.message, "invalid escape \\U");
});

Deno.test("text after the top-level value is reported", () => {
  assert.equal(
    faultsOf("{} }")[0].message,
    "unexpected character '}' after the end of the JSON value",
  );
});

Deno.test("a byte-order mark is accepted", () => {
  assert.deepEqual(parseJson('\uFEFF{"a": 1}').value, { a: 1 });
});

Deno.test("duplicate keys are recorded with both positions", () => {
  const result = parseJson('{"a": 1,\n "a": 2}');
  assert.deepEqual(result.duplicates, [
    { path: [], key: "a", first: { line: 1, column: 2 }, second: { line: 2, column: 2 } },
  ]);
});
