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
 * - resident memory of an interactive session with five servers connected: at the prompt,
 *   and again after one turn (a tool call and an answer from the scripted model server,
 *   which brings in the model client) (VmRSS and VmHWM from /proc, printed once;
 *   Deno.bench only times).
 *
 * The comparison with the SDK client is timed by hand (medians printed before Deno's own
 * table), in alternating order; Deno.bench times the start-up group.
 *
 * @module
 */

import { join } from "node:path";
import { BINARY_FLAGS } from "../scripts/compile.ts";
import { CLIENT_V8_FLAGS } from "../lib/cli/v8_flags.ts";
import { benchSandbox, writeEverythingConfig } from "../tests/support/bench_sandbox.ts";
import { startScriptedLlm } from "../tests/support/scripted_llm.ts";
import { DENO, NODE, testDepsDir } from "../tests/support/deps.ts";

const ROOT = new URL("../", import.meta.url).pathname;
// The client itself, under the flags `deno task compile` bakes into a binary: the broad
// permissions and the client's V8 flags (`CLIENT_V8_FLAGS`, which the launcher passes too),
// so the memory measured is what users run. The launcher's own cost is in launcher_bench.ts.
const FLAGS = [CLIENT_V8_FLAGS, ...BINARY_FLAGS, "--config", join(ROOT, "deno.json")];

const { home, env, config } = await benchSandbox();
// The model of the interactive session's turn: one `echo` call, then the answer.
const model = await startScriptedLlm({
  fallback: (request) =>
    request.body.messages.at(-1)?.role === "tool"
      ? { text: "The echo came back." }
      : { toolCalls: [{ name: "everything0__echo", arguments: { message: "hi" } }] },
});
const fiveServers = await writeEverythingConfig(home, "five.json", 5, model.baseUrl);
const SDK_CLIENT = join(ROOT, "bench", "sdk_client.mjs");
/** Counted rounds of the comparison with the plain SDK client. */
const ROUNDS = 10;

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

Deno.bench("patchbay --version", { group: "start-up", baseline: true }, async () => {
  await run(["--version"]);
});

Deno.bench("patchbay config check", { group: "start-up" }, async () => {
  await run(["--config", config, "config", "check"]);
});

Deno.bench("patchbay sessions", { group: "start-up" }, async () => {
  await run(["--config", config, "sessions"]);
});

Deno.bench("patchbay permissions", { group: "start-up" }, async () => {
  await run(["--config", config, "permissions"]);
});

/**
 * patchbay against the plain SDK client, connecting one and five servers: the four runs of
 * a round alternate (ABBA from one round to the next), so that a load that drifts during
 * the benchmark weighs on both sides. Prints the median of each over {@linkcode ROUNDS}.
 */
async function compareWithSdk(): Promise<void> {
  const cases: [string, () => Promise<void>][] = [
    ["plain SDK client (Node), one stdio server", () => sdkClient(1)],
    ["patchbay tools --json, one stdio server", () => run(["--config", config, "tools", "--json"])],
    ["plain SDK client (Node), five stdio servers", () => sdkClient(5)],
    [
      "patchbay tools --json, five stdio servers",
      () => run(["--config", fiveServers, "tools", "--json"]),
    ],
  ];
  const times = new Map<string, number[]>(cases.map(([name]) => [name, []]));
  for (let round = 0; round <= ROUNDS; round++) {
    const order = round % 2 === 0 ? cases : cases.toReversed();
    for (const [name, work] of order) {
      const started = performance.now();
      await work();
      // Round 0 warms the caches and is not counted.
      if (round > 0) times.get(name)!.push(performance.now() - started);
    }
  }
  const median = (name: string) => {
    const sorted = times.get(name)!.toSorted((a, b) => a - b);
    return (sorted[(sorted.length - 1) >> 1] + sorted[sorted.length >> 1]) / 2;
  };
  for (const [name] of cases) {
    const sorted = times.get(name)!.toSorted((a, b) => a - b);
    console.log(
      `connect, list tools, close: ${name}: median ${median(name).toFixed(0)} ms ` +
        `(${sorted[0].toFixed(0)}–${sorted.at(-1)!.toFixed(0)} ms, ${sorted.length} runs)`,
    );
  }
  for (const [sdk, patchbay] of [[0, 1], [2, 3]]) {
    const ratio = median(cases[patchbay][0]) / median(cases[sdk][0]);
    console.log(`  ${cases[patchbay][0]} / ${cases[sdk][0]}: ${ratio.toFixed(2)}`);
  }
}

