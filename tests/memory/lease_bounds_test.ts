/**
 * A lease read from a store is bounded (docs/security-limits.md): whatever its record says
 * (an expiry in 2100, a Redis key that never expires), it holds a conversation at most the
 * lease's term, 30 s, past its last renewal; and one whose holder ran on this machine and
 * has ended is taken over at once. With the hostile records of
 * `tests/fixtures/hostile_leases.ts`, on the embedded store and a real redis-server,
 * through `deno task start run --resume`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runPatchbay, type Sandbox, sandbox, writeConfig } from "../support/cli.ts";
import { RedisServer } from "../support/redis.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { heldByEndedProcess, heldElsewhere, type LeaseRecord } from "../fixtures/hostile_leases.ts";

/** The lease term (lib/memory/lease.ts LEASE_TTL_MS), in seconds. */
const TERM_SECONDS = 30;

/** Runs patchbay `run` in `box` and returns the conversation it stored. */
async function converse(box: Sandbox, env: Record<string, string>, args: string[]) {
  const run = await runPatchbay(box, ["run", "--json", ...args], {
    env: { LLM_API_KEY: "test-key", ...env },
  });
  const done = run.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l))
    .find((e) => e.type === "done");
  return { ...run, session: done?.session as string | undefined };
}

/** Asserts `resume` was refused for a held conversation, free within the term at most. */
function assertHeldBriefly(resume: { code: number; stdout: string; stderr: string }): void {
  assert.equal(resume.code, 1, resume.stdout);
  const said = resume.stdout + resume.stderr;
  assert.match(said, /is open in another patchbay/);
  const within = /free within (\d+) s/.exec(said);
  assert.ok(within, said);
  assert.ok(Number(within[1]) <= TERM_SECONDS, `locked for ${within[1]} s`);
}

/** A stored conversation in `box`, and how to resume it. */
async function storedConversation(box: Sandbox, env: Record<string, string>, baseUrl: string) {
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "scripted-model", base_url: baseUrl },
    mcpServers: {},
  });
  const first = await converse(box, env, ["remember the blue folder"]);
  assert.equal(first.code, 0, first.stderr);
  const id = first.session!;
  return { id, resume: () => converse(box, env, ["--resume", id, "and now?"]) };
}

Deno.test("embedded store: a lease until 2100 holds for the term at most; an ended holder here loses it at once", async () => {
  await using llm = await startScriptedLlm({ fallback: () => ({ text: "answered" }) });
  await using box = await sandbox();
  const { id, resume } = await storedConversation(box, {}, llm.baseUrl);
  const path = join(box.home, ".local/share/patchbay/sessions", `${id}.lease`);
  const write = (lease: LeaseRecord) =>
    Deno.writeTextFile(path, JSON.stringify(lease), { mode: 0o600 });

  // Another machine's holder, until 2100, renewed just now: refused, for the term at most.
  await write(heldElsewhere());
  assertHeldBriefly(await resume());

  // The same record, last written longer ago than the term: nobody renews it any more.
  const then = new Date(Date.now() - 2 * TERM_SECONDS * 1000);
  await Deno.utime(path, then, then);
  const stale = await resume();
  assert.equal(stale.code, 0, stale.stdout + stale.stderr);

  // A holder of this machine whose process has ended: taken over at once.
  await write(await heldByEndedProcess());
  const taken = await resume();
  assert.equal(taken.code, 0, taken.stdout + taken.stderr);
  assert.equal(taken.session, id, "the same conversation went on");
});

Deno.test("Redis: a lease key until 2100 or without expiry holds for the term at most; an ended holder here loses it at once", async () => {
  await using llm = await startScriptedLlm({ fallback: () => ({ text: "answered" }) });
  await using redis = await RedisServer.start();
  await using box = await sandbox();
  const { id, resume } = await storedConversation(box, redis.env, llm.baseUrl);
  const key = `patchbay:v1:session:{${id}}:meta:lease`;
  const pttl = async () => Number((await redis.cli("PTTL", key)).trim());
  const bounded = async () => {
    const left = await pttl();
    assert.ok(left > 0 && left <= TERM_SECONDS * 1000, `the key lives ${left} ms more`);
  };

  // Another machine's holder in a key that never expires: refused for the term at most,
  // and the key's own expiry set back to the term.
  await redis.cli("SET", key, JSON.stringify(heldElsewhere()));
  assert.equal(await pttl(), -1);
  assertHeldBriefly(await resume());
  await bounded();

  // The same, expiring in 2100.
  const until2100 = heldElsewhere();
  await redis.cli("SET", key, JSON.stringify(until2100), "PXAT", String(until2100.expiresAt));
  assertHeldBriefly(await resume());
  await bounded();

  // A holder of this machine whose process has ended: taken over at once.
  const ended = await heldByEndedProcess();
  await redis.cli("SET", key, JSON.stringify(ended), "PXAT", String(ended.expiresAt));
  const taken = await resume();
  assert.equal(taken.code, 0, taken.stdout + taken.stderr);
  assert.equal(taken.session, id, "the same conversation went on");
});
