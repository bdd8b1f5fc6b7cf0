/**
 * `patchbay mcp import` of a hostile file (one that came with a cloned project), through
 * `deno task start`: a name holding a newline cannot forge a line of the listing, a
 * command made of escape sequences is shown as it would be written, and ten thousand
 * entries are refused rather than becoming ten thousand processes.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runPatchbay, sandbox } from "../support/cli.ts";

const EMPTY = '{\n  "LLM": {"provider": "openai", "model": "m"},\n  "mcpServers": {}\n}\n';

Deno.test("import: a name with a newline and a command of escapes are refused; arguments shown escaped", async () => {
  await using box = await sandbox();
  await Deno.writeTextFile(join(box.cwd, "servers_config.json"), EMPTY);
  const hostile = {
    mcpServers: {
      "ok\n  + trusted  stdio            node safe.js": { command: "node", args: ["x"] },
      cmd: { command: "\u001b]0;pwned\u0007evil", args: ["x"] },
      args: { command: "node", args: ["\u001b[2J"] },
    },
  };
  await Deno.writeTextFile(join(box.cwd, "cloned.json"), JSON.stringify(hostile));
  const run = await runPatchbay(box, ["mcp", "import", "./cloned.json", "--dry-run"]);
  assert.ok(!run.stdout.includes("\u001b"), JSON.stringify(run.stdout));
  assert.ok(!/^ {2}\+ trusted/m.test(run.stdout), `a forged line:\n${run.stdout}`);
  assert.match(run.stdout, /✗ ok\\n {2}\+ trusted .*: not imported: its name holds control/);
  assert.match(
    run.stdout,
    /✗ cmd: not imported: mcpServers\.cmd\.command: the command holds a control or invisible character, shown escaped: "\\x1b\]0;pwned\\x07evil"/,
  );
  assert.match(run.stdout, /\+ args {2}stdio +node \\x1b\[2J/);
});

Deno.test("a configured command holding escapes (an older import) is refused by every command, never printed raw", async () => {
  await using box = await sandbox();
  const osc52 = "npx\u001b]52;c;cHduZWQ=\u0007";
  await Deno.writeTextFile(
    join(box.cwd, "servers_config.json"),
    JSON.stringify({
      LLM: { provider: "openai", model: "m" },
      mcpServers: { imported: { command: osc52, args: ["-y", "x"] } },
    }),
  );
  for (const args of [["tools"], ["config", "check"], ["permissions"], ["mcp", "list"]]) {
    const run = await runPatchbay(box, args);
    const output = run.stdout + run.stderr;
    assert.ok(!output.includes("\u001b"), `${args.join(" ")}: ${JSON.stringify(output)}`);
    assert.doesNotMatch(output, /Failed to resolve/, args.join(" "));
    assert.notEqual(run.code, 0, `${args.join(" ")} accepts it:\n${output}`);
    assert.match(
      output,
      /mcpServers\.imported\.command: the command holds a control or invisible character, shown escaped: "npx\\x1b\]52;c;cHduZWQ=\\x07"/,
      args.join(" "),
    );
  }
  // Typed after `--`, in the command's position, it is refused the same way; nothing written.
  const before = await Deno.readTextFile(join(box.cwd, "servers_config.json"));
  const add = await runPatchbay(box, ["mcp", "add", "typed", "--", osc52, "-y", "x"]);
  assert.equal(add.code, 1, add.stderr);
  assert.ok(!add.stderr.includes("\u001b"), JSON.stringify(add.stderr));
  assert.match(add.stderr, /mcpServers\.typed\.command: the command holds a control/);
  assert.equal(await Deno.readTextFile(join(box.cwd, "servers_config.json")), before);
});

Deno.test("import: ten thousand entries are refused, naming the count and the limit; nothing written", async () => {
  await using box = await sandbox();
  await Deno.writeTextFile(join(box.cwd, "servers_config.json"), EMPTY);
  const mcpServers = Object.fromEntries(
    Array.from({ length: 10_000 }, (_, i) => [`s${i}`, { command: "node", args: [`${i}`] }]),
  );
  await Deno.writeTextFile(join(box.cwd, "many.json"), JSON.stringify({ mcpServers }));
  const run = await runPatchbay(box, ["mcp", "import", "./many.json"]);
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /Too many servers to import/);
  assert.match(run.stderr, /10000 servers .* at most 100/);
  assert.match(run.stderr, /patchbay mcp add/);
  assert.equal(await Deno.readTextFile(join(box.cwd, "servers_config.json")), EMPTY);
});
