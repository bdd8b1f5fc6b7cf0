/**
 * `/mcp` in the interactive client (tmux, `deno task start`, server-everything and
 * server-filesystem, the scripted model): the servers with their state, `disable` and
 * `enable` taking effect at once for this session (and surviving `/refresh`), and the
 * per-server tool filters seen from `/tools`, `/call` and the model.
 */

import assert from "node:assert/strict";
import { sandbox, writeConfig } from "../support/cli.ts";
import { replConfig, startRepl } from "../support/repl.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";

const toolNames = (body: { tools?: { function: { name: string } }[] }) =>
  (body.tools ?? []).map((t) => t.function.name);

Deno.test("/mcp lists servers; disable and enable switch one at once for the session", async () => {
  await using box = await sandbox();
  await using llm = await startScriptedLlm();
  const config = replConfig(box, llm);
  Object.assign(config.mcpServers.everything, { exclude_tools: ["get-env"] });
  await writeConfig(box, config);
  await using repl = await startRepl(box);

  const listed = await repl.send("/mcp", "switches one for this session");
  assert.match(listed, /everything\s+connected · 16 tools \(1 not offered by include_tools/);
  assert.match(listed, /filesystem\s+connected · 14 tools/);

  const tools = await repl.send("/tools", /not offered by its include_tools \/ exclude_tools/);
  assert.match(
    tools,
    /everything: 1 tool not offered by its include_tools \/ exclude_tools \(get-env\)/,
  );
  const call = await repl.send("/call everything.get-env", /excluded by/);
  assert.match(call, /Tool execution failed: everything\/get-env/);
  assert.match(call, /excluded by mcpServers\.everything\.exclude_tools \("get-env"\)/);

  const off = await repl.send("/mcp disable filesystem", /Disabled filesystem now/);
  assert.match(off, /this session only; servers_config\.json is unchanged/);
  const after = await repl.send("/mcp", "switches one for this session");
  assert.match(after, /filesystem\s+disabled for this session/);
  llm.enqueue({ text: "First." });
  await repl.send("hello", "First.");
  const offered = toolNames(llm.requests.at(-1)!.body);
  assert.ok(offered.includes("everything__echo"), offered.join(", "));
  assert.ok(!offered.some((name) => name.startsWith("filesystem__")), offered.join(", "));
  assert.ok(!offered.includes("everything__get-env"), offered.join(", "));

  // The session's switch holds across a /refresh that reads the file again.
  await repl.send("/refresh", /servers? connected/);
  const still = await repl.send("/servers", "switches one for this session");
  assert.match(still, /filesystem\s+disabled for this session/);

  const on = await repl.send("/mcp enable filesystem", /Enabled filesystem/, 60_000);
  assert.match(on, /Enabled filesystem now: connected, 14 tools offered/);
  llm.enqueue({ text: "Second." });
  await repl.send("hello again", "Second.");
  assert.ok(toolNames(llm.requests.at(-1)!.body).some((name) => name.startsWith("filesystem__")));

  const unknown = await repl.send("/mcp disable filesytem", /Unknown server/);
  assert.match(unknown, /did you mean 'filesystem'/);
  const wrong = await repl.send("/mcp stop filesystem", /Usage: \/mcp/);
  assert.match(wrong, /\/mcp alone lists the servers/);

  await repl.send("/mcp disable everything", /Disabled everything now/);
  const away = await repl.send(
    "/resource everything demo://resource/static/document/architecture.md",
    /remedy:/,
  );
  assert.match(away, /it was disabled for this session \(\/mcp disable\)/);
  assert.match(away, /\/mcp enable everything connects it again/);
  // Enabled again, it counts the tools it offers after its filter, not all it lists.
  const back = await repl.send("/mcp enable everything", /Enabled everything/, 60_000);
  assert.match(
    back,
    /Enabled everything now: connected, 16 tools offered \(1 not offered by include_tools \/ exclude_tools\)/,
  );
});
