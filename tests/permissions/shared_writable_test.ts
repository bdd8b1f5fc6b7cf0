/**
 * Files other local users may write: a configuration, `.env` or patchbay folder writable
 * by a group or by everyone is refused with its path, its mode and the `chmod` that fixes
 * it (docs/security-limits.md). Each hostile layout is made for real in a sandbox and run
 * through `deno task start`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { configWith, runPatchbay, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { findSharedWritable } from "../../lib/files/shared_writable.ts";
import { tempDir } from "../support/temp_dir.ts";

/** A group id other than the owner's: the shared-group case needs one. */
const SHARED_GID = 100;

/** Whether this process may give a file to another group (root may). */
function canChown(): boolean {
  return Deno.uid() === 0;
}

async function tools(box: Sandbox, args: string[] = []) {
  return await runPatchbay(box, [...args, "tools"]);
}

function assertRefused(
  result: { code: number; stderr: string },
  what: RegExp,
  path: string,
  mode: string,
) {
  assert.notEqual(result.code, 0, result.stderr);
  assert.match(result.stderr, what, result.stderr);
  assert.ok(result.stderr.includes(path), `the path is named: ${result.stderr}`);
  assert.ok(result.stderr.includes(`(mode ${mode})`), `the mode is shown: ${result.stderr}`);
  assert.ok(result.stderr.includes(`chmod go-w ${path}`), `the remedy: ${result.stderr}`);
}

Deno.test("a configuration file every user may write is refused, and the chmod fixes it", async () => {
  await using box = await sandbox();
  const path = await writeConfig(box, configWith());
  await Deno.chmod(path, 0o666);
  const refused = await tools(box);
  assertRefused(
    refused,
    /Refusing to use the configuration file .*other users may write it/,
    path,
    "0666",
  );
  await Deno.chmod(path, 0o644);
  const accepted = await tools(box);
  assert.equal(accepted.code, 0, accepted.stderr);
});

Deno.test("a group-writable .env is refused unless the group is the owner's own", async () => {
  await using box = await sandbox();
  await writeConfig(box, configWith());
  const env = join(box.cwd, ".env");
  await Deno.writeTextFile(env, "LLM_API_KEY=sk-test\n");
  await Deno.chmod(env, 0o664);
  const info = await Deno.stat(env);
  // The owner's private group (gid equal to uid, umask 002 distributions) is not shared.
  if (info.gid === info.uid) {
    const own = await tools(box);
    assert.equal(own.code, 0, own.stderr);
  }
  if (!canChown()) return;
  await Deno.chown(env, null, SHARED_GID);
  const refused = await tools(box);
  assertRefused(refused, /Refusing to use the environment file .*\.env/, env, "0664");
  assert.match(refused.stderr, /writable by its group/);
});

Deno.test("a configuration in a folder others may write is refused; a sticky folder is not", async () => {
  await using box = await sandbox();
  const folder = join(box.home, "shared");
  await Deno.mkdir(folder);
  const path = await writeConfig(box, configWith());
  const moved = join(folder, "servers_config.json");
  await Deno.rename(path, moved);
  await Deno.chmod(folder, 0o777);
  const refused = await tools(box, ["--config", moved]);
  assertRefused(refused, /Refusing to use the configuration file/, folder, "0777");
  assert.match(refused.stderr, /the folder holding it/);
  // As /tmp: others may add files but not replace this one.
  await Deno.chmod(folder, 0o1777);
  const sticky = await tools(box, ["--config", moved]);
  assert.equal(sticky.code, 0, sticky.stderr);
});

Deno.test("symbolic links are judged by what they lead to, and where both sit", async () => {
  await using box = await sandbox();
  const real = await writeConfig(box, configWith(), "real_config.json");
  await Deno.chmod(real, 0o600);
  const link = join(box.cwd, "servers_config.json");
  await Deno.symlink(real, link);
  // A link's own mode is always 0777 on Linux: it says nothing.
  const throughLink = await tools(box);
  assert.equal(throughLink.code, 0, throughLink.stderr);
  await Deno.chmod(real, 0o646);
  const refused = await tools(box);
  assertRefused(refused, /Refusing to use the configuration file/, real, "0646");

  // A link in a safe folder into a folder others may write: the target can be replaced.
  await Deno.chmod(real, 0o600);
  const open = join(box.home, "open");
  await Deno.mkdir(open);
  const target = join(open, "config.json");
  await Deno.rename(real, target);
  await Deno.remove(link);
  await Deno.symlink(target, link);
  await Deno.chmod(open, 0o757);
  const intoShared = await tools(box);
  assertRefused(intoShared, /Refusing to use the configuration file/, open, "0757");
});

Deno.test("a file another user owns but only they may write is used", async () => {
  if (!canChown()) return;
  await using box = await sandbox();
  const path = await writeConfig(box, configWith());
  await Deno.chmod(path, 0o644);
  await Deno.chown(path, 12345, 12345);
  const result = await tools(box);
  assert.equal(result.code, 0, result.stderr);
});

Deno.test("a state folder others may write stops the launcher before it trusts a remembered plan", async () => {
  await using box = await sandbox();
  await writeConfig(box, configWith());
  const first = await tools(box);
  assert.equal(first.code, 0, first.stderr);
  const state = join(box.home, ".local", "state", "patchbay");
  await Deno.chmod(state, 0o777);
  const refused = await tools(box);
  assertRefused(refused, /Refusing to use the state folder/, state, "0777");
  assert.equal(refused.stdout, "", "the client did not start");
  // A sticky bit does not excuse patchbay's own folder: a plan added there is trusted.
  await Deno.chmod(state, 0o1777);
  const sticky = await tools(box);
  assertRefused(sticky, /Refusing to use the state folder/, state, "01777");
  await Deno.chmod(state, 0o700);
  const plans = join(state, "launch");
  await Deno.chmod(plans, 0o775);
  const info = await Deno.stat(plans);
  if (info.gid !== info.uid || canChown()) {
    if (canChown()) await Deno.chown(plans, null, SHARED_GID);
    const inPlans = await tools(box);
    assertRefused(
      inPlans,
      /Refusing to use the folder of remembered permission plans/,
      plans,
      "0775",
    );
  }
});

Deno.test("findSharedWritable: what counts as shared", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  const file = join(dir, "f");
  await Deno.writeTextFile(file, "{}");
  for (
    const [mode, shared] of [[0o600, false], [0o644, false], [0o602, true], [
      0o666,
      true,
    ]] as const
  ) {
    await Deno.chmod(file, mode);
    assert.equal(findSharedWritable(file) !== undefined, shared, mode.toString(8));
  }
  assert.equal(
    findSharedWritable(join(dir, "missing")),
    undefined,
    "a missing file is the reader's",
  );
  await Deno.chmod(file, 0o600);
  await Deno.chmod(dir, 0o1777);
  assert.equal(findSharedWritable(file), undefined, "a sticky folder holding a file");
  assert.equal(findSharedWritable(dir), undefined, "a sticky folder judged for itself");
  assert.equal(findSharedWritable(dir, { ownFolder: true })?.mode, 0o1777);
});
