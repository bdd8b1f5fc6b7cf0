/**
 * The installed `patchbay` (`deno task install`) restarts under a wider plan exactly as
 * `deno task start` does: a server added by `patchbay mcp add` in another shell connects
 * at the next `/refresh`, with patchbay's state folder moved by XDG_STATE_HOME (the command
 * finds it at each start, for whoever runs it).
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { runInSandbox, sandbox, writeConfig } from "../support/cli.ts";
import { DENO, everythingEntry, NODE } from "../support/deps.ts";
import { Repl, replConfig, terminalEnv } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { TmuxSession } from "../support/tmux.ts";

const PROJECT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

Deno.test("the installed command: mcp add in another shell, then /refresh restarts under the wider plan and the server connects", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  const config = replConfig(box, llm);
  delete (config.mcpServers as Record<string, unknown>).filesystem;
  await writeConfig(box, config);
  const env = {
    PATH: `${join(box.home, "deno-bin", "bin")}:${dirname(DENO)}:${box.env.PATH}`,
    XDG_STATE_HOME: join(box.home, "elsewhere", "state"),
  };
  const install = await runInSandbox(box, DENO, ["task", "--quiet", "install"], {
    cwd: PROJECT,
    env: { ...env, DENO_INSTALL_ROOT: join(box.home, "deno-bin") },
  });
  assert.equal(install.code, 0, install.stderr);

  await using tmux = await TmuxSession.start({
    command: ["patchbay"],
    env: terminalEnv(box, env),
    cwd: box.cwd,
    width: 160,
    height: 50,
  });
  const repl = new Repl(tmux, box);
  await tmux.waitFor(/^Servers {2}1 of 1 server connected/m, { timeoutMs: 60_000 });

  // Another shell adds a server whose command the running plan does not allow.
  const script = join(box.cwd, "second-server.sh");
  await Deno.writeTextFile(script, `#!/bin/sh\nexec '${NODE}' '${everythingEntry()}' stdio\n`);
  await Deno.chmod(script, 0o755);
  const add = await runInSandbox(box, "patchbay", ["mcp", "add", "second", "--", script], { env });
  assert.equal(add.code, 0, add.stderr);

  const restart = await repl.send("/refresh", /Restarting under an extended plan/, 60_000);
  assert.match(restart, new RegExp(`which adds run ${script} \\(starts server 'second'\\)`));
  await tmux.waitFor(/2 of 2 servers connected/, { timeoutMs: 60_000 });
  assert.match(await repl.send("/tools second", "get-sum"), /second \(\d+ tools\)/);
  // The launcher wrote where the shell found the state folder at the start.
  const plans = [...Deno.readDirSync(join(env.XDG_STATE_HOME, "patchbay", "launch"))];
  assert.ok(plans.length > 0, "the launcher remembered the plan in the moved state folder");
});
