/**
 * At a terminal, `patchbay mcp add` asks before it moves secrets to .env (names shown,
 * values never), and a "no" keeps them inline in a file only its owner may read. Driven
 * through tmux, as a person runs it.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { sandbox } from "../support/cli.ts";
import { PATCHBAY, terminalEnv } from "../support/repl.ts";
import { TmuxSession } from "../support/tmux.ts";

const SECRET = "fixture-secret-3";

async function addAtTerminal(answer: string) {
  const box = await sandbox();
  const tmux = await TmuxSession.start({
    command: [
      ...PATCHBAY,
      "mcp",
      "add",
      "api",
      "http://127.0.0.1:1/mcp",
      "-H",
      `Authorization: Bearer ${SECRET}`,
    ],
    env: terminalEnv(box),
    cwd: box.cwd,
  });
  const question = await tmux.waitFor("[Y/n]", { timeoutMs: 30_000 });
  assert.match(question, /api: headers\.Authorization -> \$\{API_TOKEN\}/);
  assert.ok(!question.includes(SECRET), "the question never shows the secret");
  await tmux.submit(answer);
  const code = await tmux.exitCode();
  return { box, tmux, code, screen: await tmux.screen() };
}

Deno.test("at a terminal, Enter moves the secret to a 0600 .env", async () => {
  const { box, tmux, code, screen } = await addAtTerminal("");
  await using _box = box;
  await using _tmux = tmux;
  assert.equal(code, 0, screen);
  assert.match(screen, /Moved 1 secret to \.env \(readable by you only\): API_TOKEN/);
  const entry = JSON.parse(await Deno.readTextFile(join(box.cwd, "servers_config.json")))
    .mcpServers.api;
  assert.deepEqual(entry.headers, { Authorization: "Bearer ${API_TOKEN}" });
  assert.equal((await Deno.stat(join(box.cwd, ".env"))).mode! & 0o777, 0o600);
});

Deno.test("at a terminal, 'n' keeps the secret inline in an owner-only new file", async () => {
  const { box, tmux, code, screen } = await addAtTerminal("n");
  await using _box = box;
  await using _tmux = tmux;
  assert.equal(code, 0, screen);
  assert.match(screen, /Kept 1 secret in the entry; servers_config\.json is readable by you only/);
  const file = join(box.cwd, "servers_config.json");
  assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
  assert.ok((await Deno.readTextFile(file)).includes(`Bearer ${SECRET}`));
  await assert.rejects(Deno.stat(join(box.cwd, ".env")), Deno.errors.NotFound);
});

Deno.test("at a terminal, a typo or Ctrl+D is no answer: refused, nothing written", async () => {
  for (const answer of ["maybe", undefined]) {
    const box = await sandbox();
    await using _box = box;
    const tmux = await TmuxSession.start({
      command: [...PATCHBAY, "mcp", "add", "api", "http://127.0.0.1:1/mcp", "-H", "X-Api-Key: k1"],
      env: terminalEnv(box),
      cwd: box.cwd,
    });
    await using _tmux = tmux;
    await tmux.waitFor("[Y/n]", { timeoutMs: 30_000 });
    if (answer === undefined) await tmux.press("C-d");
    else await tmux.submit(answer);
    const code = await tmux.exitCode();
    const screen = await tmux.screen();
    assert.equal(code, 2, screen);
    assert.match(
      screen,
      answer === undefined ? /No answer to the secrets question/ : /'maybe' answers neither yes/,
    );
    assert.match(screen, /nothing was written/);
    assert.deepEqual([...Deno.readDirSync(box.cwd)], [], "no file created");
  }
});
