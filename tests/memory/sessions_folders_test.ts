/**
 * Conversations by folder, through the real entry point: `patchbay sessions` lists the
 * current folder's (`--all` every folder's), `--resume` continues the most recent of the
 * folder, a one-shot run that never got an answer leaves nothing behind, and leaving the
 * client says how to come back.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { RedisServer } from "../support/redis.ts";

Deno.test("sessions: this folder's by default, --all for every folder; unanswered runs are not kept", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm({
    replies: [
      { text: "Here." },
      { text: "There." },
      { status: 401, errorMessage: "Incorrect API key provided" },
    ],
  });
  const config = await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: {},
  });
  const other = join(box.home, "other");
  await Deno.mkdir(other);
  const here = await Deno.realPath(box.cwd);

  const first = await runPatchbay(box, ["--config", config, "run", "asked here"]);
  assert.equal(first.code, 0, first.stderr);
  const second = await runPatchbay(box, ["--config", config, "run", "asked there"], {
    cwd: other,
  });
  assert.equal(second.code, 0, second.stderr);
  const failed = await runPatchbay(box, ["--config", config, "run", "never answered"]);
  assert.equal(failed.code, 1);
  assert.match(failed.stderr, /Authentication failed/);

  const listed = await runPatchbay(box, ["--config", config, "sessions", "--json"]);
  assert.equal(listed.code, 0, listed.stderr);
  const sessions = JSON.parse(listed.stdout).sessions;
  assert.deepEqual(sessions.map((s: { title: string }) => s.title), ["asked here"]);
  assert.equal(sessions[0].folder, here);
  const text = await runPatchbay(box, ["--config", config, "sessions"]);
  assert.match(text.stdout, /1 conversation of other folders not shown: --all lists them\./);
  const all = await runPatchbay(box, ["--config", config, "sessions", "--all", "--json"]);
  const titles = JSON.parse(all.stdout).sessions.map((s: { title: string }) => s.title);
  assert.deepEqual(titles.sort(), ["asked here", "asked there"]);
  // As text, --all says which folder each conversation belongs to.
  const allText = await runPatchbay(box, ["--config", config, "sessions", "--all"]);
  assert.equal(allText.code, 0, allText.stderr);
  assert.match(allText.stdout, /^ID +LAST MESSAGE +STARTED +TURNS +MODEL +FOLDER +TITLE$/m);
  const tilde = (folder: string) => `~${folder.slice(box.home.length)}`;
  assert.match(allText.stdout, new RegExp(`scripted-model +${tilde(here)} +asked here$`, "m"));
  assert.match(
    allText.stdout,
    new RegExp(`scripted-model +${tilde(await Deno.realPath(other))} +asked there$`, "m"),
  );
  // A folder without a configuration: the conversations are listed without a word about
  // the example configuration, which has nothing to do with them.
  const bare = await runPatchbay(box, ["sessions"], { cwd: other });
  assert.equal(bare.code, 0, bare.stderr);
  assert.match(bare.stdout, /asked there/);
  assert.doesNotMatch(bare.stderr, /example configuration/);

  // --resume continues this folder's most recent, though another folder's is more recent.
  const resumed = await runPatchbay(box, ["--config", config, "--resume"], { stdin: "" });
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.match(resumed.stderr, new RegExp(`Resuming session ${sessions[0].id} \\(2 messages\\)`));
  assert.match(
    resumed.stderr,
    new RegExp(`Resume this conversation with: patchbay --resume ${sessions[0].id}`),
  );
  const nowhere = join(box.home, "nowhere");
  await Deno.mkdir(nowhere);
  const none = await runPatchbay(box, ["--config", config, "--resume"], {
    cwd: nowhere,
    stdin: "",
  });
  assert.equal(none.code, 1);
  assert.match(none.stderr, /No conversation to resume in this folder/);
  assert.match(none.stderr, /patchbay sessions --all/);
});

Deno.test("sessions by folder: a folder with a space, and a link to it, are one folder (its real path)", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using llm = await startScriptedLlm({ replies: [{ text: "Here." }] });
  const config = await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: {},
  });
  const spaced = join(box.home, "my project");
  await Deno.mkdir(spaced);
  const link = join(box.home, "link to it");
  await Deno.symlink(spaced, link);
  const asked = await runPatchbay(box, ["--config", config, "run", "asked via the link"], {
    cwd: link,
  });
  assert.equal(asked.code, 0, asked.stderr);
  for (const cwd of [spaced, link]) {
    const listed = await runPatchbay(box, ["--config", config, "sessions", "--json"], { cwd });
    const sessions = JSON.parse(listed.stdout).sessions;
    assert.deepEqual(sessions.map((s: { title: string }) => s.title), ["asked via the link"]);
    assert.equal(sessions[0].folder, await Deno.realPath(spaced));
  }
});

Deno.test("sessions by folder in Redis: the folder is kept in the conversation's metadata", async () => {
  await using box = await sandbox({ LLM_API_KEY: "test-key" });
  await using redis = await RedisServer.start();
  await using llm = await startScriptedLlm({ replies: [{ text: "Here." }, { text: "There." }] });
  const config = await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: {},
  });
  const other = join(box.home, "other");
  await Deno.mkdir(other);
  const env = { env: redis.env };
  assert.equal((await runPatchbay(box, ["--config", config, "run", "asked here"], env)).code, 0);
  const there = await runPatchbay(box, ["--config", config, "run", "asked there"], {
    ...env,
    cwd: other,
  });
  assert.equal(there.code, 0, there.stderr);
  const listed = await runPatchbay(box, ["--config", config, "sessions", "--json"], env);
  assert.equal(listed.code, 0, listed.stderr);
  const [only, ...rest] = JSON.parse(listed.stdout).sessions;
  assert.deepEqual([only.title, only.folder, rest.length], [
    "asked here",
    await Deno.realPath(box.cwd),
    0,
  ]);
  const all = await runPatchbay(box, ["--config", config, "sessions", "--all", "--json"], env);
  assert.equal(JSON.parse(all.stdout).sessions.length, 2);
});
