/**
 * Two processes on one conversation: the process that has a conversation open holds a
 * lease on it in the store (embedded files or a real redis-server), renewed while it
 * runs and expiring when it stops; a second `--resume` is told which process holds it, and
 * at a terminal may continue it as a new branch. Nothing is written to the held
 * conversation by the second process, and nothing is lost (docs/security-limits.md).
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createEnvironment } from "../../lib/env.ts";
import { FileStore } from "../../lib/memory/file_store.ts";
import type { LeaseHolder, LeaseKeeper } from "../../lib/memory/lease.ts";
import { openMemory } from "../../lib/memory/mod.ts";
import { runPatchbay, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { RedisServer } from "../support/redis.ts";
import { PATCHBAY, type Repl, startRepl, terminalEnv } from "../support/repl.ts";
import { TmuxSession } from "../support/tmux.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { tempDir } from "../support/temp_dir.ts";

const holder = (pid: number): LeaseHolder => ({
  token: crypto.randomUUID(),
  pid,
  since: new Date().toISOString(),
});

async function leaseRules(keeper: LeaseKeeper) {
  const first = holder(111);
  const second = holder(222);
  assert.deepEqual(await keeper.acquire("k3f9x2m7q1ab", first, 400), { acquired: true });
  const refused = await keeper.acquire("k3f9x2m7q1ab", second, 400);
  assert.equal(refused.acquired, false);
  assert.equal(!refused.acquired && refused.holder.pid, 111, "the holder is named");
  assert.equal(await keeper.renew("k3f9x2m7q1ab", first, 400), true);
  assert.equal(await keeper.renew("k3f9x2m7q1ab", second, 400), false, "not the holder's");
  await keeper.release("k3f9x2m7q1ab", second);
  assert.equal((await keeper.acquire("k3f9x2m7q1ab", second, 400)).acquired, false);
  // The holder stops renewing (it died): the lease expires and the other one gets it.
  await new Promise((resolve) => setTimeout(resolve, 600));
  assert.deepEqual(await keeper.acquire("k3f9x2m7q1ab", second, 400), { acquired: true });
  assert.equal(await keeper.renew("k3f9x2m7q1ab", first, 400), false, "the dead holder lost it");
  await keeper.release("k3f9x2m7q1ab", second);
  assert.deepEqual(await keeper.acquire("k3f9x2m7q1ab", first, 400), { acquired: true });
}

Deno.test("embedded store: a lease names its holder, expires without renewal, and only its holder renews it", async () => {
  await using dir = await tempDir();
  await leaseRules(new FileStore({ dir: dir.path }).leases);
});

Deno.test("Redis: a lease names its holder, expires without renewal, and only its holder renews it", async () => {
  await using dir = await tempDir();
  await using redis = await RedisServer.start();
  const memory = await openMemory(
    { backend: "redis", keyPrefix: "patchbay" },
    createEnvironment(redis.env),
    { dataDir: dir.path },
  );
  try {
    await memory.sessions();
    await leaseRules(memory.store!.leases!);
  } finally {
    await memory.close();
  }
});

/** The pid of the client process of a REPL. */
async function clientPid(repl: Repl): Promise<number> {
  const line = (await repl.leftoverProcesses()).find((l) => / \S*main\.ts( |$)/.test(l));
  assert.ok(line, "the client process");
  return Number(line.split(" ")[0]);
}

async function twoProcesses(
  box: Sandbox,
  stored: (id: string) => Promise<string>,
  env: Record<string, string> = {},
) {
  await using llm = await startScriptedLlm({
    replies: [{ text: "First answer." }, { text: "Branch answer." }, { text: "Later answer." }],
  });
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: llm.baseUrl },
    mcpServers: {},
  });
  const first = await startRepl(box, { env });
  await first.send("remember the blue folder", "First answer.");
  const pid = await clientPid(first);

  // A script: a clear error naming the holder; the model is not asked.
  const script = await runPatchbay(box, ["run", "what did I say?", "--resume"], {
    env: { LLM_API_KEY: "test-key", ...env },
  });
  assert.equal(script.code, 1, script.stdout);
  const held = /Conversation (\w+) is open in another patchbay/.exec(script.stderr);
  assert.ok(held, script.stderr);
  const id = held[1];
  assert.match(script.stderr, new RegExp(`patchbay process ${pid} has had it open since`));
  assert.match(script.stderr, /offers to continue it as a new branch/);
  assert.equal(llm.requests.length, 1, "the second process sent nothing");

  // A person: offered a new branch, which starts from a copy of the conversation.
  await using second = await TmuxSession.start({
    command: [...PATCHBAY, "--resume", id],
    env: terminalEnv(box, env),
    cwd: box.cwd,
    width: 160,
    height: 50,
  });
  await second.waitFor(`process ${pid}`);
  await second.waitFor("Continue it here as a new branch");
  await second.press("y");
  const branched = /Branched conversation \w+ as (\w+)/.exec(
    await second.waitFor(/Branched conversation \w+ as \w+/),
  );
  const branch = branched![1];
  await second.waitFor("Type a message");
  await second.submit("a second thought");
  await second.waitFor("Branch answer.");

  const original = await stored(id);
  assert.match(original, /remember the blue folder/);
  assert.match(original, /First answer\./);
  assert.doesNotMatch(original, /a second thought/, "the held conversation is untouched");
  const copy = await stored(branch);
  assert.match(copy, /remember the blue folder[\s\S]*First answer\.[\s\S]*a second thought/);

  // Once the first process ends, its lease is gone: the conversation resumes at once.
  await first.tmux.press("C-d");
  assert.equal(await first.tmux.exitCode(), 0);
  const later = await runPatchbay(box, ["run", "--resume", id, "and now?"], {
    env: { LLM_API_KEY: "test-key", ...env },
  });
  assert.equal(later.code, 0, later.stderr);
  assert.match(later.stdout, /Later answer\./);
  await first[Symbol.asyncDispose]();
}

Deno.test("embedded store: a second --resume is told who holds the conversation; a script gets an error, a person a branch", async () => {
  await using box = await sandbox();
  await twoProcesses(
    box,
    (id) => Deno.readTextFile(join(box.home, ".local/share/patchbay/sessions", `${id}.jsonl`)),
  );
});

Deno.test("Redis: a second --resume is told who holds the conversation; a script gets an error, a person a branch", async () => {
  await using dir = await tempDir();
  await using redis = await RedisServer.start();
  await using box = await sandbox();
  await twoProcesses(box, async (id) => {
    const memory = await openMemory(
      { backend: "redis", keyPrefix: "patchbay" },
      createEnvironment(redis.env),
      { dataDir: dir.path },
    );
    try {
      return JSON.stringify((await memory.load(id)).messages);
    } finally {
      await memory.close();
    }
  }, redis.env);
});
