/**
 * `patchbay mcp import` from each client's file in its documented format (the fixtures in
 * tests/fixtures/clients), found at its standard place under a sandbox HOME or named by
 * path, run through `deno task start`.
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { runPatchbay, type Sandbox, sandbox } from "../support/cli.ts";

const FIXTURES = new URL("../fixtures/clients/", import.meta.url).pathname;

async function place(fixture: string, path: string): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.copyFile(join(FIXTURES, fixture), path);
}

async function servers(box: Sandbox): Promise<Record<string, Record<string, unknown>>> {
  return JSON.parse(await Deno.readTextFile(join(box.cwd, "servers_config.json"))).mcpServers;
}

const mode = async (path: string) => (await Deno.stat(path)).mode! & 0o777;

Deno.test("claude-desktop: from ~/.config/Claude, the token moved to a 0600 .env", async () => {
  await using box = await sandbox();
  await place(
    "claude_desktop_config.json",
    join(box.home, ".config", "Claude", "claude_desktop_config.json"),
  );
  const run = await runPatchbay(box, ["mcp", "import", "claude-desktop", "--move-secrets"]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /From .*\.config\/Claude\/claude_desktop_config\.json \(mcpServers\)/);
  assert.match(run.stdout, /\+ filesystem +stdio +npx -y @modelcontextprotocol\/server-filesystem/);
  assert.match(run.stdout, /Added 2 servers to servers_config\.json \(created/);
  assert.match(run.stdout, /Moved 1 secret to \.env .*: GITHUB_PERSONAL_ACCESS_TOKEN/);
  assert.ok(!run.stdout.includes("ghp_fixture"), "the secret is never printed");
  const imported = await servers(box);
  assert.deepEqual(imported.github, {
    transport_type: "stdio",
    command: "npx",
    args: ["-y", "@modelcontextprotocol/server-github"],
    env: { GITHUB_PERSONAL_ACCESS_TOKEN: "${GITHUB_PERSONAL_ACCESS_TOKEN}" },
  });
  const env = join(box.cwd, ".env");
  assert.equal(
    await Deno.readTextFile(env),
    "GITHUB_PERSONAL_ACCESS_TOKEN='ghp_fixtureTokenNotReal0123456789'\n",
  );
  assert.equal(await mode(env), 0o600);
  const check = await runPatchbay(box, ["config", "check"]);
  assert.equal(check.code, 0, check.stderr);
});

Deno.test("claude-code: .mcp.json and ~/.claude.json; an unset variable and a ws server are reported", async () => {
  await using box = await sandbox();
  await place("claude_code.mcp.json", join(box.cwd, ".mcp.json"));
  // ~/.claude.json keeps each project's own servers under its folder: this one's count.
  const claude = JSON.parse(await Deno.readTextFile(join(FIXTURES, "claude.json")));
  claude.projects[box.cwd] = { mcpServers: { "here-only": { type: "stdio", command: "here" } } };
  await Deno.writeTextFile(join(box.home, ".claude.json"), JSON.stringify(claude, null, 2));
  const run = await runPatchbay(box, ["mcp", "import", "claude-code"]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /✗ api-server: not imported: .*environment variable API_KEY is not set/);
  assert.match(run.stdout, /✗ socket: not imported: its type "ws" is not a transport/);
  assert.match(run.stdout, /\+ sentry +streamable_http +https:\/\/mcp\.sentry\.dev\/mcp/);
  assert.ok(!run.stdout.includes("elsewhere-only"), "another project's servers stay there");
  assert.match(run.stdout, /From .*\.claude\.json \(projects\[".*work"\]\.mcpServers\)/);
  assert.match(run.stdout, /Added 4 servers \(2 not imported\) to servers_config\.json \(created/);
  const imported = await servers(box);
  assert.deepEqual(Object.keys(imported), ["local-tools", "events", "sentry", "here-only"]);
  assert.equal(imported.events.transport_type, "sse");

  // With the variable set, the entry imports, its reference kept.
  await Deno.writeTextFile(join(box.cwd, ".env"), "API_KEY=from-env-file\n");
  const again = await runPatchbay(box, ["mcp", "import", "./.mcp.json"]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /✗ local-tools: not imported: a server 'local-tools' is already in/);
  assert.deepEqual((await servers(box))["api-server"], {
    transport_type: "streamable_http",
    url: "${API_BASE_URL:-https://api.example.com}/mcp",
    headers: { Authorization: "Bearer ${API_KEY}" },
  });
});

Deno.test("cursor: ${env:VAR} becomes ${VAR}; autoApprove left out, with why", async () => {
  await using box = await sandbox();
  await place("cursor_mcp.json", join(box.home, ".cursor", "mcp.json"));
  await Deno.writeTextFile(join(box.cwd, ".env"), "DOCS_API_KEY=docs-key\n");
  await Deno.chmod(join(box.cwd, ".env"), 0o644);
  const run = await runPatchbay(box, ["mcp", "import", "cursor", "--move-secrets"]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /left out: autoApprove: patchbay asks before each tool call/);
  const imported = await servers(box);
  assert.deepEqual(imported.docs.headers, { "X-Api-Key": "${DOCS_API_KEY}" });
  assert.deepEqual(imported.postgres.env, { DATABASE_PASSWORD: "${DATABASE_PASSWORD}" });
  const env = join(box.cwd, ".env");
  assert.equal(
    await Deno.readTextFile(env),
    "DOCS_API_KEY=docs-key\nDATABASE_PASSWORD='fixture-password-not-real'\n",
  );
  assert.equal(await mode(env), 0o600, "a .env that now holds a secret is narrowed");
});

Deno.test("vscode: servers and inputs; ${input:…} is not guessed, ${workspaceFolder} is the folder", async () => {
  await using box = await sandbox();
  await place("vscode_mcp.json", join(box.cwd, ".vscode", "mcp.json"));
  const run = await runPatchbay(box, ["mcp", "import", "vscode"]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(
    run.stdout,
    /✗ github: not imported: it uses \$\{input:github-token\}, a value VS Code asks its user for \("GitHub Personal Access Token"\); set GITHUB_TOKEN to the value in \.env and write \$\{GITHUB_TOKEN\} in place of \$\{input:github-token\}, then add the entry with `patchbay mcp add-json <name> '<entry>'`/,
  );
  assert.match(run.stdout, /converted: \$\{workspaceFolder\} \(VS Code\) is /);
  assert.match(run.stdout, /left out: envFile: patchbay reads one \.env file/);
  const imported = await servers(box);
  assert.deepEqual(Object.keys(imported), ["fetch", "workspace-files"]);
  assert.deepEqual(imported["workspace-files"].args, [
    "-y",
    "@modelcontextprotocol/server-filesystem",
    box.cwd,
  ]);
});

Deno.test("gemini: milliseconds converted, url is SSE, httpUrl streamable HTTP, trust left out", async () => {
  await using box = await sandbox();
  await place("gemini_settings.json", join(box.home, ".gemini", "settings.json"));
  const dry = await runPatchbay(box, ["mcp", "import", "gemini", "--dry-run"]);
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /Would add 3 servers to servers_config\.json; nothing written/);
  assert.deepEqual([...Deno.readDirSync(box.cwd)], [], "--dry-run writes nothing");

  const run = await runPatchbay(box, ["mcp", "import", "gemini", "--move-secrets"]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /converted: timeout 30000 ms \(gemini-cli\) is "timeout": 30 s/);
  assert.match(run.stdout, /converted: url without a type is an SSE address in gemini-cli/);
  assert.match(run.stdout, /converted: includeTools \(gemini-cli\) is "include_tools"/);
  const imported = await servers(box);
  const withFilter = Object.values(imported).find((entry) => entry.include_tools !== undefined);
  assert.deepEqual(withFilter?.include_tools, ["safe_tool"]);
  assert.deepEqual(imported.remote, {
    transport_type: "streamable_http",
    headers: { Authorization: "Bearer ${REMOTE_TOKEN}" },
    url: "https://mcp.example.com/mcp",
    timeout: 30,
  });
  // gemini-cli's trust widens trust: left out of another client's file unless kept.
  assert.match(run.stdout, /left out, widens trust: trusted: true \(its tools would run without/);
  assert.match(run.stdout, /Left out 1 setting that widen trust \(remote: trusted: true\)/);
  assert.equal(imported.events.transport_type, "sse");
  assert.equal(imported["python-tools"].timeout, 600);
  assert.equal(
    await Deno.readTextFile(join(box.cwd, ".env")),
    "REMOTE_TOKEN='gemini-fixture-token'\n",
  );
});

Deno.test("vscode: a .vscode/mcp.json with comments and trailing commas, as VS Code accepts it", async () => {
  await using box = await sandbox();
  const file = join(box.cwd, ".vscode", "mcp.json");
  await Deno.mkdir(dirname(file));
  await Deno.writeTextFile(
    file,
    '{\n  // the team\'s servers\n  "servers": {\n    "fetch": {"type": "stdio", "command": ' +
      '"uvx", "args": ["mcp-server-fetch"]}, /* more later */\n  },\n}\n',
  );
  const run = await runPatchbay(box, ["mcp", "import", "vscode"]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /\+ fetch +stdio +uvx mcp-server-fetch/);
  assert.deepEqual((await servers(box)).fetch.args, ["mcp-server-fetch"]);
});

