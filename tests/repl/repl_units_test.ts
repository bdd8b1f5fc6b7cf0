import assert from "node:assert/strict";
import { join } from "node:path";
import { composePrompt } from "../../commands/run.ts";
import { fieldChoices, parseFieldAnswer } from "../../lib/ui/elicitation.ts";
import { JsonEventsUi } from "../../lib/ui/json_ui.ts";
import { LineEditor } from "../../lib/terminal/line_editor.ts";
import { resourceServer, templateMatches } from "../../lib/session/resolve.ts";
import { Redactor } from "../../lib/redact/redact.ts";
import { tempDir } from "../support/temp_dir.ts";

Deno.test("elicitation answers are parsed and checked against the field's schema", () => {
  const ok = (schema: Record<string, unknown>, input: string, required = false) =>
    parseFieldAnswer(schema, input, required);
  assert.deepEqual(ok({ type: "string" }, "Ada Lovelace", true), {
    ok: true,
    value: "Ada Lovelace",
  });
  assert.deepEqual(ok({ type: "string" }, "", true), {
    ok: false,
    problem: "this field is required",
  });
  assert.deepEqual(ok({ type: "string" }, ""), { ok: true, value: undefined });
  assert.deepEqual(ok({ type: "string", default: "x" }, ""), { ok: true, value: "x" });
  assert.deepEqual(ok({ type: "boolean" }, "Yes"), { ok: true, value: true });
  assert.deepEqual(ok({ type: "boolean" }, "maybe"), { ok: false, problem: "answer yes or no" });
  assert.deepEqual(ok({ type: "integer", minimum: 1, maximum: 100 }, "101"), {
    ok: false,
    problem: "at most 100",
  });
  assert.deepEqual(ok({ type: "integer" }, "2.5"), { ok: false, problem: "enter a whole number" });
  assert.deepEqual(ok({ type: "number" }, "3.14"), { ok: true, value: 3.14 });
  assert.deepEqual(ok({ type: "string", format: "email" }, "a@b"), {
    ok: false,
    problem: "enter an email address",
  });
  assert.deepEqual(ok({ type: "string", format: "date" }, "1815-12-10"), {
    ok: true,
    value: "1815-12-10",
  });
  assert.deepEqual(ok({ type: "string", format: "uri" }, "example.org"), {
    ok: false,
    problem: "enter a full URL",
  });
});

Deno.test("enum fields: by number, value or label; multi-select with commas", () => {
  const single = {
    type: "string",
    oneOf: [{ const: "hero-1", title: "Superman" }, { const: "hero-2", title: "Batman" }],
  };
  assert.deepEqual(fieldChoices(single), [["hero-1", "Superman"], ["hero-2", "Batman"]]);
  assert.deepEqual(parseFieldAnswer(single, "2", false), { ok: true, value: "hero-2" });
  assert.deepEqual(parseFieldAnswer(single, "Superman", false), { ok: true, value: "hero-1" });
  assert.deepEqual(parseFieldAnswer(single, "9", false), {
    ok: false,
    problem: "pick a number or a value from the list",
  });
  const legacy = { type: "string", enum: ["pet-1", "pet-2"], enumNames: ["Cats", "Dogs"] };
  assert.deepEqual(parseFieldAnswer(legacy, "Dogs", false), { ok: true, value: "pet-2" });
  const multi = { type: "array", items: { type: "string", enum: ["Guitar", "Piano", "Drums"] } };
  assert.deepEqual(parseFieldAnswer(multi, "1, Drums", false), {
    ok: true,
    value: ["Guitar", "Drums"],
  });
});

Deno.test("resource URIs find their server: listed, then by template, then the only one", () => {
  assert.ok(
    templateMatches("demo://resource/dynamic/text/{id}", "demo://resource/dynamic/text/42"),
  );
  assert.ok(!templateMatches("demo://resource/dynamic/text/{id}", "demo://other/42"));
  assert.ok(!templateMatches("a.b/{x}", "aXb/1"), "template text is literal, not a pattern");
  // A server's template of many variables: answered (a regular expression backtracked >30 s).
  const hostile = `r://${"{p}".repeat(12)}x`;
  assert.ok(!templateMatches(hostile, `r://${"a".repeat(100)}`));
  assert.ok(templateMatches(hostile, `r://${"a".repeat(100)}x`));
  assert.ok(
    !templateMatches(hostile, "r://aaaaaaaaaaax"),
    "each variable takes one character at least",
  );
  assert.ok(templateMatches("a{x}a", "aba") && !templateMatches("a{x}a", "aa"));
  assert.ok(templateMatches("u://{a}/mid/{b}.json", "u://1/mid/2/mid/3.json"));
  assert.ok(!templateMatches("u://{a}/mid/{b}.json", "u://1/mid/.json"));
  const resources = [{ server: "a", uri: "file:///x" }];
  const templates = [{ server: "b", uriTemplate: "note://{id}" }];
  assert.equal(resourceServer("file:///x", resources, templates), "a");
  assert.equal(resourceServer("note://7", resources, templates), "b");
  assert.throws(
    () => resourceServer("zzz://1", resources, templates),
    /Which server has zzz:\/\/1\?/,
  );
  assert.equal(resourceServer("zzz://1", resources, []), "a");
});

Deno.test("run's prompt: arguments, stdin, or both", () => {
  assert.equal(composePrompt(["a", "b"], ""), "a b");
  assert.equal(composePrompt([], "from stdin"), "from stdin");
  assert.equal(composePrompt(["review:"], "diff"), "review:\n\ndiff");
  assert.equal(composePrompt([], ""), "");
});

Deno.test("JSON events are one object per line, redacted, and declines say how to approve", async () => {
  const lines: string[] = [];
  const redactor = new Redactor();
  redactor.addSecret("sk-secret-value-123");
  const ui = new JsonEventsUi({ write: (l) => lines.push(l), autoApprove: false, redactor });
  ui.textDelta("key is sk-secret-value-123");
  const answer = await ui.approveToolCall({
    id: "c1",
    name: "s__t",
    server: "s",
    tool: "t",
    args: {},
    argsPreview: "{}",
    reason: "not-approved",
  });
  assert.equal(answer, "no");
  const parsed = lines.map((l) => JSON.parse(l));
  assert.deepEqual(parsed[0], { type: "text_delta", text: "key is [REDACTED]" });
  assert.equal(parsed[1].type, "notice");
  assert.match(parsed[1].text, /declined s\/t: tool calls need approval; pass --yes/);
});

Deno.test("a history file grown past the history size is cut back to the newest entries, owner-only", async () => {
  await using dir = await tempDir("patchbay-history-");
  const file = join(dir.path, "history");
  const entries = ["first", "second", "third\nwith a second line", "fourth", "fifth"];
  await Deno.writeTextFile(file, entries.map((e) => JSON.stringify(e)).join("\n") + "\n", {
    mode: 0o644,
  });
  const editor = new LineEditor({ historyFile: file, historySize: 3 });
  await editor.loadHistory();
  assert.deepEqual(editor.history, ["fifth", "fourth", "third\nwith a second line"]);
  const kept = (await Deno.readTextFile(file)).trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(kept, ["third\nwith a second line", "fourth", "fifth"]);
  assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
  assert.deepEqual(
    [...Deno.readDirSync(dir.path)].map((e) => e.name),
    ["history"],
    "no temporary file left",
  );
});
