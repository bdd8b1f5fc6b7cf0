import assert from "node:assert/strict";
import type { CatalogueTool } from "../../lib/connections/types.ts";
import { parseKeyValues, resolveNamed, resolveTool } from "../../lib/session/resolve.ts";
import { PatchbayError } from "../../lib/errors.ts";

const tool = (
  server: string,
  originalName: string,
  name = `${server}__${originalName}`,
): CatalogueTool => ({
  name,
  server,
  originalName,
  inputSchema: { type: "object" },
});

const tools = [
  tool("everything", "echo"),
  tool("everything", "add"),
  tool("filesystem", "read_file"),
  tool("other", "echo"),
  tool("my.server", "get"),
];

Deno.test("tools resolve by catalogue name, server.tool, server/tool, or a unique own name", () => {
  assert.equal(resolveTool("everything__add", tools).originalName, "add");
  assert.equal(resolveTool("everything.echo", tools).server, "everything");
  assert.equal(resolveTool("other/echo", tools).server, "other");
  assert.equal(resolveTool("read_file", tools).server, "filesystem");
  assert.equal(resolveTool("my.server.get", tools).server, "my.server");
});

Deno.test("an ambiguous name lists the candidates; an unknown one suggests", () => {
  const ambiguous = (() => {
    try {
      resolveTool("echo", tools);
    } catch (e) {
      return e as PatchbayError;
    }
  })()!;
  assert.equal(ambiguous.message, "Unknown tool: echo");
  assert.equal(ambiguous.remedy, "name the server: everything.echo or other.echo");
  assert.throws(() => resolveTool("everything.ehco", tools), /Unknown tool: everything\.ehco/);
  try {
    resolveTool("everything.ehco", tools);
  } catch (e) {
    assert.equal((e as PatchbayError).remedy, 'did you mean "everything.echo"?');
  }
  // Nothing close: each surface is told where the list is, in its own words.
  try {
    resolveTool("nosuch.tool", tools);
    assert.fail("resolved");
  } catch (e) {
    assert.deepEqual((e as PatchbayError).remedies, {
      repl: "see the list with /tools",
      script: "see the list with `patchbay tools`",
    });
  }
});

Deno.test("nothing to resolve against says so", () => {
  try {
    resolveNamed("prompt", "greeting", []);
    assert.fail("resolved");
  } catch (e) {
    assert.equal((e as PatchbayError).reason, "no connected server offers any prompt");
  }
});

Deno.test("k=v arguments, quoted values kept exactly", () => {
  assert.deepEqual(parseKeyValues("name=\"Ada Lovelace\" style=formal note='a b' empty="), {
    name: "Ada Lovelace",
    style: "formal",
    note: "a b",
    empty: "",
  });
  assert.throws(() => parseKeyValues("stray words"), /Cannot read the arguments: stray words/);
});
