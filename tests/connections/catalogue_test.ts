import assert from "node:assert/strict";
import type { Tool } from "@modelcontextprotocol/client";
import {
  buildCatalogue,
  MAX_TOOL_NAME_LENGTH,
  sanitize,
  type ServerTools,
  TOOL_NAME_PATTERN,
} from "../../lib/connections/catalogue.ts";

const tool = (name: string): Tool => ({ name, inputSchema: { type: "object" } });

function names(servers: ServerTools[]): string[] {
  return buildCatalogue(servers).map((t) => t.name);
}

function assertValidAndUnique(servers: ServerTools[]): void {
  const catalogue = buildCatalogue(servers);
  for (const entry of catalogue) {
    assert.match(entry.name, TOOL_NAME_PATTERN, `invalid name ${entry.name}`);
  }
  assert.equal(new Set(catalogue.map((t) => t.name)).size, catalogue.length, "names collide");
}

Deno.test("plain names become <server>__<tool>", () => {
  assert.deepEqual(
    names([{ server: "fs", tools: [tool("read_file"), tool("list-dir")] }]),
    ["fs__read_file", "fs__list-dir"],
  );
});

Deno.test("every entry routes back to its server and original name", () => {
  const catalogue = buildCatalogue([
    { server: "a.b", tools: [tool("get.weather"), tool("get weather")] },
    { server: "c", tools: [tool("get.weather")] },
  ]);
  const routes = catalogue.map((t) => [t.name, t.server, t.originalName]);
  assert.equal(catalogue.length, 3);
  assert.deepEqual(
    new Set(routes.map((r) => `${r[1]}/${r[2]}`)),
    new Set([
      "a.b/get.weather",
      "a.b/get weather",
      "c/get.weather",
    ]),
  );
  assertValidAndUnique([
    { server: "a.b", tools: [tool("get.weather"), tool("get weather")] },
    { server: "c", tools: [tool("get.weather")] },
  ]);
});

Deno.test("dots, spaces and unicode are replaced; accents fold to ASCII", () => {
  const [dotted, spaced, accented, cjk] = names([
    { server: "srv", tools: [tool("files.read"), tool("read  file"), tool("café"), tool("搜索")] },
  ]);
  assert.equal(dotted, "srv__files_read");
  assert.equal(spaced, "srv__read_file");
  assert.equal(accented, "srv__cafe");
  // No usable characters at all: a fallback word and still valid.
  assert.match(cjk, /^srv__tool(_[0-9a-z]+)?$/);
  assert.equal(sanitize("搜索", "tool"), "tool");
});

Deno.test("names with __ inside stay routable and distinct", () => {
  const catalogue = buildCatalogue([
    { server: "x", tools: [tool("y__z")] },
    { server: "x__y", tools: [tool("z")] },
  ]);
  // Both want x__y__z: neither may keep it, both stay valid, unique and routed.
  assert.equal(catalogue.length, 2);
  assert.notEqual(catalogue[0].name, catalogue[1].name);
  assert.ok(catalogue.every((t) => t.name !== "x__y__z"));
  assert.deepEqual(catalogue.map((t) => [t.server, t.originalName]), [["x", "y__z"], [
    "x__y",
    "z",
  ]]);
  assertValidAndUnique([{ server: "x", tools: [tool("y__z")] }, {
    server: "x__y",
    tools: [tool("z")],
  }]);
});

Deno.test("an exact name keeps its plain form when a sanitized one clashes with it", () => {
  const catalogue = buildCatalogue([
    { server: "s", tools: [tool("a.b"), tool("a_b")] },
  ]);
  const exact = catalogue.find((t) => t.originalName === "a_b")!;
  const sanitized = catalogue.find((t) => t.originalName === "a.b")!;
  assert.equal(exact.name, "s__a_b");
  assert.match(sanitized.name, /^s__a_b_[0-9a-z]{7}$/);
});

Deno.test("names over 64 characters are shortened with a hash and stay distinct", () => {
  const long1 = "x".repeat(80) + "_first";
  const long2 = "x".repeat(80) + "_second";
  const catalogue = buildCatalogue([{ server: "srv", tools: [tool(long1), tool(long2)] }]);
  for (const entry of catalogue) {
    assert.ok(entry.name.length <= MAX_TOOL_NAME_LENGTH, entry.name);
    assert.match(entry.name, TOOL_NAME_PATTERN);
  }
  assert.notEqual(catalogue[0].name, catalogue[1].name);
  assert.deepEqual(catalogue.map((t) => t.originalName), [long1, long2]);
});

Deno.test("a long server name leaves room for the tool name", () => {
  const [name] = names([{
    server: "a-very-long-server-name-for-analytics-production",
    tools: [tool("query")],
  }]);
  assert.ok(name.endsWith("__query"), name);
  assert.match(name, TOOL_NAME_PATTERN);
});

Deno.test("the same tools give the same names in any order", () => {
  const servers: ServerTools[] = [
    {
      server: "one",
      tools: [tool("run.it"), tool("run_it"), tool("run it"), tool("z".repeat(70))],
    },
    { server: "two", tools: [tool("run.it"), tool("ok")] },
    { server: "one.", tools: [tool("run_it")] },
  ];
  const forward = buildCatalogue(servers).map((t) => `${t.server}/${t.originalName}=${t.name}`);
  const reversed = buildCatalogue(
    [...servers].reverse().map((s) => ({ ...s, tools: [...s.tools].reverse() })),
  ).map((t) => `${t.server}/${t.originalName}=${t.name}`);
  assert.deepEqual(new Set(forward), new Set(reversed));
  assertValidAndUnique(servers);
});

Deno.test("a tool listed twice by one server appears once", () => {
  assert.deepEqual(names([{ server: "s", tools: [tool("a"), tool("a")] }]), ["s__a"]);
});

Deno.test("many near-identical names remain unique and valid", () => {
  const tools = ["a.b", "a b", "a/b", "a:b", "a_b", "a-b", "a·b", "a\tb", "a__b", "å.b"].map(tool);
  assertValidAndUnique([{ server: "s", tools }, { server: "s.", tools }, { server: "s_", tools }]);
});

Deno.test("metadata is carried over for the model", () => {
  const [entry] = buildCatalogue([{
    server: "s",
    tools: [{
      name: "t",
      title: "Tee",
      description: "does t",
      inputSchema: { type: "object", properties: { a: { type: "string" } } },
      annotations: { readOnlyHint: true },
    }],
  }]);
  assert.equal(entry.title, "Tee");
  assert.equal(entry.description, "does t");
  assert.deepEqual(entry.inputSchema, { type: "object", properties: { a: { type: "string" } } });
  assert.deepEqual(entry.annotations, { readOnlyHint: true });
});
