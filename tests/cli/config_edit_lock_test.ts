/**
 * Edits of the configuration are serialised: twelve `patchbay mcp add` at once all land
 * (each that says "Added" has added), and an edit that finds another holding the lock past
 * the bounded wait gives up with who holds it and what to do, having written nothing.
 * `patchbay approvals revoke --all` waits the same bounded time on the approvals' lock.
 * Through `deno task start`; the holder is another process running patchbay's own lock.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { lockFileFor } from "../../lib/config/edit.ts";
import { bounded } from "../support/bounded.ts";
import { configWith, runPatchbay, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { DENO } from "../support/deps.ts";

const FILE_LOCK = new URL("../../lib/files/file_lock.ts", import.meta.url).href;

/** Another process holding the lock of `lockPath` until it is killed; resolves once held. */
async function holdLock(lockPath: string): Promise<Deno.ChildProcess> {
  const script = `import { withFileLock } from ${JSON.stringify(FILE_LOCK)};\n` +
    `await withFileLock(${JSON.stringify(lockPath)}, { what: "x", doing: "hold it" }, () => {\n` +
    // A timer keeps the process (and so the lock) alive until it is killed.
    `  console.log("held");\n  return new Promise(() => setInterval(() => {}, 60_000));\n});\n`;
  const child = new Deno.Command(DENO, {
    args: ["eval", "--quiet", script],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!seen.includes("held")) {
    const { value, done } = await bounded(reader.read(), "the holder to take the lock");
    if (done) throw new Error(`the holder ended: ${seen}`);
    seen += value;
  }
  reader.releaseLock();
  return child;
}

async function stop(child: Deno.ChildProcess): Promise<void> {
  child.kill("SIGKILL");
  await child.stdout.cancel().catch(() => {});
  await child.status;
}

const stateFolder = (box: Sandbox) => join(box.home, ".local", "state", "patchbay");

Deno.test("12 parallel mcp add: each says Added, and the file holds all 12", async () => {
  await using box = await sandbox();
  const names = Array.from({ length: 12 }, (_, i) => `s${i + 1}`);
  const runs = await Promise.all(
    names.map((name) => runPatchbay(box, ["mcp", "add", name, "--", "node", `${name}.js`])),
  );
  runs.forEach((run, i) => {
    assert.equal(run.code, 0, `${names[i]}: ${run.stderr}`);
    assert.match(run.stdout, new RegExp(`Added stdio server '${names[i]}' to`));
  });
  const file = JSON.parse(await Deno.readTextFile(join(box.cwd, "servers_config.json")));
  assert.deepEqual(Object.keys(file.mcpServers).sort(), [...names].sort());
  for (const name of names) assert.deepEqual(file.mcpServers[name].args, [`${name}.js`]);
  const check = await runPatchbay(box, ["config", "check"]);
  assert.equal(check.code, 0, check.stderr);
});

Deno.test("an edit whose lock another process keeps gives up, naming it; nothing written", async () => {
  await using box = await sandbox();
  const config = await writeConfig(box, configWith({ a: { command: "x" } }));
  const before = await Deno.readTextFile(config);
  const holder = await holdLock(lockFileFor(config, stateFolder(box)));
  try {
    for (const args of [["mcp", "add", "b", "--", "y"], ["mcp", "remove", "a"]]) {
      const run = await bounded(runPatchbay(box, args), `${args.join(" ")} to give up`);
      assert.equal(run.code, 1, run.stderr);
      assert.match(
        run.stderr,
        /error: Could not (write the new entries|remove server 'a'): the configuration servers_config\.json is being changed by another patchbay/,
      );
      assert.match(run.stderr, new RegExp(`cause: +process ${holder.pid} \\(holding it since `));
      assert.match(run.stderr, /for all of the 10 s this command waits, so nothing was changed/);
      assert.match(
        run.stderr,
        new RegExp(
          `remedy: +run the command again once the other one has finished \\(if process ${holder.pid} is stuck, end it first\\)`,
        ),
      );
      assert.doesNotMatch(run.stdout, /Added|Removed/);
    }
    assert.equal(await Deno.readTextFile(config), before);
  } finally {
    await stop(holder);
  }
  // The holder gone, its lock is gone with it.
  const added = await runPatchbay(box, ["mcp", "add", "b", "--", "y"]);
  assert.equal(added.code, 0, added.stderr);
});

Deno.test("approvals revoke --all waits a bounded time on another process's lock, then says who", async () => {
  await using box = await sandbox();
  const approvals = join(stateFolder(box), "approvals.json");
  await Deno.mkdir(stateFolder(box), { recursive: true });
  await Deno.writeTextFile(approvals, JSON.stringify({ version: 1, approvals: [] }), {
    mode: 0o600,
  });
  const holder = await holdLock(`${approvals}.lock`);
  try {
    const run = await bounded(runPatchbay(box, ["approvals", "revoke", "--all"]), "revoke to end");
    assert.equal(run.code, 1, run.stderr);
    assert.match(
      run.stderr,
      /error: Could not revoke the approvals: the approvals file .*approvals\.json is being changed by another patchbay/,
    );
    assert.match(run.stderr, new RegExp(`process ${holder.pid} \\(holding it since`));
  } finally {
    await stop(holder);
  }
  const again = await runPatchbay(box, ["approvals", "revoke", "--all"]);
  assert.equal(again.code, 0, again.stderr);
});
