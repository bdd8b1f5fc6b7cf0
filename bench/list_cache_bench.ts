/**
 * What lists kept across runs save at start-up (`ttlMs`/`cacheScope`, lib/connections/
 * list_cache.ts), with one slow stdio server: the fixture of the kept-lists tests
 * (`tests/fixtures/cacheable_server.ts`), which answers its first request only after
 * {@linkcode SLOW_START_MS} (as a server fetched by `npx`, or one that loads a model,
 * does), its lists fresh for ten minutes.
 *
 * - `tools --json`: from spawn to exit;
 * - `run "hello"`: from spawn to the first request reaching the (scripted) model, with the
 *   server's tools in it;
 *
 * each without kept lists (the same server with `--ttl=0`: nothing is cacheable) and with
 * them (kept by an earlier run), through `deno task start` under the launcher, as a person
 * runs it. Runs alternate (ABBA from one round to the next); medians of {@linkcode ROUNDS}
 * are printed before Deno's own table, which times one `tools --json` of each.
 *
 * Run: `deno task bench` (or `deno bench --allow-all --lock=tests/test.lock
 * bench/list_cache_bench.ts`).
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { runPatchbay, type Sandbox, sandbox, writeConfig } from "../tests/support/cli.ts";
import { DENO } from "../tests/support/deps.ts";
import { startScriptedLlm } from "../tests/support/scripted_llm.ts";

/** How long the server takes to answer its first request. */
const SLOW_START_MS = 1_000;
/** Counted rounds (one more warms up). */
const ROUNDS = 5;

const FIXTURE = fileURLToPath(new URL("../tests/fixtures/cacheable_server.ts", import.meta.url));
const model = await startScriptedLlm({ fallback: () => ({ text: "Hello." }) });

/** A sandbox whose one server is the slow fixture, with `ttlMs` `ttl`. */
async function setUp(ttl: number): Promise<Sandbox> {
  const box = await sandbox();
  await writeConfig(box, {
    LLM: { provider: "openai-compatible", model: "m", base_url: model.baseUrl },
    mcpServers: {
      slow: {
        command: DENO,
        args: [
          "run",
          "--quiet",
          "--no-config",
          FIXTURE,
          `--delay=${SLOW_START_MS}`,
          `--ttl=${ttl}`,
        ],
      },
    },
  });
  return box;
}

const without = await setUp(0);
const kept = await setUp(600_000);

/** Milliseconds from spawn to the end of `tools --json`. */
async function listing(box: Sandbox): Promise<number> {
  const started = performance.now();
  const result = await runPatchbay(box, ["tools", "--json"]);
  if (result.code !== 0 || !result.stdout.includes('"echo"')) {
    throw new Error(`tools --json failed: ${result.stderr}`);
  }
  return performance.now() - started;
}

/** Milliseconds from spawn to the model's first request, which must offer the server's tool. */
async function firstRequest(box: Sandbox): Promise<number> {
  const seen = model.requests.length;
  const started = performance.now();
  const result = await runPatchbay(box, ["run", "--yes", "hello"]);
  const request = model.requests[seen];
  if (result.code !== 0 || !request) throw new Error(`run failed: ${result.stderr}`);
  const tools = JSON.stringify(request.body.tools ?? []);
  if (!tools.includes("slow__echo")) throw new Error("the first request offered no tools");
  return request.receivedAt - started;
}

const cases: [string, () => Promise<number>][] = [
  ["tools --json, no kept lists", () => listing(without)],
  ["tools --json, kept lists", () => listing(kept)],
  ["run: first model request, no kept lists", () => firstRequest(without)],
  ["run: first model request, kept lists", () => firstRequest(kept)],
];
const times = new Map<string, number[]>(cases.map(([name]) => [name, []]));
for (let round = 0; round <= ROUNDS; round++) {
  for (const [name, work] of round % 2 === 0 ? cases : cases.toReversed()) {
    const ms = await work();
    // Round 0 warms Deno's caches (and keeps the lists) and is not counted.
    if (round > 0) times.get(name)!.push(ms);
  }
}
const median = (values: number[]) => values.toSorted((a, b) => a - b)[values.length >> 1];
console.log(`one stdio server answering after ${SLOW_START_MS} ms; medians of ${ROUNDS}:`);
for (const [name, values] of times) {
  console.log(`  ${name}: ${median(values).toFixed(0)} ms`);
}

Deno.bench("tools --json, slow server, no kept lists", {
  group: "kept lists",
  baseline: true,
  n: 3,
  warmup: 0,
}, async () => {
  await listing(without);
});

Deno.bench(
  "tools --json, slow server, kept lists",
  { group: "kept lists", n: 3, warmup: 0 },
  async () => {
    await listing(kept);
  },
);

globalThis.addEventListener("unload", () => {
  void model.close();
  for (const box of [without, kept]) Deno.removeSync(box.home, { recursive: true });
});
