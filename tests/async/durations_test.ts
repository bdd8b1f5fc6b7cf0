/**
 * Durations that overflow: timers hold at most 2^31 - 1 ms, and a longer delay used to
 * fire after 1 ms, so `tool_call_timeout: 3000000` failed every call at once with
 * "did not finish within 3000000 s" and a `TimeoutOverflowWarning` on stderr. Every
 * duration of the configuration is bounded, and every timer is guarded.
 *
 * @module
 */

import assert from "node:assert/strict";
import { MAX_DURATION_SECONDS, MAX_TTL_SECONDS } from "../../lib/config/schema.ts";
import { parseConfig } from "../../lib/config/load.ts";
import { startDeadline } from "../../lib/async/wait_clock.ts";
import { createEnvironment } from "../../lib/env.ts";
import { ConfigValidationError } from "../../lib/errors.ts";
import { MAX_TIMER_MS, setTimer, timerDelay } from "../../lib/async/timers.ts";
import { delay } from "../../lib/async/delay.ts";
import { deadline } from "../../lib/async/deadline.ts";
import { configWith, runPatchbay, sandbox, writeConfig } from "../support/cli.ts";
import { fixtureEntry } from "../support/servers.ts";

const OVERFLOWING_MS = 3_000_000_000;

/** Resolves with "later" after `ms`: an event a timer of 35 days must not beat. */
const later = (ms: number) => new Promise<string>((r) => setTimeout(() => r("later"), ms));

Deno.test("config check rejects every duration beyond the maximum, naming field, maximum and unit", async () => {
  await using box = await sandbox();
  await writeConfig(
    box,
    configWith(
      { slow: { command: "node", args: ["server.js"], timeout: 3_000_000 } },
      {
        LLM: { provider: "openai", model: "gpt-4o-mini", timeout: 1e9 },
        AgentConfig: { tool_call_timeout: 3_000_000 },
        Memory: { ttl_seconds: MAX_TTL_SECONDS + 1 },
      },
    ),
  );
  const result = await runPatchbay(box, ["config", "check"]);
  assert.equal(result.code, 1, result.stdout);
  const max = `must be at most ${MAX_DURATION_SECONDS} seconds \\(one day\\)`;
  assert.match(result.stderr, new RegExp(`LLM\\.timeout: ${max}, got the number 1000000000`));
  assert.match(result.stderr, new RegExp(`mcpServers\\.slow\\.timeout: ${max}, got the number`));
  assert.match(
    result.stderr,
    new RegExp(
      `AgentConfig\\.tool_call_timeout: ${max}, got the number 3000000 — ` +
        "durations are in seconds: 3000000 s is 34.7 days; for 3000000 ms write 3000",
    ),
  );
  assert.match(
    result.stderr,
    new RegExp(`Memory\\.ttl_seconds: must be at most ${MAX_TTL_SECONDS} seconds \\(10 years\\)`),
  );
  assert.doesNotMatch(result.stderr, /TimeoutOverflowWarning/);
});

Deno.test("the maximum durations keep every timer below the overflow", () => {
  // The longest wait patchbay derives from a duration: the tool call's SDK timer
  // (timeout + one hour the server may wait on us + the OAuth login allowance).
  const longest = (MAX_DURATION_SECONDS + 3600 + 600) * 1000 + 60_000;
  assert.ok(longest < MAX_TIMER_MS, `${longest} ms must fit a timer`);
  const config = parseConfig(
    JSON.stringify(configWith({}, { AgentConfig: { tool_call_timeout: MAX_DURATION_SECONDS } })),
    "max.json",
    createEnvironment({}),
  );
  assert.equal(config.agent.toolCallTimeoutSeconds, MAX_DURATION_SECONDS);
  assert.throws(
    () =>
      parseConfig(
        JSON.stringify(configWith({}, { AgentConfig: { tool_call_timeout: 86_401 } })),
        "over.json",
        createEnvironment({}),
      ),
    ConfigValidationError,
  );
});

Deno.test("timerDelay clamps to what a timer can hold and refuses NaN", () => {
  assert.equal(timerDelay(OVERFLOWING_MS), MAX_TIMER_MS);
  assert.equal(timerDelay(Infinity), MAX_TIMER_MS);
  assert.equal(timerDelay(-5), 0);
  assert.equal(timerDelay(1500), 1500);
  assert.throws(() => timerDelay(NaN), RangeError);
});

Deno.test("guarded timers given 35 days wait instead of firing at once", async () => {
  // Unguarded, each of these fired after 1 ms and lost the race to "later".
  assert.equal(
    await Promise.race([delay(OVERFLOWING_MS).then(() => "slept"), later(200)]),
    "later",
  );
  assert.equal(await deadline(later(200), OVERFLOWING_MS), "later");
  let expired = false;
  const cancel = startDeadline(OVERFLOWING_MS, () => expired = true);
  await later(200);
  cancel();
  assert.equal(expired, false, "a 35-day deadline expired at once");
  let fired = false;
  const timer = setTimer(() => fired = true, OVERFLOWING_MS);
  await later(200);
  clearTimeout(timer);
  assert.equal(fired, false);
});

Deno.test("a tool call with the maximum tool_call_timeout and server timeout succeeds, with no overflow warning", async () => {
  await using box = await sandbox();
  const entry = fixtureEntry("slowpoke");
  await writeConfig(
    box,
    configWith(
      { slowpoke: { command: entry.command, args: entry.args, timeout: MAX_DURATION_SECONDS } },
      { AgentConfig: { tool_call_timeout: MAX_DURATION_SECONDS } },
    ),
  );
  const result = await runPatchbay(box, ["call", "slowpoke.echo", '{"message": "in time"}']);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout.trim(), "in time");
  assert.doesNotMatch(result.stderr, /TimeoutOverflowWarning|did not finish/);
});
