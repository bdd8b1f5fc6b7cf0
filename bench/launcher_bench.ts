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
 *   the plan (`patchbay permissions --json`) before starting the client;
 * - the issue-36 comparison, timed by hand in alternating order (medians printed before
 *   Deno's table): `tools --json` through the launcher against the plain SDK client
 *   (`bench/sdk_client.mjs`, Node, one server-everything), and `--version` through the
 *   launcher against an empty Deno program; and `tools --json` against the raw JSON-RPC
 *   floor (`bench/raw_floor.mjs`: spawn, initialize, tools/list, exit; no SDK);
 * - the hand-over (`lib/transports/handoff.ts`): `tools --json` through the launcher with and
 *   without the start task's loopback grant (without it, the client starts the server
 *   itself), on a server that needs a second more to boot, as an `npx` server does.
 *
 * Run: `deno task bench` (or `deno bench --allow-all bench/launcher_bench.ts`).
 *
 * @module
 */

import { join } from "node:path";
import manifest from "../deno.json" with { type: "json" };
import { benchSandbox } from "../tests/support/bench_sandbox.ts";
import { runCommand } from "../tests/support/cli.ts";
import { DENO, NODE, testDepsDir } from "../tests/support/deps.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const LAUNCHER_FLAGS = manifest.tasks.start.split(/\s+/).filter((w) => w.startsWith("--"));

const { home, env, config } = await benchSandbox();
const plans = join(home, ".local", "state", "patchbay", "launch");

async function run(
  args: string[],
  extraEnv: Record<string, string> = {},
  program = DENO,
): Promise<string> {
  const { code, stdout, stderr } = await runCommand(program, args, {
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

/** Counted rounds of the hand-timed comparison. */
const ROUNDS = 10;

/**
 * Each pair of `cases` timed in alternating order over {@linkcode ROUNDS} rounds (ABBA, a
 * first round uncounted), so that a load that drifts weighs on both sides; prints the
 * medians and their ratio.
 */
async function compare(cases: [string, () => Promise<unknown>][]): Promise<void> {
  const times = cases.map(() => [] as number[]);
  for (let round = 0; round <= ROUNDS; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const i of order) {
      const started = performance.now();
      await cases[i][1]();
      if (round > 0) times[i].push(performance.now() - started);
    }
  }
  const median = (list: number[]) => {
    const sorted = list.toSorted((a, b) => a - b);
    return (sorted[(sorted.length - 1) >> 1] + sorted[sorted.length >> 1]) / 2;
  };
  const [base, ours] = times.map(median);
  console.log(
    `${cases[1][0]}: median ${ours.toFixed(0)} ms; ${cases[0][0]}: median ${base.toFixed(0)} ms; ` +
      `ratio ${(ours / base).toFixed(2)} (${ROUNDS} alternating runs each)`,
  );
}

const SDK_CLIENT = join(ROOT, "bench", "sdk_client.mjs");
const RAW_FLOOR = join(ROOT, "bench", "raw_floor.mjs");
const EMPTY = join(home, "empty.ts");
await Deno.writeTextFile(EMPTY, "");
await compare([
  [
    "plain SDK client (Node), one stdio server",
    () => run([SDK_CLIENT, testDepsDir(), "1"], {}, NODE),
  ],
  ["through the launcher: tools --json, one stdio server", () => launcher(tools)],
]);
await compare([
  [
    "the raw JSON-RPC floor (no SDK), one stdio server",
    () => run([RAW_FLOOR, testDepsDir()], {}, NODE),
  ],
  ["through the launcher: tools --json, one stdio server", () => launcher(tools)],
]);
await compare([
  ["an empty Deno program", () => run(["run", "--no-config", EMPTY])],
  ["through the launcher: --version", () => launcher(["--version"])],
]);
const slow = join(home, "slow_server.json");
const entry = JSON.parse(await Deno.readTextFile(config));
const server = entry.mcpServers.everything;
entry.mcpServers.everything = {
  command: "/bin/sh",
  args: ["-c", `sleep 1; exec ${[server.command, ...server.args].join(" ")}`],
};
await Deno.writeTextFile(slow, JSON.stringify(entry));
const slowTools = ["--config", slow, "tools", "--json"];
await launcher(slowTools); // Its plan computed once, as for the other cases.
const HANDOFF_GRANT = "--allow-net=127.0.0.1:0";
await compare([
  [
    "a server booting 1 s late, the client starting it (no hand-over)",
    () =>
      run([
        "run",
        ...LAUNCHER_FLAGS.filter((f) => f !== HANDOFF_GRANT).map((f) =>
          f.replaceAll("$HOME", home)
        ),
        join(ROOT, "launch.ts"),
        ...slowTools,
      ]),
  ],
  ["the same, started by the launcher and handed over", () => launcher(slowTools)],
]);

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
