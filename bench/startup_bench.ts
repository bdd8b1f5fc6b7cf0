/**
 * Start-up and footprint of the real program (`deno task bench`), run the way a user
 * runs it: `deno run` with the start task's permission flags on main.ts.
 *
 * - `--version`: the floor of every invocation (Deno start, the entry point);
 * - `config check`, `sessions`: plus the command tree, reading .env and validating the
 *   configuration (and, for `sessions`, opening the embedded store);
 * - `tools --json` with one and with five stdio servers (server-everything): connect,
 *   list, close, each against a plain SDK client doing the same in the same run
 *   (`bench/sdk_client.mjs`: Node, the SDK's own `Client` and stdio transport);
 * - resident memory of an interactive session with five servers connected and the prompt
 *   shown (VmRSS and VmHWM from /proc, printed once; Deno.bench only times).
 *
 * Each timed benchmark also prints its median over its runs (Deno.bench prints the
 * average and percentiles).
 *
 * @module
 */

import { join } from "node:path";
import manifest from "../deno.json" with { type: "json" };
import { certificateEnv, proxyEnv } from "../tests/support/cli.ts";
import { DENO, everythingEntry, NODE, testDepsDir } from "../tests/support/deps.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const FLAGS = manifest.tasks.start.split(/\s+/).filter((w) => w.startsWith("--"));

const home = await Deno.makeTempDir({ prefix: "patchbay-bench-" });
const config = join(home, "servers_config.json");
await Deno.writeTextFile(
  config,
  JSON.stringify({
    LLM: { provider: "openai-compatible", model: "m", base_url: "http://127.0.0.1:9/v1" },
    mcpServers: { everything: { command: NODE, args: [everythingEntry(), "stdio"] } },
  }),
);
const fiveServers = join(home, "five.json");
await Deno.writeTextFile(
  fiveServers,
  JSON.stringify({
    LLM: { provider: "openai-compatible", model: "m", base_url: "http://127.0.0.1:9/v1" },
    mcpServers: Object.fromEntries(
      Array.from(
        { length: 5 },
        (_, i) => [`everything${i}`, { command: NODE, args: [everythingEntry(), "stdio"] }],
      ),
    ),
  }),
);
const SDK_CLIENT = join(ROOT, "bench", "sdk_client.mjs");
/** Runs of each benchmark that starts servers. */
const SERVER_RUNS = 10;

const env = {
  HOME: home,
  PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
  DENO_DIR: Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME")!, ".cache", "deno"),
  // Deno reaches the npm registry (if it must) the way this process does; loopback never
  // goes through a proxy.
  ...certificateEnv(),
  ...proxyEnv(),
  NO_COLOR: "1",
};

function command(args: string[], stdin: "null" | "piped" = "null") {
  return new Deno.Command(DENO, {
    args: ["run", ...FLAGS.map((f) => f.replaceAll("$HOME", home)), join(ROOT, "main.ts"), ...args],
    env,
    clearEnv: true,
    cwd: home,
    stdin,
    stdout: "piped",
    stderr: "piped",
  });
}

/** Wall times (ms) of each benchmark's runs, for the medians printed at the end. */
const samples = new Map<string, number[]>();

async function timed(name: string, work: () => Promise<void>): Promise<void> {
  const started = performance.now();
  await work();
  samples.set(name, [...samples.get(name) ?? [], performance.now() - started]);
}

async function run(args: string[]): Promise<void> {
  const { code, stderr } = await command(args).output();
  if (code !== 0) {
    throw new Error(`patchbay ${args.join(" ")} failed: ${new TextDecoder().decode(stderr)}`);
  }
}

async function sdkClient(servers: number): Promise<void> {
  const { code, stdout, stderr } = await new Deno.Command(NODE, {
    args: [SDK_CLIENT, testDepsDir(), String(servers)],
    env,
    clearEnv: true,
    cwd: home,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(stdout);
  if (code !== 0 || !text.includes('"tools"')) {
    throw new Error(`the SDK client failed: ${new TextDecoder().decode(stderr)}`);
  }
}

function bench(name: string, group: string, work: () => Promise<void>, baseline = false) {
  const servers = group !== "start-up";
  Deno.bench({
    name,
    group,
    baseline,
    ...(servers ? { n: SERVER_RUNS, warmup: 1 } : {}),
    fn: () => timed(name, work),
  });
}

bench("patchbay --version", "start-up", () => run(["--version"]), true);
bench("patchbay config check", "start-up", () => run(["--config", config, "config", "check"]));
bench("patchbay sessions", "start-up", () => run(["--config", config, "sessions"]));

bench(
  "plain SDK client (Node): connect one stdio server, list tools, close",
  "one server",
  () => sdkClient(1),
  true,
);
bench(
  "patchbay tools --json: connect one stdio server, list tools, close",
  "one server",
  () => run(["--config", config, "tools", "--json"]),
);
bench(
  "plain SDK client (Node): connect five stdio servers, list tools, close",
  "five servers",
  () => sdkClient(5),
  true,
);
bench(
  "patchbay tools --json: connect five stdio servers, list tools, close",
  "five servers",
  () => run(["--config", fiveServers, "tools", "--json"]),
);

/**
 * Starts an interactive session with five servers, waits for its prompt and for every
 * server to connect, and reads its memory from /proc.
 */
async function sessionMemory(): Promise<{ rssMiB: number; peakMiB: number }> {
  const child = command(["--config", fiveServers], "piped").spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  // Without a terminal, the session shows its servers' table once every one is settled.
  while (!seen.includes("Type a message") || !seen.includes("5 of 5 servers connected")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the session ended early: ${seen}`);
    seen += value;
  }
  const status = await Deno.readTextFile(`/proc/${child.pid}/status`);
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]);
  await child.stdin.close();
  reader.releaseLock();
  await child.stderr.cancel().catch(() => {});
  await child.stdout.cancel();
  await child.status;
  return { rssMiB: kib("VmRSS") / 1024, peakMiB: kib("VmHWM") / 1024 };
}

const memory = await sessionMemory();
console.log(
  `interactive session, five stdio servers connected, at the prompt: ` +
    `RSS ${memory.rssMiB.toFixed(1)} MiB (peak ${
      memory.peakMiB.toFixed(1)
    } MiB) for patchbay itself`,
);

globalThis.addEventListener("unload", () => {
  for (const [name, times] of samples) {
    const sorted = times.toSorted((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    console.log(`${name}: median ${median.toFixed(0)} ms over ${sorted.length} runs`);
  }
  Deno.removeSync(home, { recursive: true });
});
