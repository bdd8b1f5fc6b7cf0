/**
 * What the launcher adds to start-up (`deno task bench`): the same command run by the
 * client directly, under the flags the launcher would give it, and through the launcher
 * (`deno run <the start task's flags> launch.ts`), as `deno task start` and the installed
 * `patchbay` run it.
 *
 * - `--version`: the launcher needs no plan for it (the client gets no permission at all);
 * - `tools --json` with one stdio server (server-everything): the launcher checks its
 *   remembered plan (the configuration, .env and variables unchanged) and starts the client;
 * - the same on a first start, or after the configuration changed: the launcher computes
 *   the plan (`patchbay permissions --json`) before starting the client.
 *
 * Run: `deno task bench` (or `deno bench --allow-all bench/launcher_bench.ts`).
 *
 * @module
 */

import { join } from "node:path";
import manifest from "../deno.json" with { type: "json" };
import { benchSandbox } from "../tests/support/bench_sandbox.ts";
import { runCommand } from "../tests/support/cli.ts";
import { DENO } from "../tests/support/deps.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const LAUNCHER_FLAGS = manifest.tasks.start.split(/\s+/).filter((w) => w.startsWith("--"));

const { home, env, config } = await benchSandbox();
const plans = join(home, ".local", "state", "patchbay", "launch");

async function run(args: string[], extraEnv: Record<string, string> = {}): Promise<string> {
  const { code, stdout, stderr } = await runCommand(DENO, args, {
    cwd: home,
    env: { ...env, ...extraEnv },
  });
  if (code !== 0) throw new Error(`${args.join(" ")} failed: ${stderr}`);
  return stdout;
}

const launcher = (args: string[]) =>
  run([
    "run",
    ...LAUNCHER_FLAGS.map((f) => f.replaceAll("$HOME", home)),
    join(ROOT, "launch.ts"),
    ...args,
  ]);

// The plan the launcher gives the client for this configuration, as it prints it.
const { flags } = JSON.parse(await launcher(["permissions", "--json"])) as { flags: string[] };
const client = (clientFlags: string[], args: string[]) =>
  run(
    ["run", ...clientFlags, "--config", join(ROOT, "deno.json"), join(ROOT, "main.ts"), ...args],
    { PATCHBAY_LAUNCHER: "narrow" },
  );
const tools = ["--config", config, "tools", "--json"];

Deno.bench("client directly: --version", { group: "version", baseline: true }, async () => {
  await client(["--no-prompt"], ["--version"]);
});
Deno.bench("through the launcher: --version", { group: "version" }, async () => {
  await launcher(["--version"]);
});

Deno.bench("client directly under the plan: tools --json", {
  group: "tools",
  baseline: true,
}, async () => {
  await client(flags, tools);
});
Deno.bench("through the launcher, plan remembered: tools --json", { group: "tools" }, async () => {
  await launcher(tools);
});
Deno.bench("through the launcher, plan computed (first start): tools --json", {
  group: "tools",
}, async () => {
  await Deno.remove(plans, { recursive: true }).catch(() => {});
  await launcher(tools);
});

globalThis.addEventListener("unload", () => {
  Deno.removeSync(home, { recursive: true });
});
