import assert from "node:assert/strict";
import manifest from "../deno.json" with { type: "json" };
import { configDir, dataDir, stateDir } from "../lib/paths.ts";
import { configWith, runPatchbay, sandbox, writeConfig } from "./support/cli.ts";

/** The permission flags of a `deno run|install|compile ... main.ts` task. */
function permissionFlags(task: string): string[] {
  return task.split(/\s+/).filter((word) => /^--(allow|deny)-|^-A$|^--no-prompt$/.test(word));
}

Deno.test("the start task runs main.ts under explicit, narrow permission flags", () => {
  const flags = permissionFlags(manifest.tasks.start);
  assert.ok(manifest.tasks.start.endsWith(" main.ts"), manifest.tasks.start);
  assert.ok(
    !flags.includes("-A") && !flags.some((f) => f.startsWith("--allow-all")),
    flags.join(" "),
  );
  assert.ok(
    flags.includes("--no-prompt"),
    "a terminal must never be stopped by a permission prompt",
  );
  const write = flags.find((f) => f.startsWith("--allow-write"));
  assert.ok(write?.includes("="), "write access is limited to patchbay's own folders");
  // The folders granted are the ones lib/paths.ts writes to by default (no XDG_* set),
  // with HOME as the task spells it.
  assert.deepEqual(write!.slice("--allow-write=".length).split(","), defaultFolders("$HOME"));
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

Deno.test("install and compile grant exactly the start task's permissions", () => {
  const start = permissionFlags(manifest.tasks.start);
  assert.deepEqual(permissionFlags(manifest.tasks.install), start);
  assert.deepEqual(permissionFlags(manifest.tasks.compile), start);
});

Deno.test("the entry point runs under the start task's flags: granted folders work, others are refused", async () => {
  await using box = await sandbox();
  await writeConfig(box, configWith());
  const granted = await runPatchbay(box, ["config", "check"]);
  assert.equal(granted.code, 0, granted.stderr);
  const stat = await Deno.stat(`${box.home}/.local/state/patchbay/patchbay.log`);
  assert.ok(stat.isFile);
  // The working directory is not writable under the start task: the log cannot go there.
  const refused = await runPatchbay(box, ["--log-file", "here.log", "config", "check"]);
  assert.equal(refused.code, 0, refused.stderr);
  assert.match(refused.stderr, /Add --allow-write=.*here\.log/);
  await assert.rejects(Deno.stat(`${box.cwd}/here.log`), Deno.errors.NotFound);
});
