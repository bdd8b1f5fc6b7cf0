import assert from "node:assert/strict";
import manifest from "../../deno.json" with { type: "json" };
import { CLIENT_V8_FLAGS } from "../../lib/cli/v8_flags.ts";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { BINARY_FLAGS, compileArgs, TARGETS, targetsFrom } from "../../scripts/compile.ts";

const PROJECT = new URL("../../", import.meta.url).pathname;

/** The permission flags of a `deno run|install|compile ... main.ts` task. */
function permissionFlags(task: string): string[] {
  return task.split(/\s+/).filter((word) => /^--(allow|deny)-|^-A$|^--no-prompt$/.test(word));
}

Deno.test("the start task runs the launcher, which may read, run, write only its plans and listen on loopback", () => {
  const flags = permissionFlags(manifest.tasks.start);
  assert.ok(manifest.tasks.start.endsWith(" launch.ts"), manifest.tasks.start);
  assert.ok(
    flags.includes("--no-prompt"),
    "a terminal must never be stopped by a permission prompt",
  );
  // The launcher reads the configuration, .env and the environment, runs Deno and the
  // servers it hands over, remembers plans in its own folder, and listens on a loopback port
  // the system picks (the hand-over): no other network, no system information, no other
  // writes.
  assert.deepEqual(flags, [
    "--no-prompt",
    "--allow-read",
    "--allow-env",
    "--allow-write=$HOME/.local/state/patchbay",
    "--allow-run",
    "--allow-net=127.0.0.1:0",
  ]);
});

Deno.test("install runs the install script; compile runs the compile script", () => {
  assert.ok(manifest.tasks.install.endsWith(" scripts/install.ts"), manifest.tasks.install);
  assert.ok(!permissionFlags(manifest.tasks.install).some((f) => f.startsWith("--allow-net")));
  assert.ok(manifest.tasks.compile.endsWith(" scripts/compile.ts"), manifest.tasks.compile);
});

Deno.test("a binary's flags name no path of the account that builds it, and keep the client's V8 flags", () => {
  // A compiled binary cannot start itself under other flags, and its flags are fixed when it
  // is built: a path in them would be the building account's (docs/installation.md).
  assert.ok(!BINARY_FLAGS.includes("-A") && !BINARY_FLAGS.some((f) => f.startsWith("--allow-all")));
  // The one value named is not a path: the host name, for conversation leases.
  assert.deepEqual(BINARY_FLAGS.filter((flag) => flag.includes("=")), ["--allow-sys=hostname"]);
  assert.ok(BINARY_FLAGS.includes("--no-prompt"));
  assert.ok(!BINARY_FLAGS.includes("--allow-sys"), "of system information, the host name only");
  for (const target of [undefined, ...TARGETS]) {
    const args = compileArgs(target);
    assert.ok(args.includes(CLIENT_V8_FLAGS), args.join(" "));
    assert.ok(!args.some((arg) => arg.includes("$HOME")), args.join(" "));
    assert.equal(args.at(-1), `${PROJECT}main.ts`);
  }
  assert.deepEqual(compileArgs("x86_64-pc-windows-msvc").slice(1, 5), [
    "--output",
    `${PROJECT}dist/patchbay-x86_64-pc-windows-msvc.exe`,
    "--target",
    "x86_64-pc-windows-msvc",
  ]);
  assert.deepEqual(targetsFrom([]), [undefined]);
  assert.deepEqual(targetsFrom(["--all"]), [...TARGETS]);
  assert.equal(targetsFrom(["--target", "sparc-sun-solaris"]), undefined);
});

Deno.test("deno task compile --all builds for every target deno compile knows", async () => {
  // Deno lists its targets when given one it does not know (it stops before compiling).
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["compile", "--target", "no-such-target", `${PROJECT}main.ts`],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const listed = /possible values: ([^\n]+)/.exec(new TextDecoder().decode(output.stderr))?.[1];
  assert.ok(listed, new TextDecoder().decode(output.stderr));
  assert.deepEqual([...TARGETS].sort(), listed.split(",").map((t) => t.trim()).sort());
});

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
