/**
 * Every file patchbay reads is a regular file within a bound: a servers_config.json linked
 * to /dev/zero, or a FIFO, a .env FIFO, a .mcp.json linked to /dev/zero, an approvals.json
 * linked to /dev/zero and a configuration past its size bound are each refused at once,
 * saying what the file is and what to do, by every command that reads them; shell Tab
 * completion on such a configuration returns with no names instead of hanging the shell.
 * Through `deno task start`; every wait bounded far below "forever".
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bounded } from "../support/bounded.ts";
import { configWith, runPatchbay, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { DENO } from "../support/deps.ts";
import { TmuxSession } from "../support/tmux.ts";

const DENO_JSON = fileURLToPath(new URL("../../deno.json", import.meta.url));

async function mkfifo(path: string): Promise<void> {
  const { code } = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.equal(code, 0, `mkfifo ${path}`);
}

/** `patchbay <args>` in the sandbox, which must end (a hang fails the test, named). */
function ends(box: Sandbox, args: string[]) {
  return bounded(runPatchbay(box, args), `patchbay ${args.join(" ")} to end`);
}

Deno.test("servers_config.json linked to /dev/zero: every command refuses it at once, completion too", async () => {
  await using box = await sandbox();
  await Deno.symlink("/dev/zero", join(box.cwd, "servers_config.json"));
  for (
    const args of [["tools"], ["config", "check"], ["mcp", "add", "x", "--", "y"], ["mcp", "list"]]
  ) {
    const run = await ends(box, args);
    assert.equal(run.code, 1, `${args.join(" ")}: ${run.stderr}`);
    assert.match(
      run.stderr,
      /Refusing to read the configuration file servers_config\.json: it links to \/dev\/zero, a character device/,
    );
    assert.match(run.stderr, /cause: +patchbay reads only regular files/);
    assert.match(
      run.stderr,
      /remedy: +check what servers_config\.json is \(ls -lL servers_config\.json\)/,
    );
  }
  // What shell completion runs at Tab: no names, no hang, nothing on stdout to complete.
  const completion = await ends(box, ["completions", "--servers"]);
  assert.equal(completion.code, 0, completion.stderr);
  assert.equal(completion.stdout, "");
});

Deno.test("a FIFO configuration, a FIFO .env, an oversized configuration: refused with what they are", async () => {
  await using box = await sandbox();
  const config = join(box.cwd, "servers_config.json");
  await mkfifo(config);
  const fifo = await ends(box, ["tools"]);
  assert.equal(fifo.code, 1);
  assert.match(fifo.stderr, /servers_config\.json: it is a named pipe \(FIFO\)/);
  await Deno.remove(config);

  await writeConfig(box, configWith());
  await mkfifo(join(box.cwd, ".env"));
  const env = await ends(box, ["config", "check"]);
  assert.equal(env.code, 1);
  assert.match(env.stderr, /Refusing to read the environment file \.env: it is a named pipe/);
  assert.match(env.stderr, /or name another file with --env-file/);
  await Deno.remove(join(box.cwd, ".env"));

  // Valid JSON, 5 MiB of it: no configuration is this large.
  const padded = JSON.stringify(configWith()).replace("{", `{${" ".repeat(5 * 1024 * 1024)}`);
  await writeConfig(box, padded);
  const large = await ends(box, ["config", "check"]);
  assert.equal(large.code, 1);
  assert.match(large.stderr, /servers_config\.json: it is larger than 4 MiB/);
  assert.match(
    large.stderr,
    /it holds \d+ bytes or more, and the configuration file is read up to 4 MiB/,
  );
});

Deno.test("mcp import of a .mcp.json linked to /dev/zero, approvals.json linked to /dev/zero: refused", async () => {
  await using box = await sandbox();
  await writeConfig(box, configWith());
  await Deno.symlink("/dev/zero", join(box.cwd, ".mcp.json"));
  for (
    const args of [["mcp", "import", "claude-code"], ["mcp", "import", "./.mcp.json", "--dry-run"]]
  ) {
    const run = await ends(box, args);
    assert.equal(run.code, 1, run.stderr);
    assert.match(
      run.stderr,
      /Refusing to read the file to import .*\.mcp\.json: it links to \/dev\/zero/,
    );
  }
  const state = join(box.home, ".local", "state", "patchbay");
  await Deno.mkdir(state, { recursive: true });
  await Deno.symlink("/dev/zero", join(state, "approvals.json"));
  const listed = await ends(box, ["approvals", "list"]);
  assert.equal(listed.code, 1, listed.stderr);
  assert.match(
    listed.stderr,
    /Refusing to read the approvals file .*approvals\.json: it links to \/dev\/zero/,
  );
  assert.match(listed.stderr, /rm .*approvals\.json/);
});

Deno.test("bash Tab completion on a configuration that is a FIFO returns, and the shell goes on", async () => {
  await using box = await sandbox();
  await mkfifo(join(box.cwd, "servers_config.json"));
  const bin = join(box.home, "bin");
  await Deno.mkdir(bin, { recursive: true });
  await Deno.writeTextFile(
    join(bin, "patchbay"),
    `#!/bin/sh\nexec '${DENO}' task --quiet --config '${DENO_JSON}' start "$@"\n`,
    { mode: 0o755 },
  );
  const made = await runPatchbay(box, ["completions", "bash"]);
  assert.equal(made.code, 0, made.stderr);
  const script = join(box.home, "patchbay.bash");
  await Deno.writeTextFile(script, made.stdout);
  await Deno.writeTextFile(join(box.home, ".bashrc"), `PS1='bash$ '\nsource '${script}'\n`);
  await using shell = await TmuxSession.start({
    command: ["bash", "--rcfile", join(box.home, ".bashrc"), "-i"],
    env: { ...box.env, PATH: `${bin}:${box.env.PATH}`, TERM: "xterm-256color" },
    cwd: box.cwd,
  });
  await shell.waitFor(/bash\$\s*$/);
  await shell.type("patchbay tools al");
  await shell.press("Tab");
  // A completion that hung would hold the line: this command would never run.
  await shell.press("C-u");
  await shell.submit("echo shell-still-here");
  await shell.waitFor(/\nshell-still-here\nbash\$\s*$/, { timeoutMs: 60_000 });
});
