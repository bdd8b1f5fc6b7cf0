/**
 * A compiled patchbay works for whoever runs it. `deno compile` cannot build here (it
 * downloads its runtime from a host these machines cannot reach), so the build's behaviour
 * is tested the way it runs: `main.ts` under exactly the flags `deno task compile` bakes in
 * (`scripts/compile.ts`), run by an account other than the one that built it (its own
 * HOME, then XDG_STATE_HOME, XDG_DATA_HOME and XDG_CONFIG_HOME elsewhere). The words only a
 * binary says are checked with `Deno.build.standalone` reading true
 * (`tests/support/as_compiled.ts`), the one thing that differs in a binary.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { BINARY_FLAGS } from "../../scripts/compile.ts";
import { CLIENT_V8_FLAGS } from "../../lib/cli/v8_flags.ts";
import { type CliResult, runCommand, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { DENO } from "../support/deps.ts";
import { everythingEntry, NODE } from "../support/deps.ts";
import { Repl, replConfig, terminalEnv } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { TmuxSession } from "../support/tmux.ts";

const PROJECT = new URL("../../", import.meta.url).pathname;
const AS_COMPILED = join(PROJECT, "tests", "support", "as_compiled.ts");

/** `main.ts` under the binary's flags, in the sandbox, with `env` over its environment. */
function asBuilt(
  box: Sandbox,
  env: Record<string, string>,
  args: string[],
  options: { compiled?: boolean; flags?: readonly string[] } = {},
): Promise<CliResult> {
  return runCommand(DENO, [
    "run",
    CLIENT_V8_FLAGS,
    ...options.flags ?? BINARY_FLAGS,
    ...(options.compiled ? ["--preload", AS_COMPILED] : []),
    "--config",
    join(PROJECT, "deno.json"),
    join(PROJECT, "main.ts"),
    ...args,
  ], { cwd: box.cwd, env: { ...box.env, ...env } });
}

/** Every file under `dir`, relative to it; none when it does not exist. */
function filesUnder(dir: string, prefix = ""): string[] {
  try {
    return [...Deno.readDirSync(join(dir, prefix))].flatMap((entry) =>
      entry.isDirectory ? filesUnder(dir, join(prefix, entry.name)) : [join(prefix, entry.name)]
    );
  } catch {
    return [];
  }
}

const SUM = { toolCalls: [{ name: "everything__get-sum", arguments: { a: 2, b: 3 } }] };

Deno.test("built by one account, run by another: servers, log and memory in the runner's folders, XDG variables followed", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm({
    replies: [SUM, { text: "The sum is 5." }, SUM, { text: "Five again." }],
  });
  await writeConfig(box, replConfig(box, llm));

  // The runner's own HOME, unknown when the binary was built.
  const other = { HOME: join(box.home, "other-account") };
  const first = await asBuilt(box, other, ["run", "--yes", "add 2 and 3"]);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(first.stdout, "The sum is 5.\n");
  assert.doesNotMatch(first.stderr, /Cannot write|Memory off|Permission denied|--allow-/);
  const state = join(other.HOME, ".local", "state", "patchbay");
  assert.ok(Deno.statSync(join(state, "patchbay.log")).size > 0, "the log is written");
  const sessions = await asBuilt(box, other, ["sessions", "list"]);
  assert.equal(sessions.code, 0, sessions.stderr);
  assert.match(sessions.stdout, /add 2 and 3/, "the conversation is stored");
  assert.ok(filesUnder(join(other.HOME, ".local", "share", "patchbay")).length > 0);

  // The same runner with its folders moved by the XDG variables: they are followed, and
  // nothing lands in HOME.
  const moved = {
    HOME: join(box.home, "moved-account"),
    XDG_STATE_HOME: join(box.home, "xdg", "state"),
    XDG_DATA_HOME: join(box.home, "xdg", "data"),
    XDG_CONFIG_HOME: join(box.home, "xdg", "config"),
  };
  const second = await asBuilt(box, moved, ["run", "--yes", "add 2 and 3 again"]);
  assert.equal(second.code, 0, second.stderr);
  assert.equal(second.stdout, "Five again.\n");
  assert.doesNotMatch(second.stderr, /Cannot write|Memory off|Permission denied|--allow-/);
  assert.ok(Deno.statSync(join(moved.XDG_STATE_HOME, "patchbay", "patchbay.log")).size > 0);
  const again = await asBuilt(box, moved, ["sessions", "list"]);
  assert.match(again.stdout, /add 2 and 3 again/);
  assert.doesNotMatch(again.stdout, /add 2 and 3\b(?! again)/, "the other account's is not here");
  assert.ok(filesUnder(join(moved.XDG_DATA_HOME, "patchbay")).length > 0);
  assert.deepEqual(filesUnder(moved.HOME), [], "nothing is written under HOME");
  // patchbay wrote only its own folders: nothing else appeared in the sandbox.
  const written = filesUnder(box.home).filter((path) =>
    !/^(other-account|xdg)\//.test(path) && !path.startsWith("work/servers_config.json")
  );
  assert.deepEqual(written, []);
});

