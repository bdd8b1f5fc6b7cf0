/**
 * The launcher started without its own permissions (`deno run launch.ts` with no flags and
 * no terminal, as a `deno install -g` with no flags runs it) says what it lacks and prints
 * the command lines that grant it, in the cause/remedy form, instead of an uncaught
 * `DenoPermissionError … reading HOME` and a stack trace; the printed line then works.
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { configWith, runInSandbox, sandbox, writeConfig } from "../support/cli.ts";
import { DENO } from "../support/deps.ts";

const PROJECT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const LAUNCHER = join(PROJECT, "launch.ts");

/** No uncaught error, no stack frame: only patchbay's own words. */
function assertNoRawDenoError(stderr: string): void {
  assert.doesNotMatch(stderr, /Uncaught|DenoPermissionError|NotCapable/);
  assert.doesNotMatch(stderr, /^\s+at /m, "a stack trace");
}

Deno.test("deno run launch.ts with no flags and no terminal: what it lacks and the lines to run, no stack trace", async () => {
  await using box = await sandbox();
  await writeConfig(box, configWith());
  const bare = await runInSandbox(box, DENO, ["run", LAUNCHER, "tools", "--json"]);
  assert.equal(bare.code, 1, bare.stderr);
  assertNoRawDenoError(bare.stderr);
  assert.match(bare.stderr, /^error: patchbay's launcher was started without the Deno permissions/);
  assert.match(
    bare.stderr,
    /\n {2}cause: {2}it was started without --allow-env, --allow-read, --allow-run/,
  );
  assert.match(bare.stderr, /\n {2}remedy: start it with them, one of:\n/);
  assert.ok(
    bare.stderr.includes(`run: deno task --config ${PROJECT}/deno.json start tools --json\n`),
    bare.stderr,
  );
  assert.ok(bare.stderr.includes(`install: deno task --config ${PROJECT}/deno.json install`));
  // The printed `deno run` line, pasted into a shell (which expands $HOME), works.
  const line = /^ {4}run: (deno run .*)$/m.exec(bare.stderr)?.[1];
  assert.ok(line, bare.stderr);
  assert.ok(line.includes('"--allow-write=$HOME/.local/state/patchbay"'), line);
  const pasted = await runInSandbox(box, "sh", ["-c", line], {
    env: { PATH: `${dirname(DENO)}:${box.env.PATH}` },
  });
  assert.equal(pasted.code, 0, pasted.stderr);
  assert.deepEqual(JSON.parse(pasted.stdout).servers, []);
});

Deno.test("a launcher granted only some of what it needs names just those, with HOME's folder spelled out", async () => {
  await using box = await sandbox();
  const partial = await runInSandbox(box, DENO, ["run", "--allow-env", LAUNCHER, "doctor"]);
  assert.equal(partial.code, 1, partial.stderr);
  assertNoRawDenoError(partial.stderr);
  assert.match(partial.stderr, /cause: {2}it was started without --allow-read, --allow-run,/);
  assert.ok(
    partial.stderr.includes(
      `--allow-write=${box.home}/.local/state/patchbay --allow-net=127.0.0.1:0 ${LAUNCHER} doctor`,
    ),
    partial.stderr,
  );
});

Deno.test("a launcher that may not write its state folder still starts the client, and says what that costs", async () => {
  await using box = await sandbox();
  await writeConfig(box, configWith());
  const env = { XDG_STATE_HOME: join(box.home, "moved-state") };
  const unwritable = await runInSandbox(box, DENO, [
    "run",
    "--no-prompt",
    "--allow-read",
    "--allow-env",
    "--allow-run",
    `--allow-write=${join(box.home, ".local", "state", "patchbay")}`,
    LAUNCHER,
    "config",
    "check",
  ], { env });
  assert.equal(unwritable.code, 0, unwritable.stderr);
  assertNoRawDenoError(unwritable.stderr);
  assert.match(
    unwritable.stderr,
    new RegExp(
      `^patchbay: the launcher may not write ${env.XDG_STATE_HOME}/patchbay, so it computes ` +
        "the permission plan at every start and cannot restart the client under a wider one .*" +
        `start it with --allow-write=${env.XDG_STATE_HOME}/patchbay\n`,
    ),
  );
  assert.match(unwritable.stdout, /^✓ servers_config.json is valid\n/);
});
