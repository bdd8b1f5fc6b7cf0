/**
 * The user's and the project's configuration read together, through `deno task start` in
 * a fresh HOME (docs/configuration.md, "Scopes"): the project's entry wins a name clash
 * with a notice, `mcp list` shows each server's scope, a problem is located in its own
 * file, and `--config FILE` still means exactly that file.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { configWith, runPatchbay, type Sandbox, sandbox, WITHOUT_PROXIES } from "../support/cli.ts";

async function scoped(box: Sandbox, project: unknown): Promise<string> {
  const userDir = join(box.home, ".config", "patchbay");
  await Deno.mkdir(userDir, { recursive: true });
  const userFile = join(userDir, "servers_config.json");
  await Deno.writeTextFile(
    userFile,
    JSON.stringify(configWith({ mine: { command: "my-mcp" }, shared: { command: "user-cmd" } })),
  );
  await Deno.writeTextFile(
    join(box.cwd, "servers_config.json"),
    typeof project === "string" ? project : JSON.stringify(project, null, 2),
  );
  return userFile;
}

Deno.test("user and project files are read together; --config is that file alone", async () => {
  await using box = await sandbox({ ...WITHOUT_PROXIES, OPENAI_API_KEY: "sk-scopes-test" });
  const userFile = await scoped(box, { mcpServers: { shared: { command: "project-cmd" } } });
  await Deno.writeTextFile(
    join(box.cwd, "only.json"),
    JSON.stringify(configWith({ solo: { command: "s" } })),
  );

  const list = await runPatchbay(box, ["mcp", "list", "--json"]);
  assert.equal(list.code, 0, list.stderr);
  const json = JSON.parse(list.stdout);
  assert.deepEqual(json.files.map((f: { scope: string }) => f.scope), ["user", "project"]);
  const scopes = Object.fromEntries(
    json.servers.map((s: { name: string; scope: string; command: string }) => [
      s.name,
      `${s.scope}:${s.command}`,
    ]),
  );
  assert.deepEqual(scopes, { mine: "user:my-mcp", shared: "project:project-cmd" });
  assert.match(
    list.stderr,
    new RegExp(
      `Server 'shared': the entry of servers_config.json \\(project\\) replaces the one of ${userFile}`,
    ),
  );

  const only = await runPatchbay(box, ["--config", "only.json", "mcp", "list", "--json"]);
  assert.equal(only.code, 0, only.stderr);
  const explicit = JSON.parse(only.stdout);
  assert.deepEqual(explicit.servers.map((s: { name: string }) => s.name), ["solo"]);
  assert.deepEqual(explicit.files, [{ scope: "explicit", path: "only.json" }]);
});

Deno.test("a problem is reported in the file, line and column it is written in", async () => {
  await using box = await sandbox({ ...WITHOUT_PROXIES, OPENAI_API_KEY: "sk-scopes-test" });
  await scoped(box, '{\n  "mcpServers": {\n    "bad": { "command": 42 }\n  }\n}\n');
  const check = await runPatchbay(box, ["config", "check"]);
  assert.notEqual(check.code, 0);
  const text = `${check.stdout}${check.stderr}`;
  assert.match(text, /servers_config\.json/);
  assert.match(text, /line 3, column \d+: .*command/);
});
