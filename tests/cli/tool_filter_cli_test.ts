/**
 * `include_tools` and `exclude_tools` through the real entry point (`deno task start`), with
 * server-everything and the scripted model: what `tools`, `call` and a `run` turn offer,
 * and what a call of an excluded tool by name says.
 */

import assert from "node:assert/strict";
import { globMatches, withholding } from "../../lib/connections/tool_filter.ts";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { everythingEntry, NODE } from "../support/deps.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import type { ScriptedLlm } from "../support/scripted_llm.ts";

function filteredConfig(llm: ScriptedLlm, filter: Record<string, string[]>) {
  return {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: { everything: { command: NODE, args: [everythingEntry(), "stdio"], ...filter } },
  };
}

Deno.test("tool filter: globs match whole names, exclusion wins over inclusion", () => {
  assert.ok(globMatches("get-*", "get-sum"));
  assert.ok(!globMatches("get-*", "forget-sum"));
  assert.ok(globMatches("ec?o", "echo"));
  assert.ok(globMatches("a.b", "a.b") && !globMatches("a.b", "axb"));
  const selection = { includeTools: ["*"], excludeTools: ["get-env"] };
  assert.deepEqual(withholding(selection, "get-env"), {
    field: "exclude_tools",
    patterns: ["get-env"],
  });
  assert.equal(withholding(selection, "echo"), undefined);
  assert.equal(withholding({ includeTools: ["echo"] }, "get-sum")?.field, "include_tools");
});

Deno.test("exclude_tools: tools, call and a model turn never offer the tool, and say why", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm({
    replies: [
      { toolCalls: [{ name: "everything__get-env", arguments: {} }] },
      { text: "It is not available." },
    ],
  });
  await writeConfig(
    box,
    filteredConfig(llm, { exclude_tools: ["get-*", "gzip-file-as-resource"] }),
  );

  const listed = await runPatchbay(box, ["tools", "--json"]);
  assert.equal(listed.code, 0, listed.stderr);
  const { tools, withheld } = JSON.parse(listed.stdout);
  const names = tools.map((t: { tool: string }) => t.tool);
  assert.ok(names.includes("echo"), names.join(", "));
  assert.ok(!names.some((n: string) => n.startsWith("get-") || n === "gzip-file-as-resource"));
  const env = withheld.find((w: { tool: string }) => w.tool === "get-env");
  assert.equal(env.reason, 'excluded by mcpServers.everything.exclude_tools ("get-*")');

  const text = await runPatchbay(box, ["tools"]);
  assert.match(text.stderr, /everything: \d+ tools not offered by its include_tools/);

  const called = await runPatchbay(box, ["call", "everything.get-sum", '{"a": 1, "b": 2}']);
  assert.equal(called.code, 1);
  assert.match(called.stderr, /Tool execution failed: everything\/get-sum/);
  assert.match(called.stderr, /excluded by mcpServers\.everything\.exclude_tools \("get-\*"\)/);
  const bare = await runPatchbay(box, ["call", "get-sum", '{"a": 1, "b": 2}']);
  assert.match(bare.stderr, /excluded by mcpServers\.everything\.exclude_tools/);

  const turn = await runPatchbay(box, ["run", "--json", "--yes", "show the environment"]);
  assert.equal(turn.code, 0, turn.stderr);
  const offered = llm.requests[0].body.tools.map((t: { function: { name: string } }) =>
    t.function.name
  );
  assert.ok(offered.includes("everything__echo"));
  assert.ok(!offered.includes("everything__get-env"), offered.join(", "));
  const result = turn.stdout.trim().split("\n").map((l) => JSON.parse(l))
    .find((e) => e.type === "tool_result");
  assert.equal(result.status, "error");
  const told = llm.requests[1].body.messages.at(-1).content;
  assert.match(told, /not available: the user's configuration keeps it from being offered/);
});

Deno.test("include_tools: only the named tools are offered", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm({ replies: [] });
  await writeConfig(box, filteredConfig(llm, { include_tools: ["echo", "get-s*"] }));
  const listed = await runPatchbay(box, ["tools", "--json"]);
  assert.equal(listed.code, 0, listed.stderr);
  const names = JSON.parse(listed.stdout).tools.map((t: { tool: string }) => t.tool).sort();
  assert.deepEqual(names, ["echo", "get-structured-content", "get-sum"]);
  const called = await runPatchbay(box, ["call", "everything.get-env"]);
  assert.equal(called.code, 1);
  assert.match(called.stderr, /not in mcpServers\.everything\.include_tools \("echo", "get-s\*"\)/);
});

Deno.test("a filter pattern that matches no tool is named, with the tool it was probably meant for", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm();
  // Misspelt: underscores for the dashes, the model's server__tool name, another case.
  await writeConfig(
    box,
    filteredConfig(llm, {
      exclude_tools: ["get_env", "everything__get-sum", "nothing-*"],
      include_tools: ["*", "ECHO"],
    }),
  );
  const text = await runPatchbay(box, ["tools"]);
  assert.equal(text.code, 0, text.stderr);
  // Still offered: the exclusions matched nothing, and the listing says so.
  assert.match(text.stdout, /get-env/);
  assert.match(
    text.stderr,
    /warning: everything: exclude_tools pattern "get_env" matches none of its tools \(did you mean "get-env"\?\), so it excludes nothing/,
  );
  assert.match(text.stderr, /exclude_tools pattern "everything__get-sum" .*did you mean "get-sum"/);
  assert.match(text.stderr, /exclude_tools pattern "nothing-\*" matches none of its tools, so/);
  assert.match(
    text.stderr,
    /include_tools pattern "ECHO" matches none .*did you mean "echo"\?\)\n/,
  );
  assert.ok(!/pattern "\*"/.test(text.stderr), text.stderr);

  const json = await runPatchbay(box, ["tools", "--json"]);
  const { unmatched_patterns } = JSON.parse(json.stdout);
  assert.deepEqual(unmatched_patterns[0], {
    server: "everything",
    field: "include_tools",
    pattern: "ECHO",
    meant: "echo",
  });
  assert.equal(unmatched_patterns.length, 4);
});