Deno.test("gemini --keep-trust: trust keeps its tool filter; beside a broken filter it is not converted", async () => {
  await using box = await sandbox();
  const settings = join(box.home, ".gemini", "settings.json");
  await Deno.mkdir(dirname(settings), { recursive: true });
  await Deno.writeTextFile(
    settings,
    JSON.stringify({
      mcpServers: {
        shell: { command: "shell-mcp", trust: true, excludeTools: ["run_command"] },
        broken: { command: "broken-mcp", trust: true, includeTools: "read_file" },
        docs: { command: "docs-mcp", trust: true },
      },
    }),
  );
  const run = await runPatchbay(box, ["mcp", "import", "gemini", "--keep-trust"]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /kept \(--keep-trust\), widens trust: trusted: true/);
  assert.match(run.stdout, /left out: includeTools: not a list of tool names/);
  assert.match(run.stdout, /left out: trust: not converted, since the tool filter is not/);
  const imported = await servers(box);
  assert.deepEqual(imported.shell.exclude_tools, ["run_command"]);
  assert.equal(imported.shell.trusted, true, "the filter came along, so trust may too");
  assert.equal(imported.broken.trusted, undefined, "excluded tools must not run unasked");
  assert.equal(imported.docs.trusted, true);
});

Deno.test("a path is read in its own dialect; an existing file keeps its text; unknown sources are named", async () => {
  await using box = await sandbox();
  const original = '{\n  "LLM": {"provider": "openai", "model": "m"},\n  "mcpServers": {}\n}\n';
  await Deno.writeTextFile(join(box.cwd, "servers_config.json"), original);
  await place("vscode_mcp.json", join(box.cwd, "exported", "mcp.json"));
  const run = await runPatchbay(box, ["mcp", "import", "exported/mcp.json"]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /From .*exported\/mcp\.json \(servers\)/);
  const text = await Deno.readTextFile(join(box.cwd, "servers_config.json"));
  assert.ok(text.startsWith('{\n  "LLM": {"provider": "openai", "model": "m"},\n'), text);

  // A cloned repository's file names nothing onto the screen with its control characters.
  const hostile = { mcpServers: { "evil\u001b]0;pwned\u0007\u001b[2J": { command: "x" } } };
  await Deno.writeTextFile(join(box.cwd, "cloned.json"), JSON.stringify(hostile));
  const cleaned = await runPatchbay(box, ["mcp", "import", "./cloned.json"]);
  assert.equal(cleaned.code, 1);
  assert.match(
    cleaned.stdout,
    /✗ evil\\x1b\]0;pwned\\x07\\x1b\[2J: not imported: its name holds control characters/,
  );
  assert.ok(!cleaned.stdout.includes("\u001b"), JSON.stringify(cleaned.stdout));

  const unknown = await runPatchbay(box, ["mcp", "import", "windsurf"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown source 'windsurf'/);
  const none = await runPatchbay(box, ["mcp", "import"]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /claude-desktop +\(no file found\)/);
  const absent = await runPatchbay(box, ["mcp", "import", "gemini"]);
  assert.equal(absent.code, 1);
  assert.match(absent.stderr, /Found no gemini configuration[\s\S]*\.gemini\/settings\.json/);
});
