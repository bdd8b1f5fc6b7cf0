/**
 * The files `patchbay mcp` edits, as people keep them, through `deno task start`: a
 * read-only servers_config.json is refused, not replaced; a servers_config.json or .env
 * that is a symbolic link (a dotfiles repository) is edited where it points and stays a
 * link. And the help of each command, which starts nothing.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";

const CONFIG = `{"LLM": {"provider": "openai", "model": "gpt-4o-mini"}, "mcpServers": {}}\n`;

Deno.test("a read-only servers_config.json is refused with why and a remedy; nothing written", async () => {
  await using box = await sandbox();
  const file = await writeConfig(box, CONFIG);
  await Deno.chmod(file, 0o444);
  const run = await runPatchbay(box, [
    "mcp",
    "add",
    "api",
    "https://example.com/mcp",
    "-H",
    "Authorization: Bearer read-only-secret-1",
    "--move-secrets",
  ]);
  assert.notEqual(run.code, 0);
  assert.match(run.stderr, /Could not write servers_config\.json/);
  assert.match(run.stderr, /read-only \(mode 444\)/);
  assert.match(run.stderr, /chmod u\+w servers_config\.json/);
  assert.equal(await Deno.readTextFile(file), CONFIG);
  assert.equal((await Deno.stat(file)).mode! & 0o777, 0o444);
  const names = [...Deno.readDirSync(box.cwd)].map((e) => e.name).sort();
  assert.deepEqual(names, ["servers_config.json"], "no .env, no temporary file left");
});

Deno.test("a linked servers_config.json and .env are edited where they point; the links stay", async () => {
  await using box = await sandbox();
  const dotfiles = join(box.home, "dotfiles");
  await Deno.mkdir(dotfiles);
  const realConfig = join(dotfiles, "servers_config.json");
  const realEnv = join(dotfiles, "patchbay.env");
  await Deno.writeTextFile(realConfig, CONFIG);
  await Deno.writeTextFile(realEnv, "OTHER=1\n");
  await Deno.symlink(realConfig, join(box.cwd, "servers_config.json"));
  await Deno.symlink(realEnv, join(box.cwd, ".env"));
  const run = await runPatchbay(box, [
    "mcp",
    "add",
    "api",
    "https://example.com/mcp",
    "-H",
    "Authorization: Bearer linked-secret-1",
    "--move-secrets",
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.ok(Deno.lstatSync(join(box.cwd, "servers_config.json")).isSymlink);
  assert.ok(Deno.lstatSync(join(box.cwd, ".env")).isSymlink);
  const entry = JSON.parse(await Deno.readTextFile(realConfig)).mcpServers.api;
  assert.deepEqual(entry.headers, { Authorization: "Bearer ${API_TOKEN}" });
  assert.equal(await Deno.readTextFile(realEnv), "OTHER=1\nAPI_TOKEN='linked-secret-1'\n");
  assert.equal((await Deno.stat(realEnv)).mode! & 0o777, 0o600);
});

Deno.test("--help of every mcp command, and of patchbay itself, prints its usage", async () => {
  await using box = await sandbox();
  for (
    const args of [
      ["--help"],
      ["tools", "--help"],
      ["mcp"],
      ["mcp", "--help"],
      ...["add", "add-json", "list", "get", "remove", "enable", "disable", "import"]
        .map((sub) => ["mcp", sub, "--help"]),
      ["mcp", "get", "-h"],
    ]
  ) {
    const run = await runPatchbay(box, args);
    const out = run.stdout + run.stderr;
    assert.match(out, /^Usage: patchbay/m, `${args.join(" ")}: ${out}`);
    assert.ok(!out.includes("NotCapable"), `${args.join(" ")}: ${out}`);
  }
});

Deno.test("mcp list and get print a cloned project's file without its terminal control sequences", async () => {
  await using box = await sandbox();
  const hostile: { LLM: unknown; mcpServers: Record<string, unknown> } = {
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: {
      evil: { command: "echo", args: ["\u001b[2J", "plain\u001b]0;pwned\u0007"] },
    },
  };
  await writeConfig(box, JSON.stringify(hostile));
  const list = await runPatchbay(box, ["mcp", "list"]);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /evil +project +stdio +echo .*plain/);
  const get = await runPatchbay(box, ["mcp", "get", "evil"]);
  assert.equal(get.code, 0, get.stderr);
  assert.match(get.stdout, /^evil/);
  for (const out of [list.stdout, get.stdout]) {
    assert.ok(!out.includes("\u001b]0;") && !out.includes("\u001b[2J") && !out.includes("\u0007"));
  }
  // A command holding them is refused by every command, shown escaped.
  hostile.mcpServers = { evil: { command: "echo\u001b]0;pwned\u0007" } };
  await writeConfig(box, JSON.stringify(hostile));
  const command = await runPatchbay(box, ["mcp", "list"]);
  assert.equal(command.code, 1);
  assert.match(command.stderr, /the command holds a control or invisible character/);
  assert.ok(!command.stderr.includes("\u001b") && !command.stdout.includes("\u001b"));
  hostile.mcpServers = { evil: { command: "echo" } };
  // A name holding them breaks the one rule for names: the file is refused, the name shown
  // escaped in the refusal.
  hostile.mcpServers = { ["e\u001b[31mvil"]: hostile.mcpServers.evil };
  await writeConfig(box, JSON.stringify(hostile));
  const refused = await runPatchbay(box, ["mcp", "list"]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /mcpServers\["e\\u001b\[31mvil"\]: a server name holds letters/);
  assert.ok(!refused.stderr.includes("\u001b") && !refused.stdout.includes("\u001b"));
});

Deno.test("a Windows-edited file (BOM, CRLF) keeps its BOM and CRLF line breaks", async () => {
  await using box = await sandbox();
  const text = '\ufeff{"LLM": {"provider": "openai", "model": "gpt-4o-mini"},\r\n' +
    ' "mcpServers": {\r\n  "b": {"command": "x"}\r\n }\r\n}\r\n';
  const file = await writeConfig(box, text);
  const add = await runPatchbay(box, ["mcp", "add", "c", "--", "y"]);
  assert.equal(add.code, 0, add.stderr);
  const after = await Deno.readTextFile(file);
  assert.ok(after.startsWith("\ufeff"));
  assert.ok(!/[^\r]\n/.test(after), JSON.stringify(after));
  const removed = await runPatchbay(box, ["mcp", "remove", "c"]);
  assert.equal(removed.code, 0, removed.stderr);
  assert.equal(await Deno.readTextFile(file), text);
});
