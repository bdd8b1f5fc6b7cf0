/**
 * Secrets given to a stdio server as command arguments (`--api-key VALUE`, `--token=VALUE`,
 * a `ghp_…` token), through `deno task start`: never printed by `mcp add`, `mcp import`,
 * `mcp list`, `mcp get`; moved to .env like the secrets of `env` and `headers`, the
 * argument then a `${VAR}` reference that still reaches the server. And what `mcp remove`
 * says about the variables its server leaves in .env.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { everythingEntry, NODE } from "../support/deps.ts";
import { runPatchbay, sandbox } from "../support/cli.ts";
import { startEverythingHttp } from "../support/servers.ts";

const PLAIN = "plain-secret-value-1";
const INLINE = "hunter2-inline-value";
const SHAPED = "ghp_fixtureArgTokenNotReal0123456789";

const mode = async (path: string) => (await Deno.stat(path)).mode! & 0o777;

Deno.test("mcp add: secret arguments moved to .env as references, never printed; the server still connects", async () => {
  await using box = await sandbox();
  const add = await runPatchbay(box, [
    "mcp",
    "add",
    "weather",
    "--move-secrets",
    "--",
    NODE,
    everythingEntry(),
    "stdio",
    "--api-key",
    PLAIN,
    `--password=${INLINE}`,
    SHAPED,
  ]);
  assert.equal(add.code, 0, add.stderr);
  assert.match(
    add.stdout,
    /Moved 3 secrets to \.env .*: WEATHER_API_KEY, WEATHER_PASSWORD, WEATHER_TOKEN/,
  );
  const config = JSON.parse(await Deno.readTextFile(join(box.cwd, "servers_config.json")));
  assert.deepEqual(config.mcpServers.weather.args, [
    everythingEntry(),
    "stdio",
    "--api-key",
    "${WEATHER_API_KEY}",
    "--password=${WEATHER_PASSWORD}",
    "${WEATHER_TOKEN}",
  ]);
  const envFile = join(box.cwd, ".env");
  assert.equal(
    await Deno.readTextFile(envFile),
    `WEATHER_API_KEY='${PLAIN}'\nWEATHER_PASSWORD='${INLINE}'\nWEATHER_TOKEN='${SHAPED}'\n`,
  );
  assert.equal(await mode(envFile), 0o600);

  for (const args of [["mcp", "list"], ["mcp", "get", "weather"], ["mcp", "list", "--json"]]) {
    const shown = await runPatchbay(box, args);
    assert.equal(shown.code, 0, shown.stderr);
    for (const secret of [PLAIN, INLINE, SHAPED]) {
      assert.ok(!shown.stdout.includes(secret), `${args.join(" ")} printed ${secret}`);
    }
  }
  const checked = await runPatchbay(box, ["mcp", "get", "weather", "--check", "--json"]);
  assert.equal(checked.code, 0, checked.stderr);
  assert.equal(JSON.parse(checked.stdout).states[0].state, "connected");
});

Deno.test("mcp list and get mask a secret argument kept inline, whatever its shape", async () => {
  await using box = await sandbox();
  const add = await runPatchbay(box, [
    "mcp",
    "add",
    "inline",
    "--keep-secrets-inline",
    "--",
    "npx",
    "-y",
    "some-server",
    "--client-secret",
    PLAIN,
  ]);
  assert.equal(add.code, 0, add.stderr);
  assert.match(add.stdout, /Kept 1 secret in the entry; servers_config\.json is readable by you/);
  assert.equal(await mode(join(box.cwd, "servers_config.json")), 0o600);
  const list = await runPatchbay(box, ["mcp", "list"]);
  assert.match(list.stdout, /npx -y some-server --client-secret \[REDACTED\]/);
  const get = await runPatchbay(box, ["mcp", "get", "inline"]);
  assert.match(get.stdout, /args +-y some-server --client-secret \[REDACTED\]/);
  assert.ok(!list.stdout.includes(PLAIN) && !get.stdout.includes(PLAIN));
});

Deno.test("mcp import: the summary masks secret arguments; with --move-secrets they go to .env", async () => {
  await using box = await sandbox();
  const source = join(box.cwd, "other.json");
  await Deno.writeTextFile(
    source,
    JSON.stringify({
      mcpServers: {
        slack: {
          command: "npx",
          args: ["-y", "@example/slack", "--bot-token", "xoxb-1234567890-fixture"],
        },
        remote: {
          command: "npx",
          args: [
            "mcp-remote",
            "https://example.com/mcp",
            "--header",
            `Authorization: Bearer ${PLAIN}`,
          ],
        },
      },
    }),
  );
  const dry = await runPatchbay(box, ["mcp", "import", source, "--dry-run"]);
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /\+ slack +stdio +npx -y @example\/slack --bot-token \[REDACTED\]/);
  assert.ok(!dry.stdout.includes("xoxb-1234567890-fixture") && !dry.stdout.includes(PLAIN));

  const run = await runPatchbay(box, ["mcp", "import", source, "--move-secrets"]);
  assert.equal(run.code, 0, run.stderr);
  assert.ok(!run.stdout.includes("xoxb-1234567890-fixture"));
  const servers = JSON.parse(await Deno.readTextFile(join(box.cwd, "servers_config.json")))
    .mcpServers;
  assert.deepEqual(servers.slack.args, [
    "-y",
    "@example/slack",
    "--bot-token",
    "${SLACK_BOT_TOKEN}",
  ]);
  assert.equal(servers.remote.args[3], "Authorization: Bearer ${REMOTE_TOKEN}");
  assert.match(await Deno.readTextFile(join(box.cwd, ".env")), /SLACK_BOT_TOKEN='xoxb-/);
});

Deno.test("mcp remove names the variables in .env that no server refers to any more", async () => {
  await using box = await sandbox();
  const add = (name: string, value: string) =>
    runPatchbay(box, [
      "mcp",
      "add",
      name,
      "https://example.com/mcp",
      "-H",
      `Authorization: Bearer ${value}`,
      "-H",
      "X-Shared-Key: ${SHARED_KEY}",
      "--move-secrets",
    ]);
  await Deno.writeTextFile(join(box.cwd, ".env"), "SHARED_KEY='shared-value-1'\n");
  assert.equal((await add("one", "first-token-1")).code, 0);
  assert.equal((await add("two", "second-token-2")).code, 0);
  const removed = await runPatchbay(box, ["mcp", "remove", "one"]);
  assert.equal(removed.code, 0, removed.stderr);
  assert.match(removed.stdout, /Removed server 'one' from servers_config\.json/);
  assert.match(removed.stdout, /\.env still holds ONE_TOKEN, which no server refers to now/);
  assert.ok(!removed.stdout.includes("SHARED_KEY"), "two still refers to SHARED_KEY");
  assert.ok(!removed.stdout.includes("first-token-1"));
  assert.match(await Deno.readTextFile(join(box.cwd, ".env")), /ONE_TOKEN='first-token-1'/);
});

Deno.test("a URL's credentials and a credential inside another variable are moved too; the server still connects", async () => {
  await using box = await sandbox();
  await using server = await startEverythingHttp("streamableHttp");
  const key = "url-key-value-12345";
  const json = JSON.stringify({
    url: `${server.origin}/mcp?api_key=${key}&region=eu`,
  });
  const add = await runPatchbay(box, ["mcp", "add-json", "remote", json, "--move-secrets"]);
  assert.equal(add.code, 0, add.stderr);
  assert.ok(!add.stdout.includes(key));
  const stdio = await runPatchbay(box, [
    "mcp",
    "add",
    "db",
    "-e",
    "DATABASE_URL=postgres://app:db-password-1@localhost/app",
    "--move-secrets",
    "--",
    "db-server",
  ]);
  assert.equal(stdio.code, 0, stdio.stderr);
  const servers = JSON.parse(await Deno.readTextFile(join(box.cwd, "servers_config.json")))
    .mcpServers;
  assert.equal(servers.remote.url, `${server.origin}/mcp?api_key=\${REMOTE_API_KEY}&region=eu`);
  assert.deepEqual(servers.db.env, {
    DATABASE_URL: "postgres://app:${DB_DATABASE_URL}@localhost/app",
  });
  assert.equal(
    await Deno.readTextFile(join(box.cwd, ".env")),
    `REMOTE_API_KEY='${key}'\nDB_DATABASE_URL='db-password-1'\n`,
  );
  const checked = await runPatchbay(box, ["mcp", "get", "remote", "--check", "--json"]);
  assert.equal(checked.code, 0, checked.stderr);
  assert.equal(JSON.parse(checked.stdout).states[0].state, "connected");
  assert.ok(!checked.stdout.includes(key));
});
