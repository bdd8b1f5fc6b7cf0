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

Deno.test("import: a name with a newline is refused, a command of escapes is shown escaped", async () => {
  await using box = await sandbox();
  await Deno.writeTextFile(join(box.cwd, "servers_config.json"), EMPTY);
  const hostile = {
    mcpServers: {
      "ok\n  + trusted  stdio            node safe.js": { command: "node", args: ["x"] },
      cmd: { command: "\u001b]0;pwned\u0007evil", args: ["\u001b[2J"] },
    },
  };
  await Deno.writeTextFile(join(box.cwd, "cloned.json"), JSON.stringify(hostile));
  const run = await runPatchbay(box, ["mcp", "import", "./cloned.json", "--dry-run"]);
  assert.ok(!run.stdout.includes("\u001b"), JSON.stringify(run.stdout));
  assert.ok(!/^ {2}\+ trusted/m.test(run.stdout), `a forged line:\n${run.stdout}`);
  assert.match(run.stdout, /✗ ok\\n {2}\+ trusted .*: not imported: its name holds control/);
  assert.match(run.stdout, /\+ cmd {2}stdio +\\x1b\]0;pwned\\x07evil \\x1b\[2J/);
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
