/**
 * The launcher's reading of the command line and its memory of plans: what it takes for
 * itself, which files the plan depends on, and when a remembered plan is stale.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { parseLaunchArgs } from "../../lib/permissions/launch_args.ts";
import { ROOT } from "../../commands/_declarations.ts";
import {
  CACHE_FORMAT,
  type CachedPlan,
  currentInputs,
  stillValid,
} from "../../lib/permissions/plan_cache.ts";
import { tempDir } from "../support/temp_dir.ts";

Deno.test("the launcher takes --unrestricted for itself and reads the file options in every spelling", () => {
  const clientArgs = [
    "-c",
    "a.json",
    "--env-file=my.env",
    "tools",
    "--log-file",
    "x.log",
    "--json",
  ];
  const parsed = parseLaunchArgs(["--unrestricted", ...clientArgs], ROOT);
  assert.deepEqual(parsed.clientArgs, clientArgs);
  assert.equal(parsed.unrestricted, true);
  assert.deepEqual(parsed.files, { config: "a.json", envFile: "my.env", logFile: "x.log" });
  assert.equal(parsed.informational, false);
  assert.deepEqual(parseLaunchArgs(["-cb.json"], ROOT).files, { config: "b.json" });
  // After `--`, words belong to the prompt: not read, not taken.
  const prompt = parseLaunchArgs(["run", "--", "--unrestricted", "--config", "z"], ROOT);
  assert.equal(prompt.unrestricted, false);
  assert.deepEqual(prompt.files, {});
  assert.deepEqual(prompt.clientArgs, ["run", "--", "--unrestricted", "--config", "z"]);
});

Deno.test("--version and --help need no plan; permissions computes it under the broad flags", () => {
  assert.equal(parseLaunchArgs(["--version"], ROOT).informational, true);
  assert.equal(parseLaunchArgs(["-h"], ROOT).informational, true);
  assert.equal(parseLaunchArgs(["help"], ROOT).informational, true);
  assert.equal(parseLaunchArgs(["run", "--version"], ROOT).informational, false);
  assert.equal(parseLaunchArgs(["tools", "--help"], ROOT).informational, true);
  assert.equal(parseLaunchArgs(["mcp", "list", "-h"], ROOT).informational, true);
  assert.equal(parseLaunchArgs(["mcp"], ROOT).informational, true);
  assert.equal(parseLaunchArgs(["mcp", "list"], ROOT).informational, false);
  assert.equal(parseLaunchArgs(["run", "--", "--help"], ROOT).informational, false);
  assert.equal(parseLaunchArgs(["--config", "c.json", "permissions"], ROOT).planning, true);
  assert.equal(parseLaunchArgs(["run", "permissions"], ROOT).planning, false);
});

Deno.test("a remembered plan is stale once the configuration, .env or a variable it reads changes", async () => {
  await using tmp = await tempDir("patchbay-plan-cache-");
  const dir = tmp.path;
  try {
    const config = join(dir, "servers_config.json");
    const env = join(dir, ".env");
    await Deno.writeTextFile(config, "{}");
    const variable = "PATCHBAY_PLAN_CACHE_TEST";
    Deno.env.set(variable, "one");
    const names = { files: [config, env], stats: [dir], env: [variable] };
    const cached: CachedPlan = {
      format: CACHE_FORMAT,
      inputs: currentInputs(names),
      plan: { flags: ["--no-prompt"], grants: [], all_env: null, notes: [] },
    };
    assert.equal(stillValid(cached), true);
    await Deno.writeTextFile(env, "A=1\n"); // .env appears
    assert.equal(stillValid(cached), false);
    cached.inputs = currentInputs(names);
    assert.equal(stillValid(cached), true);
    await Deno.writeTextFile(config, '{"mcpServers": {}}');
    assert.equal(stillValid(cached), false);
    cached.inputs = currentInputs(names);
    Deno.env.set(variable, "two");
    assert.equal(stillValid(cached), false);
    cached.inputs = currentInputs(names);
    Deno.env.delete(variable);
    assert.equal(stillValid(cached), false);
  } finally {
    Deno.env.delete("PATCHBAY_PLAN_CACHE_TEST");
  }
});

Deno.test("--trace is a file the plan depends on; trace show/stats read only the file named", () => {
  assert.deepEqual(parseLaunchArgs(["--trace", "t.jsonl", "tools"], ROOT).files, {
    trace: "t.jsonl",
  });
  assert.deepEqual(parseLaunchArgs(["--trace=t.jsonl"], ROOT).files, { trace: "t.jsonl" });
  assert.equal(parseLaunchArgs(["--trace", "t.jsonl", "tools"], ROOT).traceReading, undefined);
  assert.equal(parseLaunchArgs(["trace", "show", "a.jsonl"], ROOT).traceReading, "a.jsonl");
  assert.equal(
    parseLaunchArgs(["trace", "show", "--server", "s", "b.jsonl", "--errors"], ROOT).traceReading,
    "b.jsonl",
  );
  assert.equal(
    parseLaunchArgs(["-c", "x.json", "trace", "stats", "c.jsonl"], ROOT).traceReading,
    "c.jsonl",
  );
  assert.equal(parseLaunchArgs(["trace", "show"], ROOT).traceReading, undefined);
  assert.equal(parseLaunchArgs(["run", "trace", "show", "x"], ROOT).traceReading, undefined);
});

Deno.test("config check is told apart: it reads everywhere and runs nothing", () => {
  assert.equal(parseLaunchArgs(["config", "check"], ROOT).configChecking, true);
  assert.equal(
    parseLaunchArgs(["-c", "x.json", "config", "check", "--json"], ROOT).configChecking,
    true,
  );
  assert.equal(parseLaunchArgs(["config"], ROOT).configChecking, undefined);
  assert.equal(parseLaunchArgs(["run", "config", "check"], ROOT).configChecking, undefined);
  assert.equal(parseLaunchArgs(["tools"], ROOT).configChecking, undefined);
});
