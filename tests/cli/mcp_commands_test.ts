/**
 * `patchbay mcp add|add-json|list|get|remove|enable|disable`, run as people run them
 * (`deno task start`, under the launcher's flags, in a sandbox HOME): the file edited in
 * place, validated first, its formatting and mode kept, secrets only in an owner-only .env.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { everythingEntry, NODE } from "../support/deps.ts";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";

const mode = async (path: string) => (await Deno.stat(path)).mode! & 0o777;

Deno.test("mcp add creates servers_config.json, moves the secret to a 0600 .env, and the server connects", async () => {
  await using box = await sandbox();
  const add = await runPatchbay(box, [
    "mcp",
    "add",
    "everything",
    "-e",
    "API_KEY=fixture-secret-1",
    "--move-secrets",
    "--",
    NODE,
    everythingEntry(),
    "stdio",
  ]);
  assert.equal(add.code, 0, add.stderr);
  assert.match(add.stdout, /Added stdio server 'everything' to servers_config\.json \(created/);
  assert.match(add.stdout, /Moved 1 secret to \.env \(readable by you only\): API_KEY/);
  const config = JSON.parse(await Deno.readTextFile(join(box.cwd, "servers_config.json")));
  assert.equal(config.LLM.provider, "openai");
  assert.deepEqual(config.mcpServers.everything, {
    transport_type: "stdio",
    command: NODE,
    args: [everythingEntry(), "stdio"],
    env: { API_KEY: "${API_KEY}" },
  });
  const envFile = join(box.cwd, ".env");
  assert.equal(await Deno.readTextFile(envFile), "API_KEY='fixture-secret-1'\n");
  assert.equal(await mode(envFile), 0o600);

  const check = await runPatchbay(box, ["config", "check"]);
  assert.equal(check.code, 0, check.stderr);

  const listed = await runPatchbay(box, ["mcp", "list", "--check", "--json"]);
  assert.equal(listed.code, 0, listed.stderr);
  const json = JSON.parse(listed.stdout);
  assert.deepEqual(json.servers[0].env, ["API_KEY"], "env names only, never values");
  assert.equal(json.states[0].state, "connected");
  assert.ok(!listed.stdout.includes("fixture-secret-1"));
});

const FORMATTED = `{
    "$schema": "./servers_config.schema.json",
    "LLM": {"provider": "openai", "model": "gpt-4o-mini"},
    "mcpServers": {
        "zeta": { "command": "${NODE}", "args": ["--version"] },
        "alpha": {
            "url": "http://127.0.0.1:1/mcp"
        }
    },
    "AgentConfig": {"max_steps": 5}
}
`;

Deno.test("edits keep the file's formatting, key order and mode; add then remove restores it", async () => {
  await using box = await sandbox();
  const file = await writeConfig(box, FORMATTED);
  await Deno.chmod(file, 0o640);
  const add = await runPatchbay(box, ["mcp", "add", "web", "http://127.0.0.1:2/mcp"]);
  assert.equal(add.code, 0, add.stderr);
  const added = await Deno.readTextFile(file);
  assert.equal(
    added,
    FORMATTED.replace(
      '            "url": "http://127.0.0.1:1/mcp"\n        }\n',
      '            "url": "http://127.0.0.1:1/mcp"\n        },\n        "web": {\n' +
        '            "transport_type": "streamable_http",\n' +
        '            "url": "http://127.0.0.1:2/mcp"\n        }\n',
    ),
  );
  assert.equal(await mode(file), 0o640);

  const disable = await runPatchbay(box, ["mcp", "disable", "zeta"]);
  assert.equal(disable.code, 0, disable.stderr);
  assert.match(await Deno.readTextFile(file), /"zeta": \{ "command": .*, "disabled": true \},/);
  const list = await runPatchbay(box, ["mcp", "list"]);
  assert.match(list.stdout, /zeta +project +stdio .*\(disabled\)/);
  const enable = await runPatchbay(box, ["mcp", "enable", "zeta"]);
  assert.equal(enable.code, 0, enable.stderr);
  const remove = await runPatchbay(box, ["mcp", "remove", "web"]);
  assert.equal(remove.code, 0, remove.stderr);
  assert.equal(
    await Deno.readTextFile(file),
    FORMATTED.replace('"args": ["--version"] }', '"args": ["--version"], "disabled": false }'),
  );
  assert.equal(await mode(file), 0o640);
  assert.deepEqual(
    [...Deno.readDirSync(box.cwd)].map((e) => e.name).sort(),
    ["servers_config.json"],
    "no temporary file is left behind",
  );
});

Deno.test("an edit that would make the file invalid is refused with the located error, nothing written", async () => {
  await using box = await sandbox();
  const file = await writeConfig(box, FORMATTED);
  const run = await runPatchbay(box, [
    "mcp",
    "add-json",
    "both",
    '{"command": "node", "url": "http://127.0.0.1:1/mcp"}',
  ]);
  assert.equal(run.code, 1);
  assert.match(run.stderr, /Invalid configuration: Missing required field: mcpServers\.both\./);
  assert.match(run.stderr, /line \d+, column \d+/);
  assert.match(run.stderr, /both command and url/);
  assert.match(run.stderr, /nothing was written: the lines shown are the file as the edit/);
  assert.equal(await Deno.readTextFile(file), FORMATTED);

  // The refused text is shown located, but a secret kept inline in it is not.
  await Deno.chmod(file, 0o600);
  const inline = await runPatchbay(box, [
    "mcp",
    "add-json",
    "leaky",
    '{"command": "node", "args": ["--api-key", "plain-inline-99", 5]}',
    "--keep-secrets-inline",
  ]);
  assert.equal(inline.code, 1);
  assert.match(inline.stderr, /mcpServers\.leaky\.args\[2\]/);
  assert.match(inline.stderr, /"--api-key", "\[REDACTED\]", 5/);
  assert.ok(!inline.stderr.includes("plain-inline-99"));
  assert.equal(await Deno.readTextFile(file), FORMATTED);

  const dialect = await runPatchbay(box, [
    "mcp",
    "add-json",
    "gem",
    '{"httpUrl": "http://127.0.0.1:1/mcp", "timeout": 30000}',
  ]);
  assert.equal(dialect.code, 1);
  assert.match(dialect.stderr, /gemini-cli's, in milliseconds/);
  assert.equal(await Deno.readTextFile(file), FORMATTED);

  const pasted = await runPatchbay(box, [
    "mcp",
    "add-json",
    "pasted",
    '{"type": "http", "url": "http://127.0.0.1:3/mcp", "enabled": false}',
  ]);
  assert.equal(pasted.code, 0, pasted.stderr);
  const get = await runPatchbay(box, ["mcp", "get", "pasted", "--json"]);
  const [server] = JSON.parse(get.stdout).servers;
  assert.equal(server.transport, "streamable_http");
  assert.equal(server.disabled, true);
});

Deno.test("secrets with nobody at a terminal: refused without a flag; inline only in an owner-only file", async () => {
  await using box = await sandbox();
  const header = ["-H", "Authorization: Bearer fixture-secret-2"];
  const bare = await runPatchbay(box, ["mcp", "add", "api", "http://127.0.0.1:1/mcp", ...header]);
  assert.equal(bare.code, 2);
  assert.match(bare.stderr, /api: headers\.Authorization -> \$\{API_TOKEN\}/);
  assert.match(bare.stderr, /--move-secrets .* --keep-secrets-inline/);
  assert.ok(!bare.stderr.includes("fixture-secret-2"));
  assert.deepEqual([...Deno.readDirSync(box.cwd)], [], "nothing written");

  const inline = [
    "mcp",
    "add",
    "api",
    "http://127.0.0.1:1/mcp",
    ...header,
    "--keep-secrets-inline",
  ];
  const created = await runPatchbay(box, inline);
  assert.equal(created.code, 0, created.stderr);
  const file = join(box.cwd, "servers_config.json");
  assert.equal(await mode(file), 0o600, "a new file holding a secret is owner-only");

  await Deno.chmod(file, 0o644);
  const before = await Deno.readTextFile(file);
  const wide = await runPatchbay(box, [...inline.slice(0, 2), "api2", ...inline.slice(3)]);
  assert.equal(wide.code, 2);
  assert.match(wide.stderr, /readable by others \(mode 644\), so secrets are not written into it/);
  assert.equal(await Deno.readTextFile(file), before);

  const moved = await runPatchbay(box, [
    "mcp",
    "add",
    "api2",
    "http://127.0.0.1:1/mcp",
    ...header,
    "--move-secrets",
  ]);
  assert.equal(moved.code, 0, moved.stderr);
  const entry = JSON.parse(await Deno.readTextFile(file)).mcpServers.api2;
  assert.deepEqual(entry.headers, { Authorization: "Bearer ${API2_TOKEN}" });
  assert.equal(await Deno.readTextFile(join(box.cwd, ".env")), "API2_TOKEN='fixture-secret-2'\n");
  assert.equal(await mode(join(box.cwd, ".env")), 0o600);
});

Deno.test("a file that is already broken is not edited: its own problems come first", async () => {
  await using box = await sandbox();
  const broken = '{"LLM": {"provider": "openai", "model": "m"}, "mcpServers": []}\n';
  const file = await writeConfig(box, broken);
  const run = await runPatchbay(box, ["mcp", "add", "x", "--", NODE, "-v"]);
  assert.equal(run.code, 1);
  assert.match(run.stderr, /mcpServers: expected an object mapping server names to entries/);
  assert.equal(await Deno.readTextFile(file), broken);
  const syntax = '{"LLM": {"provider": "openai", "model": "m"},\n "mcpServers": {},}\n';
  await writeConfig(box, syntax);
  const fault = await runPatchbay(box, ["mcp", "add", "x", "--", NODE, "-v"]);
  assert.equal(fault.code, 1);
  assert.match(fault.stderr, /trailing comma before '\}' at line 2, column 18/);
  assert.equal(await Deno.readTextFile(file), syntax);
});

Deno.test("every editing command on a file with a syntax error gives its located error", async () => {
  await using box = await sandbox();
  const syntax = '{"LLM": {"provider": "openai", "model": "m"},\n' +
    ' "mcpServers": {"gh": {"command": "gh-server",}}}\n';
  const file = await writeConfig(box, syntax);
  const other = join(box.cwd, "other.mcp.json");
  await Deno.writeTextFile(other, JSON.stringify({ mcpServers: { x: { command: "x" } } }));
  for (
    const args of [
      ["mcp", "remove", "gh"],
      ["mcp", "disable", "gh"],
      ["mcp", "enable", "gh"],
      ["mcp", "add-json", "gh2", '{"command": "node"}'],
      ["mcp", "import", other],
    ]
  ) {
    const run = await runPatchbay(box, args);
    const what = `${args.join(" ")}: ${run.stdout}${run.stderr}`;
    assert.equal(run.code, 1, what);
    assert.match(
      run.stderr,
      /^error: Invalid configuration: trailing comma before '\}' at line 2, column 46 of servers_config\.json$/m,
      what,
    );
    assert.match(run.stderr, /^ +\| +\^$/m, what);
    assert.ok(!/No server 'gh'/.test(run.stderr), what);
    assert.equal(await Deno.readTextFile(file), syntax, what);
  }
});

Deno.test("mcp add-json with VS Code's ${input:…} names the variable and says what to write instead", async () => {
  await using box = await sandbox();
  const file = await writeConfig(box, configWith({}));
  const before = await Deno.readTextFile(file);
  const run = await runPatchbay(box, [
    "mcp",
    "add-json",
    "gh",
    '{"command": "npx", "env": {"API_KEY": "${input:api-key}"}}',
  ]);
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /env\.API_KEY: \$\{input:api-key\} is another client's variable/);
  assert.match(
    run.stderr,
    /set API_KEY to the value in \.env and write \$\{API_KEY\} in place of \$\{input:api-key\}/,
  );
  assert.ok(!run.stderr.includes("REDACTED"), run.stderr);
  assert.equal(await Deno.readTextFile(file), before);
});

Deno.test("usage mistakes: a name taken, a bad name, -e for a URL, an unknown server", async () => {
  await using box = await sandbox();
  await writeConfig(box, FORMATTED);
  const taken = await runPatchbay(box, ["mcp", "add", "zeta", "node"]);
  assert.equal(taken.code, 1);
  assert.match(taken.stderr, /Server 'zeta' already exists .*\n.*\n.*mcp remove zeta/);
  const dotted = await runPatchbay(box, ["mcp", "add", "a.b", "node"]);
  assert.equal(dotted.code, 2);
  assert.match(dotted.stderr, /'a\.b' cannot name a server/);
  const env = await runPatchbay(box, ["mcp", "add", "u", "-e", "A=1", "http://127.0.0.1:1/mcp"]);
  assert.equal(env.code, 2);
  assert.match(env.stderr, /environment variables \(-e\) only apply to a stdio server/);
  const url = await runPatchbay(box, ["mcp", "add", "u", "-t", "stdio", "https://h.example/mcp"]);
  assert.equal(url.code, 2);
  assert.match(url.stderr, /'https:\/\/h\.example\/mcp' is a URL, and a stdio server is started/);
  const twice = await runPatchbay(box, [
    "mcp",
    "add",
    "u",
    "https://h.example/mcp",
    "-H",
    "X-Trace: a",
    "-H",
    "x-trace: b",
  ]);
  assert.equal(twice.code, 2);
  assert.match(twice.stderr, /-H gives x-trace twice; only one value can be kept/);
  const envTwice = await runPatchbay(box, ["mcp", "add", "u", "-e", "A=1", "-e", "A=2", "--", "x"]);
  assert.equal(envTwice.code, 2);
  assert.match(envTwice.stderr, /-e gives A twice/);
  assert.equal(await Deno.readTextFile(join(box.cwd, "servers_config.json")), FORMATTED);
  const missing = await runPatchbay(box, ["mcp", "remove", "alpah"]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /No server 'alpah'[\s\S]*did you mean 'alpha'\?/);
});

Deno.test("patchbay's own flags after the server's command are refused, not taken; -e values are not echoed", async () => {
  await using box = await sandbox();
  await writeConfig(box, FORMATTED);
  const before = await Deno.readTextFile(join(box.cwd, "servers_config.json"));
  // Without --, -y would be patchbay's --yes and -c its --config: the server would lose them.
  for (const flag of ["-y", "-c"]) {
    const run = await runPatchbay(box, ["mcp", "add", "fs", "npx", flag, "pkg"]);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, new RegExp(`'${flag}' after 'npx' is taken as patchbay's own option`));
    assert.match(run.stderr, /patchbay mcp add fs -- npx/);
  }
  const valued = await runPatchbay(box, ["mcp", "add", "-c", "a.json", "fs", "npx", "-y", "pkg"]);
  assert.equal(valued.code, 2, valued.stderr);
  assert.match(valued.stderr, /'-y' after 'npx'/);
  assert.equal(await Deno.readTextFile(join(box.cwd, "servers_config.json")), before);
  const after = await runPatchbay(box, ["mcp", "add", "fs", "--", "npx", "-y", "pkg", "-c", "x"]);
  assert.equal(after.code, 0, after.stderr);
  const config = JSON.parse(await Deno.readTextFile(join(box.cwd, "servers_config.json")));
  assert.deepEqual(config.mcpServers.fs.args, ["-y", "pkg", "-c", "x"]);

  const bare = await runPatchbay(box, ["mcp", "add", "t", "-e", "unnamed-secret-1", "--", "x"]);
  assert.equal(bare.code, 2);
  assert.match(bare.stderr, /-e takes KEY=VALUE; the value given has no '='/);
  assert.ok(!bare.stderr.includes("unnamed-secret-1"));
});

Deno.test("--scope user writes ~/.config/patchbay, read where the folder has no servers_config.json", async () => {
  await using box = await sandbox();
  const add = await runPatchbay(box, ["mcp", "add", "--scope", "user", "mine", "--", NODE, "-v"]);
  assert.equal(add.code, 0, add.stderr);
  const file = join(box.home, ".config", "patchbay", "servers_config.json");
  assert.equal(JSON.parse(await Deno.readTextFile(file)).mcpServers.mine.command, NODE);
  const list = await runPatchbay(box, ["mcp", "list", "--json"]);
  assert.equal(list.code, 0, list.stderr);
  const json = JSON.parse(list.stdout);
  assert.equal(json.file, file);
  assert.deepEqual(json.servers.map((s: { name: string }) => s.name), ["mine"]);
  const disable = await runPatchbay(box, ["mcp", "disable", "mine"]);
  assert.equal(disable.code, 0, disable.stderr);
  assert.match(disable.stdout, /is disabled in .*\.config\/patchbay\/servers_config\.json/);
  // A project file made now is read together with the user's (docs/configuration.md, Scopes).
  const project = await runPatchbay(box, ["mcp", "add", "here", "--", NODE, "-v"]);
  assert.equal(project.code, 0, project.stderr);
  assert.ok(!project.stdout.includes("Note:"), "nothing is hidden: " + project.stdout);
  const named = await runPatchbay(box, ["mcp", "add", "-c", "other.json", "x", "--", NODE]);
  assert.equal(named.code, 0, named.stderr);
  assert.ok(!named.stdout.includes("Note:"), "a --config file hides nothing: " + named.stdout);
  assert.ok(!add.stdout.includes("Note:"), "no project file yet when the user's was edited");
  // The user's file edited in a folder that has its own: both are read here.
  const other = await runPatchbay(box, ["mcp", "add", "-s", "user", "more", "--", NODE, "-v"]);
  assert.equal(other.code, 0, other.stderr);
  const both = await runPatchbay(box, ["mcp", "list", "--json"]);
  assert.equal(both.code, 0, both.stderr);
  const names = JSON.parse(both.stdout).servers.map((s: { name: string }) => s.name);
  assert.deepEqual(names.toSorted(), ["here", "mine", "more"]);
});

Deno.test("a disabled server (either client's way) is shown as disabled, never as a failure", async () => {
  await using box = await sandbox();
  await writeConfig(box, {
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: {
      on: { command: NODE, args: [everythingEntry(), "stdio"] },
      off: { command: "patchbay-never-started", enabled: false },
      parked: { command: "patchbay-never-started", disabled: true },
    },
  });
  const tools = await runPatchbay(box, ["tools", "--json"]);
  assert.equal(tools.code, 0, tools.stderr);
  const states = JSON.parse(tools.stdout).servers.map((s: { name: string; state: string }) =>
    `${s.name} ${s.state}`
  );
  assert.deepEqual(states, ["on connected", "off disabled", "parked disabled"]);
  const check = await runPatchbay(box, ["mcp", "list", "--check"]);
  assert.equal(check.code, 0, check.stderr);
  assert.match(check.stdout, /1 of 1 server connected/);
  assert.match(check.stdout, /- off +disabled/);
});

Deno.test("with --unrestricted, an edit still gets the writes it needs", async () => {
  await using box = await sandbox();
  const run = await runPatchbay(box, ["--unrestricted", "mcp", "add", "u", "--", NODE, "-v"]);
  assert.equal(run.code, 0, run.stderr);
  assert.ok(JSON.parse(await Deno.readTextFile(join(box.cwd, "servers_config.json"))).mcpServers.u);
});

Deno.test("mcp get --check gives a server that fails its diagnosis, and exit 1", async () => {
  await using box = await sandbox();
  await writeConfig(box, {
    LLM: { provider: "openai", model: "gpt-4o-mini" },
    mcpServers: { gone: { command: "patchbay-no-such-server-command" } },
  });
  const run = await runPatchbay(box, ["mcp", "get", "gone", "--check"]);
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stdout, /^gone {2}\(servers_config\.json\)/);
  assert.match(run.stdout, /Failed to connect to server 'gone': Session terminated/);
  assert.match(run.stdout, /remedy:/);
});
