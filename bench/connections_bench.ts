/**
 * Connection benchmarks (`deno task bench`):
 *
 * - time to connect 1 and 10 stdio servers (server-everything), start-up to `connected`;
 *   10 in parallel should cost little more than 1, and no more than 10 SDK clients
 *   connecting in parallel (the floor: spawning and initializing 10 node processes);
 * - per-call cost of a trivial tool call (`echo`) over stdio, median and p99, through
 *   the connection manager, through patchbay's transport under the SDK's client, and
 *   the raw SDK floor (the SDK's own client and node-based stdio transport);
 * - what protocol negotiation (`"protocol": "auto"`, the default) costs a 2025-era stdio
 *   server: connecting with it and with `"legacy"` (no probe), and the probe's own round
 *   trip (`server/discover`, which server-everything answers "Method not found").
 *
 * Each call benchmark times {@linkcode CALLS} calls one by one after {@linkcode WARMUP}
 * warm-up calls and prints its median and p99; Deno's own figures for those are per
 * batch of {@linkcode CALLS} calls.
 *
 * @module
 */

import { Client, type Transport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { ConnectionManager } from "../lib/connections/manager.ts";
import type { StdioServerConfig } from "../lib/config/types.ts";
import { StdioTransport } from "../lib/transports/stdio.ts";
import { everythingEntry, NODE } from "../tests/support/deps.ts";

/** Calls timed per call benchmark. */
const CALLS = 1000;
/** Calls made first, untimed (JIT, caches). */
const WARMUP = 100;
/** Runs of each connect benchmark. */
const CONNECT_RUNS = 8;

function everything(name: string, protocol = "auto"): StdioServerConfig {
  return {
    protocol,
    name,
    transport: "stdio",
    command: NODE,
    args: [everythingEntry(), "stdio"],
    env: {},
    timeoutSeconds: 30,
    trusted: false,
    sampling: "ask",
    disabled: false,
    transportInferred: false,
  };
}

/** The SDK's own node-based stdio transport to server-everything. */
function rawTransport(): StdioClientTransport {
  return new StdioClientTransport({
    command: NODE,
    args: [everythingEntry(), "stdio"],
    stderr: "ignore",
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}

/** Times `call` CALLS times and prints median and p99 (ms). */
async function timeCalls(label: string, call: () => Promise<unknown>, b: Deno.BenchContext) {
  for (let i = 0; i < WARMUP; i++) await call();
  const samples: number[] = [];
  b.start();
  for (let i = 0; i < CALLS; i++) {
    const started = performance.now();
    await call();
    samples.push(performance.now() - started);
  }
  b.end();
  samples.sort((x, y) => x - y);
  console.log(
    `${label}: median ${percentile(samples, 50).toFixed(3)} ms, ` +
      `p99 ${percentile(samples, 99).toFixed(3)} ms over ${CALLS} calls`,
  );
}

/** Connects an SDK client over `transport` and times its `echo` calls. */
async function timeClientEcho(label: string, transport: Transport, b: Deno.BenchContext) {
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(transport);
  try {
    await timeCalls(
      label,
      () => client.callTool({ name: "echo", arguments: { message: "hi" } }),
      b,
    );
  } finally {
    await client.close();
  }
}

async function connectServers(
  count: number,
  b: Deno.BenchContext,
  protocol = "auto",
): Promise<void> {
  const manager = new ConnectionManager({
    servers: Array.from({ length: count }, (_, i) => everything(`everything${i}`, protocol)),
  });
  b.start();
  const states = await manager.start();
  b.end();
  await manager.close();
  const failed = states.filter((s) => s.state !== "connected");
  if (failed.length > 0) throw new Error(`not connected: ${failed.map((s) => s.name)}`);
}

Deno.bench({
  name: "connect 1 stdio server",
  group: "connect",
  baseline: true,
  n: CONNECT_RUNS,
  warmup: 1,
  fn: async (b) => await connectServers(1, b),
});

Deno.bench({
  name: 'connect 1 stdio server, "protocol": "legacy" (no server/discover probe)',
  group: "connect",
  n: CONNECT_RUNS,
  warmup: 1,
  fn: async (b) => await connectServers(1, b, "legacy"),
});

Deno.bench({
  name: "connect 10 stdio servers",
  group: "connect",
  n: CONNECT_RUNS,
  warmup: 1,
  fn: async (b) => await connectServers(10, b),
});

Deno.bench({
  name: "connect 10 stdio servers: raw SDK floor (10 SDK clients in parallel)",
  group: "connect",
  n: CONNECT_RUNS,
  warmup: 1,
  async fn(b) {
    const clients = Array.from({ length: 10 }, () => new Client({ name: "bench", version: "1" }));
    b.start();
    await Promise.all(clients.map((client) => client.connect(rawTransport())));
    b.end();
    await Promise.all(clients.map((client) => client.close()));
  },
});

Deno.bench({
  name: "echo call: raw SDK (Client + SDK stdio transport)",
  group: "call",
  baseline: true,
  n: 1,
  warmup: 0,
  fn: async (b) => await timeClientEcho("raw SDK", rawTransport(), b),
});

Deno.bench({
  name: "echo call: SDK Client + patchbay stdio transport",
  group: "call",
  n: 1,
  warmup: 0,
  fn: async (b) =>
    await timeClientEcho(
      "patchbay transport",
      new StdioTransport({ command: NODE, args: [everythingEntry(), "stdio"] }),
      b,
    ),
});

Deno.bench({
  name: "echo call: patchbay connection manager",
  group: "call",
  n: 1,
  warmup: 0,
  async fn(b) {
    const manager = new ConnectionManager({ servers: [everything("everything")] });
    await manager.start();
    try {
      await timeCalls(
        "connection manager",
        () => manager.callTool("everything__echo", { message: "hi" }),
        b,
      );
    } finally {
      await manager.close();
    }
  },
});

Deno.bench({
  name: "the version probe's round trip (server/discover before initialize, refused)",
  group: "call",
  n: 1,
  warmup: 0,
  async fn(b) {
    // What `auto` adds to each connection of a 2025-era server: one request, refused with
    // "Method not found", on the pipe the session then initializes on.
    const transport = new StdioTransport({ command: NODE, args: [everythingEntry(), "stdio"] });
    const waiting = new Map<string, () => void>();
    transport.onmessage = (message) => {
      if ("id" in message) waiting.get(String(message.id))?.();
    };
    await transport.start();
    let next = 0;
    const probe = () =>
      new Promise<void>((resolve) => {
        const id = `server-discover-probe-${++next}`;
        waiting.set(id, resolve);
        transport.send({
          jsonrpc: "2.0",
          id,
          method: "server/discover",
          params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } },
        });
      }).finally(() => waiting.delete(`server-discover-probe-${next}`));
    try {
      await timeCalls("server/discover probe", probe, b);
    } finally {
      await transport.close();
    }
  },
});