Deno.test("a compiled binary's own remedies: the doctor and the grants name the launcher or a new build, never a flag to add", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm();
  await writeConfig(box, replConfig(box, llm));
  const doctor = await asBuilt(box, {}, ["doctor"], { compiled: true });
  const report = doctor.stdout + doctor.stderr;
  assert.match(report, /broader than needed: .*--allow-write/);
  assert.match(report, /a compiled binary keeps the permissions it was built with/);
  assert.match(report, /deno task start/);
  assert.doesNotMatch(report, /without\s+--unrestricted/);
  // The same command outside a binary keeps the launcher's advice.
  const direct = await asBuilt(box, {}, ["doctor"]);
  assert.match(direct.stdout + direct.stderr, /without\s+--unrestricted/);
  assert.doesNotMatch(direct.stdout + direct.stderr, /compiled binary/);
  // A binary built with narrower flags than scripts/compile.ts gives (writing limited to
  // the builder's folders): its refusal says what a binary's person can do.
  const narrower = BINARY_FLAGS.map((flag) =>
    flag === "--allow-write" ? `--allow-write=${join(box.home, "builder")}` : flag
  );
  const refused = await asBuilt(box, {}, ["config", "check"], { compiled: true, flags: narrower });
  assert.match(refused.stderr, /Cannot write the log file .*; logging is off\. To keep a log, /);
  assert.match(
    refused.stderr,
    /this patchbay is a compiled binary, whose permissions were fixed when it was built: run\s+patchbay through its launcher instead/,
  );
  assert.match(refused.stderr, /build it again\s+with --allow-write=\S+ added to the flags of/);
  assert.doesNotMatch(refused.stderr, /to the deno command/);
});

Deno.test("a compiled binary's /refresh: a server added by mcp add in another shell connects, with no restart to ask for", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  const config = replConfig(box, llm);
  delete (config.mcpServers as Record<string, unknown>).filesystem;
  await writeConfig(box, config);
  const other = { HOME: join(box.home, "other-account") };
  await using tmux = await TmuxSession.start({
    command: [
      DENO,
      "run",
      CLIENT_V8_FLAGS,
      ...BINARY_FLAGS,
      "--preload",
      AS_COMPILED,
      "--config",
      join(PROJECT, "deno.json"),
      join(PROJECT, "main.ts"),
    ],
    env: terminalEnv(box, other),
    cwd: box.cwd,
    width: 160,
    height: 50,
  });
  const repl = new Repl(tmux, box);
  await tmux.waitFor(/^Servers {2}1 of 1 server connected/m, { timeoutMs: 60_000 });
  const script = join(box.cwd, "second-server.sh");
  await Deno.writeTextFile(script, `#!/bin/sh\nexec '${NODE}' '${everythingEntry()}' stdio\n`);
  await Deno.chmod(script, 0o755);
  const add = await asBuilt(box, other, ["mcp", "add", "second", "--", script]);
  assert.equal(add.code, 0, add.stderr);
  const refresh = await repl.send("/refresh", "Configuration read again", 60_000);
  assert.doesNotMatch(refresh, /Restarting|not granted/);
  await tmux.waitFor(/2 of 2 servers connected|second.*connected/, { timeoutMs: 60_000 });
  assert.match(await repl.send("/tools second", "get-sum"), /second \(\d+ tools\)/);
  const status = await repl.send("/status", /Uptime/);
  assert.match(
    status,
    /Grants +broader than the plan: [^(]*--allow-write[^(]*\(a compiled\s+binary/,
  );
});
