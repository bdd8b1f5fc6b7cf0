/**
 * One rule for server names everywhere (`mcp add`, `mcp add-json`, `mcp import`, `config
 * check`): what `mcp add` refuses, a cloned project's file cannot bring in either. Import
 * renames another client's dots and spaces with a note and refuses paths, shell characters,
 * over-long names and look-alike letters; it never writes into a folder the next start
 * would refuse, and masks a token wherever it sits in its messages. Through
 * `deno task start`, with hostile fixtures written here.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";

const TOKEN = "ghp_" + "hostileFixtureToken0123456789abcdef";
const LONG = "a".repeat(300);
const CYRILLIC = "\u0430pi"; // "аpi": the first letter is Cyrillic

Deno.test("import from a cloned file: names mcp add refuses are refused or renamed, with why", async () => {
  await using box = await sandbox();
  const config = await writeConfig(box, configWith());
  const hostile = {
    mcpServers: {
      "github.com": { command: "gh-server" },
      "../../etc/x": { command: "x" },
      "a;touch pwned": { command: "x" },
      [LONG]: { command: "x" },
      [CYRILLIC]: { command: "x" },
      tok: { type: TOKEN },
    },
  };
  await Deno.writeTextFile(join(box.cwd, ".mcp.json"), JSON.stringify(hostile));
  const run = await runPatchbay(box, ["mcp", "import", "claude-code"]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(
    run.stdout,
    /\+ github-com +stdio +gh-server\n +renamed: 'github\.com' is 'github-com' here/,
  );
  assert.match(
    run.stdout,
    /✗ \.\.\/\.\.\/etc\/x: not imported: its name cannot be a server's: .*'\.' is not one/,
  );
  assert.match(run.stdout, /✗ a;touch pwned: not imported: .*';' is not one of them/);
  assert.match(
    run.stdout,
    /not imported: its name cannot be a server's: a server name is at most 64 characters; this one has 300/,
  );
  assert.match(
    run.stdout,
    /not imported: .*U\+0430 \(a letter of another script, which can pass for a Latin one\)/,
  );
  // The token in a skip reason is masked like every secret.
  assert.match(run.stdout, /✗ tok: not imported: its type "\[REDACTED\]" is not a transport/);
  assert.ok(!run.stdout.includes(TOKEN) && !run.stderr.includes(TOKEN), run.stdout);
  assert.match(run.stdout, /Added 1 server \(5 not imported\) to servers_config\.json/);
  const names = Object.keys(JSON.parse(await Deno.readTextFile(config)).mcpServers);
  assert.deepEqual(names, ["github-com"]);
  await assert.rejects(Deno.stat(join(box.cwd, "pwned")), Deno.errors.NotFound);
  const check = await runPatchbay(box, ["config", "check"]);
  assert.equal(check.code, 0, check.stderr);
});

Deno.test("mcp add, add-json and config check apply the same rule", async () => {
  await using box = await sandbox();
  const config = await writeConfig(box, configWith());
  for (const name of [LONG, CYRILLIC, "a.b"]) {
    for (
      const args of [["mcp", "add", name, "--", "x"], ["mcp", "add-json", name, '{"command": "x"}']]
    ) {
      const refused = await runPatchbay(box, args);
      assert.equal(refused.code, 2, `${args.join(" ")}: ${refused.stderr}`);
      assert.match(refused.stderr, /cannot name a server: a server name /);
      assert.match(
        refused.stderr,
        /remedy: use letters, digits, - and _ only, at most 64 characters/,
      );
    }
  }
  const dotted = await runPatchbay(box, ["mcp", "add", "a.b", "--", "x"]);
  assert.match(dotted.stderr, /e\.g\. 'a-b'/);
  // The same names written into the file by hand (or by another program) are refused too.
  await writeConfig(box, configWith({ "a.b": { command: "x" }, [CYRILLIC]: { command: "y" } }));
  const check = await runPatchbay(box, ["config", "check"]);
  assert.equal(check.code, 1);
  assert.match(
    check.stderr,
    /mcpServers\["a\.b"\]: a server name holds letters, digits, - and _ only; '\.' is not one of them — rename it "a-b"/,
  );
  assert.match(check.stderr, /U\+0430 \(a letter of another script/);
  assert.ok(config);
});

Deno.test("an edit into a folder every user may write is refused before anything is written", async () => {
  await using box = await sandbox();
  await Deno.writeTextFile(
    join(box.cwd, ".mcp.json"),
    JSON.stringify({ mcpServers: { fx: { command: "x" } } }),
  );
  const open = join(box.cwd, "shared");
  await Deno.mkdir(open);
  await Deno.chmod(open, 0o777);
  const target = join(open, "servers_config.json");
  const imported = await runPatchbay(box, ["mcp", "import", "claude-code", "--config", target]);
  assert.equal(imported.code, 1, imported.stdout);
  assert.match(
    imported.stderr,
    /Refusing to use the configuration file .*shared\/servers_config\.json: other users may write it/,
  );
  assert.match(
    imported.stderr,
    /the folder holding it, .*shared, is writable by every user \(mode 0777\)/,
  );
  assert.match(imported.stderr, /remedy: run `chmod go-w .*shared`/);
  assert.deepEqual([...Deno.readDirSync(open)], [], "nothing written there");
  const added = await runPatchbay(box, ["mcp", "add", "fx", "--config", target, "--", "x"]);
  assert.equal(added.code, 1);
  assert.match(added.stderr, /other users may write it/);
  assert.deepEqual([...Deno.readDirSync(open)], []);
  // Once the folder is the owner's alone, the same edit goes through, and the next start reads it.
  await Deno.chmod(open, 0o755);
  const again = await runPatchbay(box, ["mcp", "add", "fx", "--config", target, "--", "x"]);
  assert.equal(again.code, 0, again.stderr);
  const check = await runPatchbay(box, ["config", "check", "--config", target]);
  assert.equal(check.code, 0, check.stderr);
});
