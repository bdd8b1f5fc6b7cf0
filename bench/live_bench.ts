/**
 * Live connections (`deno task bench`):
 *
 * - time to a usable prompt of the interactive client (the real program in a
 *   pseudo-terminal made by `script`, from spawn to the prompt on the terminal), with one
 *   stdio server, and with that server plus one that never answers `initialize`
 *   (server-everything in its HTTP mode started as a stdio command): the goal is a
 *   difference under 0.1 s, the prompt not waiting for the slow server;
 * - time from a server's death (SIGKILL; for the silent case SIGSTOP, which only the
 *   keep-alive ping can notice) to the connection manager's `reconnecting` event, which
 *   is what the REPL's notice is printed from, for streamable HTTP, SSE and stdio.
 *
 * The prompt comparison runs once when the file loads and prints its medians (each
 * start-up is a whole program; Deno.bench would repeat the lot). In the death benchmarks
 * only the measured part is inside `b.start()` / `b.end()`; starting servers and closing
 * sessions are not.
 *
 * @module
 */

import { join } from "node:path";
import manifest from "../deno.json" with { type: "json" };
import { ConnectionManager } from "../lib/connections/manager.ts";
import type { ServerConfig } from "../lib/config/types.ts";
import { DENO, everythingEntry, NODE } from "../tests/support/deps.ts";
import {
  httpEntry,
  processAlive,
  processesWith,
  startEverythingHttp,
  stdioEntry,
} from "../tests/support/servers.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const FLAGS = manifest.tasks.start.split(/\s+/).filter((w) => w.startsWith("--"));
/** Runs of each benchmark: each starts real processes. */
const RUNS = 8;
/** Pairs of start-ups timed without and with the hanging server. */
const PROMPT_PAIRS = 10;

const home = await Deno.makeTempDir({ prefix: "patchbay-bench-live-" });
const llm = { provider: "openai-compatible", model: "m", base_url: "http://127.0.0.1:9/v1" };
const good = { command: NODE, args: [everythingEntry(), "stdio"] };
const oneServer = join(home, "one.json");
await Deno.writeTextFile(oneServer, JSON.stringify({ LLM: llm, mcpServers: { good } }));
const withHanging = join(home, "hanging.json");
await Deno.writeTextFile(
  withHanging,
  JSON.stringify({
    LLM: llm,
    mcpServers: {
      good,
      hang: {
        command: NODE,
        args: [everythingEntry(), "streamableHttp"],
        env: { PORT: "0" },
        timeout: 60,
      },
    },
  }),
);

const env = {
  HOME: home,
  PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
  DENO_DIR: Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME")!, ".cache", "deno"),
  NO_COLOR: "1",
  TERM: "xterm-256color",
  LLM_API_KEY: "bench-key",
};

const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

/** Starts the interactive client in a pseudo-terminal (`script`); ms from spawn to its prompt. */
async function timeToPrompt(config: string): Promise<number> {
  const line = [
    DENO,
    "run",
    ...FLAGS.map((f) => f.replaceAll("$HOME", home)),
    join(ROOT, "main.ts"),
    "--config",
    config,
  ].map(quote).join(" ");
  const started = performance.now();
  const child = new Deno.Command("script", {
    args: ["-qfec", line, "/dev/null"],
    env,
    clearEnv: true,
    cwd: home,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!/Type a message[^\n]*\n[^\n]*›/.test(seen)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the session ended before its prompt: ${seen}`);
    seen += value;
  }
  const ms = performance.now() - started;
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode("/exit\r"));
  await writer.close();
  // Keep reading so the terminal never blocks the program on its way out.
  while (!(await reader.read()).done) { /* drain */ }
  await child.status;
  return ms;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];

/**
 * The two start-ups alternate (ABBA), so a machine whose load drifts during the run weighs
 * on both alike. Run once, when the file loads, and printed (Deno.bench would repeat it).
 */
async function comparePrompts(): Promise<void> {
  await timeToPrompt(oneServer); // warm-up: module cache, first node start
  const without: number[] = [];
  const withHang: number[] = [];
  for (let i = 0; i < PROMPT_PAIRS; i++) {
    if (i % 2 === 0) {
      without.push(await timeToPrompt(oneServer));
      withHang.push(await timeToPrompt(withHanging));
    } else {
      withHang.push(await timeToPrompt(withHanging));
      without.push(await timeToPrompt(oneServer));
    }
  }
  const range = (v: number[]) =>
    `median ${median(v).toFixed(0)} ms (${Math.min(...v).toFixed(0)}–${Math.max(...v).toFixed(0)})`;
  console.log(
    `time to a usable prompt over ${PROMPT_PAIRS} alternating pairs of start-ups: one stdio ` +
      `server ${range(without)}; plus one that never answers initialize ${range(withHang)}; ` +
      `difference of the medians ${(median(withHang) - median(without)).toFixed(0)} ms`,
  );
}

await comparePrompts();

/** Connects to `entry`, kills the server with `signal`, times kill → `reconnecting`. */
async function timeToNotice(
  entry: ServerConfig,
  kill: () => void,
  b: Deno.BenchContext,
): Promise<void> {
  const manager = new ConnectionManager({ servers: [entry] });
  try {
    const [status] = await manager.start();
    if (status.state !== "connected") throw new Error(`not connected: ${status.error?.reason}`);
    const noticed = new Promise<void>((resolve) =>
      manager.on((event) => {
        if (event.type === "state" && event.state === "reconnecting") resolve();
      })
    );
    b.start();
    kill();
    await noticed;
    b.end();
  } finally {
    await manager.close();
  }
}

for (const mode of ["streamableHttp", "sse"] as const) {
  const transport = mode === "sse" ? "sse" : "streamable_http";
  Deno.bench(`death to notice: ${transport} server killed (SIGKILL)`, {
    group: "death",
    n: RUNS,
    warmup: 1,
  }, async (b) => {
    await using server = await startEverythingHttp(mode);
    const url = `${server.origin}/${mode === "sse" ? "sse" : "mcp"}`;
    await timeToNotice(
      httpEntry("web", url, { transport }),
      () => Deno.kill(server.pid, "SIGKILL"),
      b,
    );
  });
}

Deno.bench("death to notice: stdio server killed (SIGKILL)", {
  group: "death",
  baseline: true,
  n: RUNS,
  warmup: 1,
}, async (b) => {
  const tag = `patchbay-bench-${crypto.randomUUID()}`;
  await timeToNotice(
    stdioEntry("local", NODE, [everythingEntry(), "stdio", tag]),
    () => Deno.kill(processesWith(tag)[0], "SIGKILL"),
    b,
  );
});

Deno.bench("death to notice: streamable_http server gone silent (SIGSTOP), ping_interval 2 s", {
  group: "death",
  n: 4,
  warmup: 0,
}, async (b) => {
  await using server = await startEverythingHttp("streamableHttp");
  try {
    await timeToNotice(
      httpEntry("web", `${server.origin}/mcp`, { pingIntervalSeconds: 2 }),
      () => Deno.kill(server.pid, "SIGSTOP"),
      b,
    );
  } finally {
    if (processAlive(server.pid)) Deno.kill(server.pid, "SIGCONT");
  }
});
