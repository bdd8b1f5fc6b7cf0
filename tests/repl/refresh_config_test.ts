/**
 * `/refresh` reads the configuration again, as a person uses it: the real `deno task start`
 * (the launcher and its plan) in tmux, real server-everything, the scripted model. A server
 * whose command the running plan does not allow is added by a restart under the extended
 * plan that keeps the conversation; a removed server is closed; a broken file changes
 * nothing.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { everythingEntry, filesystemEntry, NODE } from "../support/deps.ts";
import { processesWith } from "../support/servers.ts";
import { replConfig, startRepl } from "../support/repl.ts";
import { type ScriptedLlm, startScriptedLlm } from "../support/scripted_llm.ts";

/**
 * A session with one server (everything) that has said `word` to the model, and a second
 * server written into the file whose command is a script of its own, so the plan of the
 * first start cannot allow it. `memoryOff` turns memory off before anything is said.
 */
async function withSecondServerAdded(
  box: Sandbox,
  llm: ScriptedLlm,
  word: string,
  options: { memoryOff?: boolean } = {},
) {
  const config = replConfig(box, llm);
  delete (config.mcpServers as Record<string, unknown>).filesystem;
  await writeConfig(box, config);
  const script = join(box.cwd, "second-server.sh");
  await Deno.writeTextFile(script, `#!/bin/sh\nexec '${NODE}' '${everythingEntry()}' stdio\n`);
  await Deno.chmod(script, 0o755);
  const repl = await startRepl(box);
  if (options.memoryOff) await repl.send("/memory", "Memory off");
  await repl.send(`remember the word ${word}`, `Noted: ${word}.`);
  await writeConfig(box, {
    ...config,
    mcpServers: { ...config.mcpServers, second: { command: "./second-server.sh" } },
  });
  return { repl, script };
}

Deno.test("/refresh adds a server whose command the plan lacks: restart under the extended plan, conversation kept", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm({ replies: [{ text: "Noted: pineapple." }] });
  const { repl, script } = await withSecondServerAdded(box, llm, "pineapple");
  await using _repl = repl;
  const restart = await repl.send("/refresh", /Resuming session \S+ \(2 messages\)/, 60_000);
  assert.match(
    restart,
    new RegExp(
      `Restarting under an extended plan, which adds run ${script} \\(starts server 'second'\\); ` +
        "the conversation continues\\.",
    ),
  );
  await repl.tmux.waitFor(/2 of 2 servers connected/, { timeoutMs: 60_000 });
  assert.match(await repl.send("/tools second", "get-sum"), /second \(\d+ tools\)/);
  const history = await repl.send("/history", "conversation ");
  assert.match(history, /you\s+remember the word pineapple/);
  assert.match(history, /model\s+Noted: pineapple\./);
  // The launcher remembers the extended plan: no second restart for the same file.
  const again = await repl.send("/refresh", "Configuration read again");
  assert.match(again, /no server changed/);
  assert.doesNotMatch(again, /Restarting/);
});

Deno.test("/refresh with memory off: a restart that would end the conversation waits for a second /refresh", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm({ replies: [{ text: "Noted: mango." }] });
  const { repl, script } = await withSecondServerAdded(box, llm, "mango", { memoryOff: true });
  await using _repl = repl;
  const held = await repl.send("/refresh", /stay as they were[^]*1 of 1 server connected/, 60_000);
  assert.match(
    held,
    new RegExp(
      `The configuration needs run ${script} \\(starts server 'second'\\), which only a ` +
        "restart under an extended plan can add\\. Memory is off, so the restart would end " +
        "this conversation \\(2 messages\\): /refresh again to restart anyway\\.",
    ),
  );
  assert.doesNotMatch(held, /Restarting/);
  // Nothing changed: the conversation is still the one in progress.
  assert.match(await repl.send("/history", "conversation "), /you\s+remember the word mango/);

  const restart = await repl.send("/refresh", /Type a message/, 60_000);
  assert.match(
    restart,
    new RegExp(
      `Restarting under an extended plan, which adds run ${script} \\(starts server 'second'\\); ` +
        "a new conversation starts\\.",
    ),
  );
  await repl.tmux.waitFor(/2 of 2 servers connected/, { timeoutMs: 60_000 });
  assert.match(await repl.send("/tools second", "get-sum"), /second \(\d+ tools\)/);
});

Deno.test("/refresh with a ${VAR} the plan does not grant: restart with the variable, then it is read", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  const config = replConfig(box, llm);
  const path = await writeConfig(box, config);
  await using repl = await startRepl(box, { env: { PATCHBAY_REFRESH_ROOT: box.cwd } });

  const { filesystem } = config.mcpServers;
  await writeConfig(box, {
    ...config,
    mcpServers: {
      ...config.mcpServers,
      filesystem: { ...filesystem, args: [filesystem.args[0], "${PATCHBAY_REFRESH_ROOT}"] },
    },
  });
  const restart = await repl.send("/refresh", /Type a message/, 60_000);
  assert.match(
    restart,
    new RegExp(
      "Restarting under an extended plan, which adds env PATCHBAY_REFRESH_ROOT " +
        `\\(\\$\\{PATCHBAY_REFRESH_ROOT\\} in ${path}\\)`,
    ),
  );
  // Nothing was said: a new conversation, and the variable is read this time.
  assert.doesNotMatch(restart, /Resuming session/);
  await repl.tmux.waitFor(/2 of 2 servers connected/, { timeoutMs: 60_000 });
  const again = await repl.send("/refresh", "Configuration read again");
  assert.match(again, /no server changed/);
});

Deno.test("/refresh closes a server removed from the file", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  const config = replConfig(box, llm);
  await writeConfig(box, config);
  await using repl = await startRepl(box);
  assert.match(await repl.tmux.screen(), /2 of 2 servers connected/);

  await writeConfig(box, { ...config, mcpServers: { everything: config.mcpServers.everything } });
  const refreshed = await repl.send("/refresh", /1 of 1 server connected/, 60_000);
  assert.match(refreshed, /Configuration read again: 'filesystem' removed\./);
  assert.doesNotMatch(refreshed, /Restarting/);
  assert.match(
    await repl.send("/tools filesystem", "Unknown server"),
    /Unknown server: filesystem/,
  );
  assert.match(await repl.send("/tools everything", "get-sum"), /everything \(\d+ tools\)/);
});

Deno.test("/refresh with a broken file says why and keeps the servers", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  const config = replConfig(box, llm);
  const path = await writeConfig(box, config);
  await using repl = await startRepl(box);
  const filesystemPids = () =>
    processesWith(filesystemEntry()).filter((pid) => processesWith(box.cwd).includes(pid));
  const before = filesystemPids();
  assert.equal(before.length, 1);

  await Deno.writeTextFile(path, '{ "mcpServers": { "everything": ');
  const refused = await repl.send(
    "/refresh",
    /stay as they were[^]*2 of 2 servers connected/,
    60_000,
  );
  assert.match(refused, /JSON decode error/);
  assert.match(refused, /fix the file and \/refresh again/);
  assert.match(refused, /2 of 2 servers connected/);
  assert.deepEqual(filesystemPids(), before, "not reconnected: the same server process");
  assert.match(
    await repl.send('/call everything.echo {"message": "still here"}', "Echo: still here"),
    /Echo: still here/,
  );
});
