/**
 * What the wire trace (docs/trace.md) costs a tool call (`deno task bench`): a trivial
 * `echo` call to server-everything through the connection manager, over stdio and over
 * streamable HTTP, with tracing off and on (every message masked and written, each HTTP
 * exchange too), in the same run. The two are measured in alternating batches
 * ({@linkcode ROUNDS} rounds of {@linkcode BATCH} calls each way, the order swapped every
 * round) so that drift of the machine falls on both alike; the medians and the overhead in
 * percent are printed: the median is what one call pays, the mean also carries the
 * batched writes (docs/trace.md).
 *
 * @module
 */

import { join } from "node:path";
import { ConnectionManager } from "../lib/connections/manager.ts";
import type { ServerConfig } from "../lib/config/types.ts";
import { Redactor } from "../lib/redact/redact.ts";
import { setActiveTrace } from "../lib/trace/active.ts";
import { TraceRecorder } from "../lib/trace/recorder.ts";
import { everythingEntry, NODE } from "../tests/support/deps.ts";
import { startEverythingHttp } from "../tests/support/servers.ts";

/** Calls per batch. */
const BATCH = 100;
/** Batches each way. */
const ROUNDS = 10;
/** Calls made first, untimed (JIT, caches). */
const WARMUP = 100;

const COMMON = {
  timeoutSeconds: 30,
  trusted: false,
  sampling: "ask" as const,
  disabled: false,
  transportInferred: false,
};

function mean(values: number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Times echo calls with tracing off and on, alternating; prints medians and overhead. */
async function compare(label: string, server: ServerConfig, b: Deno.BenchContext) {
  const dir = await Deno.makeTempDir({ prefix: "patchbay-trace-bench-" });
  const path = join(dir, "trace.jsonl");
  const redactor = new Redactor();
  // A session registers its secrets: masking is measured with some to look for.
  for (let i = 0; i < 20; i++) redactor.addSecret(`bench-secret-${i}-${"x".repeat(i)}`);
  const manager = new ConnectionManager({ servers: [server] });
  const call = () => manager.callTool(`${server.name}__echo`, { message: "hi" });
  const samples = { off: [] as number[], on: [] as number[] };
  try {
    await manager.start();
    for (let i = 0; i < WARMUP; i++) await call();
    b.start();
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ["off", "on"] as const : ["on", "off"] as const;
      for (const mode of order) {
        setActiveTrace(mode === "on" ? TraceRecorder.open(path, { redactor }) : undefined);
        for (let i = 0; i < BATCH; i++) {
          const started = performance.now();
          await call();
          samples[mode].push(performance.now() - started);
        }
      }
    }
    b.end();
  } finally {
    setActiveTrace(undefined);
    await manager.close();
    const size = (await Deno.stat(path).catch(() => ({ size: 0 }))).size;
    await Deno.remove(dir, { recursive: true });
    // The median is one call's cost; the mean also carries the batched writes.
    const figures = (pick: (values: number[]) => number) => {
      const off = pick(samples.off);
      const on = pick(samples.on);
      return `off ${off.toFixed(3)} ms, on ${on.toFixed(3)} ms (${
        (((on - off) / off) * 100).toFixed(1)
      }%)`;
    };
    console.log(
      `${label}: median ${figures(median)}; mean ${figures(mean)}; ` +
        `${samples.off.length} calls each; trace ${(size / 1024).toFixed(0)} KB`,
    );
  }
}

Deno.bench({
  name: "echo call, tracing off vs on: stdio",
  group: "trace",
  n: 1,
  warmup: 0,
  async fn(b) {
    await compare("stdio", {
      ...COMMON,
      name: "everything",
      transport: "stdio",
      command: NODE,
      args: [everythingEntry(), "stdio"],
      env: {},
    }, b);
  },
});

Deno.bench({
  name: "echo call, tracing off vs on: streamable HTTP",
  group: "trace",
  n: 1,
  warmup: 0,
  async fn(b) {
    await using server = await startEverythingHttp("streamableHttp");
    await compare("streamable HTTP", {
      ...COMMON,
      name: "everything",
      transport: "streamable_http",
      url: `${server.origin}/mcp`,
      headers: {},
      sseReadTimeoutSeconds: 300,
    }, b);
  },
});
