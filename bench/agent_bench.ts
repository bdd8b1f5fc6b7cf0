/**
 * The agent's own overhead for one turn with three tool calls.
 *
 * A turn here is two model requests to the scripted OpenAI-compatible server (the first
 * streams three tool calls, the second a short answer) and three concurrent `echo` calls to
 * a real server-everything over stdio, through patchbay's connection manager. Its wall time
 * has three parts:
 *
 * - model server time: for each request, from its arrival at the scripted server to its
 *   last byte sent (`serviceMs`, recorded by the server);
 * - tool time: the wall-clock span of the tool phase, from the first `toolStart` to the
 *   last `toolEnd` the UI receives (the calls overlap, so their span, not their sum). It
 *   includes the connection manager's own work per call (routing, deadline, cancellation
 *   wiring), the SDK's JSON-RPC work and the stdio round trips;
 * - the client's overhead: the rest. Building requests, parsing the stream and assembling
 *   tool calls, approvals, content conversion, history, trimming, statistics, UI events.
 *
 * `Deno.bench` times whole turns; each iteration also records the three parts, and the
 * overhead distribution is printed when the run ends.
 *
 * Run: `deno task bench` (or `deno bench --allow-all bench/agent_bench.ts`).
 */

import { Agent } from "../lib/agent/agent.ts";
import { ApprovalPolicy } from "../lib/agent/approval.ts";
import { ScriptedUi, type UiEvent } from "../tests/support/scripted_ui.ts";
import { UsageStats } from "../lib/agent/stats.ts";
import { createEnvironment } from "../lib/env.ts";
import { createOpenAiProvider } from "../lib/llm/openai_provider.ts";
import { connectServers, testLimits, testLlm } from "../tests/support/agent_fixtures.ts";
import { type ScriptedReply, startScriptedLlm } from "../tests/support/scripted_llm.ts";
import { everythingStdio } from "../tests/support/servers.ts";

const llm = await startScriptedLlm();
const host = await connectServers([everythingStdio()]);
const limits = testLimits();
const config = testLlm(llm.baseUrl);
const provider = createOpenAiProvider({ llm: config, env: createEnvironment({}) });
const stats = new UsageStats(limits);
const events: { event: UiEvent; at: number }[] = [];
const ui = new ScriptedUi({ onEvent: (event) => events.push({ event, at: performance.now() }) });
const agent = new Agent({
  provider,
  tools: host,
  ui,
  llm: config,
  limits,
  stats,
  approval: new ApprovalPolicy([{ name: "everything", trusted: true }]),
});

const TURN: ScriptedReply[] = [
  {
    text: "I will call three tools.",
    toolCalls: [1, 2, 3].map((n) => ({
      name: "everything__echo",
      arguments: { message: `m${n}` },
    })),
  },
  { text: "All three tools answered: m1, m2 and m3." },
];

interface Sample {
  total: number;
  server: number;
  tools: number;
}
const samples: Sample[] = [];

async function turn(): Promise<void> {
  agent.clear();
  events.length = 0;
  const firstRequest = llm.requests.length;
  llm.enqueue(...TURN);
  const started = performance.now();
  await agent.runTurn("Call the three tools");
  const total = performance.now() - started;
  const server = llm.requests.slice(firstRequest).reduce((sum, r) => sum + (r.serviceMs ?? 0), 0);
  const starts = events.filter((e) => e.event.type === "toolStart").map((e) => e.at);
  const ends = events.filter((e) => e.event.type === "toolEnd").map((e) => e.at);
  if (starts.length !== 3 || ends.length !== 3) {
    throw new Error("the turn did not make 3 tool calls");
  }
  samples.push({ total, server, tools: Math.max(...ends) - Math.min(...starts) });
}

// Warm the JIT, the HTTP connection and the server before measuring.
for (let i = 0; i < 20; i++) await turn();
samples.length = 0;

Deno.bench("agent turn with three tool calls (whole turn)", async () => {
  await turn();
});

// For scale: one streamed request through the provider seam alone (SDK, fetch and the
// loopback HTTP exchange on both sides), two of which every turn above makes.
Deno.bench("one streamed model request through the provider", async () => {
  llm.enqueue(TURN[1]);
  await provider.generate({ messages: [{ role: "user", content: "hi" }], onDelta: () => {} });
});

globalThis.addEventListener("unload", () => {
  const pick = (f: (s: Sample) => number) => samples.map(f).sort((a, b) => a - b);
  const overhead = pick((s) => s.total - s.server - s.tools);
  const fmt = (values: number[], q: number) =>
    values[Math.min(values.length - 1, Math.floor(values.length * q))].toFixed(2);
  console.log(`\nagent turn with three tool calls, ${samples.length} turns (ms):`);
  for (
    const [name, values] of [
      ["total", pick((s) => s.total)],
      ["model server", pick((s) => s.server)],
      ["tools (span)", pick((s) => s.tools)],
      ["client overhead", overhead],
    ] as const
  ) {
    console.log(
      `  ${name.padEnd(16)} median ${fmt(values, 0.5).padStart(7)}   p95 ${
        fmt(values, 0.95).padStart(7)
      }`,
    );
  }
  provider.close();
  // Unload cannot wait: the servers are closed without awaiting (the process is ending).
  void host.close();
  void llm.close();
});
