import assert from "node:assert/strict";
import manifest from "../../deno.json" with { type: "json" };
import { configDir, dataDir, stateDir } from "../../lib/paths.ts";
import { CLIENT_V8_FLAGS } from "../../lib/v8_flags.ts";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";

/** The permission flags of a `deno run|install|compile ... main.ts` task. */
function permissionFlags(task: string): string[] {
  return task.split(/\s+/).filter((word) => /^--(allow|deny)-|^-A$|^--no-prompt$/.test(word));
}

Deno.test("the start task runs the launcher, which may read, run Deno and write only its plans", () => {
  const flags = permissionFlags(manifest.tasks.start);
  assert.ok(manifest.tasks.start.endsWith(" launch.ts"), manifest.tasks.start);
  assert.ok(
    flags.includes("--no-prompt"),
    "a terminal must never be stopped by a permission prompt",
  );
  // The launcher reads the configuration, .env and the environment, runs Deno, and
  // remembers plans in its own folder: no network, no system information, no other writes.
  assert.deepEqual(flags, [
    "--no-prompt",
    "--allow-read",
    "--allow-env",
    "--allow-write=$HOME/.local/state/patchbay",
    "--allow-run",
  ]);
});

Deno.test("install runs the install script; compile keeps the broad flags of --unrestricted and the client's V8 flags", () => {
  assert.ok(manifest.tasks.install.endsWith(" scripts/install.ts"), manifest.tasks.install);
  assert.ok(!permissionFlags(manifest.tasks.install).some((f) => f.startsWith("--allow-net")));
  // A compiled binary cannot start itself under other flags: it keeps the broad set, with
  // writing limited to patchbay's folders (docs/installation.md).
  const compile = permissionFlags(manifest.tasks.compile);
  assert.ok(!compile.includes("-A") && !compile.some((f) => f.startsWith("--allow-all")));
  // The folders granted are the ones lib/paths.ts writes to by default (no XDG_* set), with
  // HOME as the task spells it.
  const write = compile.find((f) => f.startsWith("--allow-write="));
  assert.deepEqual(write?.slice("--allow-write=".length).split(","), defaultFolders("$HOME"));
  // The binary keeps the client's memory settings, as the launcher's command line does.
  assert.ok(manifest.tasks.compile.split(/\s+/).includes(CLIENT_V8_FLAGS), manifest.tasks.compile);
});

/** `stateDir()`, `dataDir()`, `configDir()` for `home` with no XDG_* variable set. */
function defaultFolders(home: string): string[] {
  const names = ["HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"];
  const saved = names.map((name) => [name, Deno.env.get(name)] as const);
  try {
    for (const name of names) Deno.env.delete(name);
    Deno.env.set("HOME", home);
    return [stateDir(), dataDir(), configDir()];
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) Deno.env.delete(name);
      else Deno.env.set(name, value);
    }
  }
}

Deno.test("the start task's plan follows --log-file: the log goes where asked, and only there", async () => {
  await using box = await sandbox();
  await writeConfig(box, configWith());
  const granted = await runPatchbay(box, ["config", "check"]);
  assert.equal(granted.code, 0, granted.stderr);
  const stat = await Deno.stat(`${box.home}/.local/state/patchbay/patchbay.log`);
  assert.ok(stat.isFile);
  // The plan grants the log file named on the command line, not its folder.
  const moved = await runPatchbay(box, ["--log-file", "here.log", "config", "check"]);
  assert.equal(moved.code, 0, moved.stderr);
  assert.equal(moved.stderr, "");
  assert.ok((await Deno.stat(`${box.cwd}/here.log`)).size > 0);
  const plan = await runPatchbay(box, ["--log-file", "here.log", "permissions", "--json"]);
  const { flags } = JSON.parse(plan.stdout) as { flags: string[] };
  const write = flags.find((f) => f.startsWith("--allow-write="))!.split(/[=,]/).slice(1);
  assert.ok(write.includes(`${box.cwd}/here.log`), write.join(" "));
  assert.ok(!write.includes(box.cwd), write.join(" "));
});