/** VmRSS and VmHWM of process `pid`, in MiB. */
async function memoryOf(pid: number): Promise<{ rssMiB: number; peakMiB: number }> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]);
  return { rssMiB: kib("VmRSS") / 1024, peakMiB: kib("VmHWM") / 1024 };
}

/**
 * Where process `pid`'s resident memory is, from /proc/<pid>/smaps, in MiB: the Deno
 * binary's own pages, anonymous memory (V8's heaps, other threads' malloc arenas), the main
 * thread's malloc heap, and every other mapped file (libraries, Deno's code cache), stacks
 * included.
 */
async function residentBy(pid: number): Promise<Record<string, number>> {
  const smaps = await Deno.readTextFile(`/proc/${pid}/smaps`);
  const binary = await Deno.readLink(`/proc/${pid}/exe`);
  const kib: Record<string, number> = { binary: 0, anonymous: 0, heap: 0, files: 0 };
  let area = "anonymous";
  for (const line of smaps.split("\n")) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping) {
      const path = mapping[1];
      area = path === binary
        ? "binary"
        : path === ""
        ? "anonymous"
        : path === "[heap]"
        ? "heap"
        : "files";
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) kib[area] += Number(rss[1]);
  }
  return Object.fromEntries(Object.entries(kib).map(([k, v]) => [k, v / 1024]));
}

/** Reads `stream` as text into `seen.text` until it ends. */
async function collect(stream: ReadableStream<Uint8Array>, seen: { text: string }) {
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) seen.text += chunk;
}

/** Waits until `seen.text` holds every one of `parts` (or `ended` settles first). */
async function waitFor(seen: { text: string }, parts: string[], ended: Promise<unknown>) {
  let over = false;
  ended.finally(() => over = true);
  while (!parts.every((part) => seen.text.includes(part))) {
    if (over) throw new Error(`the session ended early: ${seen.text}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Starts an interactive session with five servers (tool calls approved, since nobody is at
 * a terminal), waits for its prompt and for every server to connect and reads its memory
 * from /proc; then has it make one turn (the scripted model asks for one `echo` call and
 * then answers) and reads it again.
 */
async function sessionMemory() {
  const child = command(["--config", fiveServers, "--yes"], "piped").spawn();
  const stderr = { text: "" };
  const stdout = { text: "" };
  const ended = Promise.all([collect(child.stderr, stderr), collect(child.stdout, stdout)]);
  // Without a terminal, the session shows its servers' table once every one is settled.
  await waitFor(stderr, ["Type a message", "5 of 5 servers connected"], ended);
  const atPrompt = await memoryOf(child.pid);
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode("Echo hi, please.\n"));
  await waitFor(stdout, ["The echo came back."], ended);
  const afterTurn = await memoryOf(child.pid);
  const where = await residentBy(child.pid);
  await writer.close();
  await Promise.all([ended, child.status]);
  return { atPrompt, afterTurn, where };
}

await compareWithSdk();
const memory = await sessionMemory();
const mib = ({ rssMiB, peakMiB }: { rssMiB: number; peakMiB: number }) =>
  `RSS ${rssMiB.toFixed(1)} MiB (peak ${peakMiB.toFixed(1)} MiB)`;
console.log(
  `interactive session, five stdio servers connected, for patchbay itself: at the prompt ` +
    `${mib(memory.atPrompt)}; after one turn with a tool call ${mib(memory.afterTurn)}`,
);
const { binary, anonymous, heap, files } = memory.where;
console.log(
  `  after the turn, by mapping (MiB): the Deno binary ${binary.toFixed(1)}, anonymous ` +
    `${anonymous.toFixed(1)} (V8's heaps, other threads' malloc), the main malloc heap ` +
    `${heap.toFixed(1)}, other files ${files.toFixed(1)} (libraries, code cache; stacks)`,
);
await model.close();

globalThis.addEventListener("unload", () => Deno.removeSync(home, { recursive: true }));
