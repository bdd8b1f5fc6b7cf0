/**
 * Input tokens billed at the full price over one scripted 10-turn session with 40 tools:
 * today's path to Claude (Anthropic's OpenAI-compatibility layer, which has no prompt
 * cache: every prompt token is billed in full), and Anthropic's own Messages API without
 * and with prompt caching (`LLM.prompt_caching`).
 *
 * Each turn, through the real agent and model clients, the model calls one of the 40 tools
 * (generated, shaped like a typical MCP server's) and then answers: 20 requests a session.
 * The Messages API is the scripted endpoint (`tests/support/scripted_messages.ts`), whose
 * cache behaves as Anthropic documents its own (`prompt_cache_sim.ts`: entries written at
 * the markers of prefixes of at least 1,024 tokens, read back at a marker or up to 20
 * blocks before one). Tokens are 4 bytes of JSON (`lib/llm/tokens.ts`) on both paths: the
 * figures compare the paths, they are not Anthropic's tokenizer's counts. "Input cost" is
 * the prompt in full-price token equivalents: cache reads count a tenth, writes 1.25 times;
 * the dollars are at Claude Sonnet 4.5's list price ($3 per million input tokens).
 *
 * The table is printed when the run ends; `Deno.bench` times a whole session of each path.
 *
 * Run: `deno task bench` (or `deno bench --allow-all --lock=tests/test.lock
 * bench/cache_bench.ts`).
 */

import type { CallToolResult } from "@modelcontextprotocol/client";
import { Agent } from "../lib/agent/agent.ts";
import { ApprovalPolicy } from "../lib/agent/approval.ts";
import { UsageStats } from "../lib/agent/stats.ts";
import type { CatalogueTool, ToolHost } from "../lib/connections/types.ts";
import { createEnvironment } from "../lib/env.ts";
import { createProvider } from "../lib/llm/create_provider.ts";
import { estimateTextTokens } from "../lib/llm/tokens.ts";
import { testLimits, testLlm } from "../tests/support/agent_fixtures.ts";
import { type ScriptedReply, startScriptedLlm } from "../tests/support/scripted_llm.ts";
import { type ScriptedMessage, startScriptedMessages } from "../tests/support/scripted_messages.ts";
import { ScriptedUi } from "../tests/support/scripted_ui.ts";

const TOOLS = 40;
const TURNS = 10;
/** Claude Sonnet 4.5's list price of a prompt token, US dollars per million. */
const INPUT_USD_PER_MILLION = 3;

const VERBS = ["create", "list", "get", "update", "delete", "search", "merge", "archive"];
const NOUNS = ["issue", "pull_request", "branch", "release", "comment"];

/** 40 tools over two servers, each with a paragraph of description and five parameters. */
function catalogue(): CatalogueTool[] {
  return Array.from({ length: TOOLS }, (_, i) => {
    const verb = VERBS[i % VERBS.length];
    const noun = NOUNS[Math.floor(i / VERBS.length) % NOUNS.length];
    const server = `server${Math.floor(i / 20) + 1}`;
    const name = `${verb}_${noun}`;
    return {
      name: `${server}__${name}`,
      server,
      originalName: name,
      description: `${verb[0].toUpperCase()}${verb.slice(1)} a ${noun.replace("_", " ")} in ` +
        "a repository. Returns the result as JSON with its id, URL, state and the time it " +
        "was last changed. Requires a token with the repository scope.",
      inputSchema: {
        type: "object",
        properties: {
          owner: { type: "string", description: "Account that owns the repository" },
          repo: { type: "string", description: "Repository name without the owner" },
          id: { type: "integer", description: `Number of the ${noun.replace("_", " ")}` },
          title: { type: "string", description: "Title, at most 256 characters" },
          body: { type: "string", description: "Text in Markdown" },
        },
        required: ["owner", "repo"],
      },
    };
  });
}

const tools = catalogue();
const host: ToolHost = {
  tools: () => tools,
  callTool: (): Promise<CallToolResult> =>
    Promise.resolve({
      content: [{
        type: "text",
        text: JSON.stringify({ id: 1, state: "open", url: "https://example.com/o/r/1" }),
      }],
    }),
};

/** What one session cost, as the provider reported it. */
interface Figures {
  requests: number;
  prompt: number;
  full: number;
  read: number;
  written: number;
}

/** One 10-turn session through `provider`; `reply` scripts each request's answer. */
async function session(
  provider: ReturnType<typeof createProvider>,
  enqueue: (turn: number) => void,
): Promise<UsageStats> {
  const limits = testLimits({ toolSearch: { mode: "never", maxTools: 100, maxTokens: 100_000 } });
  const stats = new UsageStats(limits);
  const agent = new Agent({
    provider,
    tools: host,
    ui: new ScriptedUi(),
    llm: testLlm(provider.baseUrl),
    limits,
    stats,
    approval: new ApprovalPolicy(["server1", "server2"].map((name) => ({ name, trusted: true }))),
  });
  for (let turn = 0; turn < TURNS; turn++) {
    enqueue(turn);
    await agent.runTurn(`Please ${tools[(turn * 7) % TOOLS].originalName.replace("_", " ")}.`);
  }
  return stats;
}

const target = (turn: number) => tools[(turn * 7) % TOOLS];
const args = { owner: "octo", repo: "demo" };
const ANSWER = "Done: the item is open, and its URL is in the result above.";

const openAi = await startScriptedLlm();
const messages = await startScriptedMessages();
const env = createEnvironment({ LLM_API_KEY: "sk-ant-bench" });
const openAiProvider = createProvider({
  llm: testLlm(openAi.baseUrl),
  env: createEnvironment({}),
});
const nativeProvider = (promptCaching: boolean) =>
  createProvider({
    llm: testLlm(messages.baseUrl, {
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      promptCaching,
    }),
    env,
  });

const openAiTurn = (turn: number) =>
  openAi.enqueue(
    { toolCalls: [{ name: target(turn).name, arguments: args }] } satisfies ScriptedReply,
    { text: ANSWER },
  );
const messagesTurn = (turn: number) =>
  messages.enqueue(
    { toolUses: [{ name: target(turn).name, input: args }] } satisfies ScriptedMessage,
    { text: ANSWER },
  );

/** Today's path: its prompt tokens, all at the full price (4 bytes of request JSON each). */
async function openAiFigures(): Promise<Figures> {
  const first = openAi.requests.length;
  await session(openAiProvider, openAiTurn);
  const prompts = openAi.requests.slice(first).map((r) =>
    estimateTextTokens(JSON.stringify({ tools: r.body.tools, messages: r.body.messages }))
  );
  const prompt = prompts.reduce((a, b) => a + b, 0);
  return { requests: prompts.length, prompt, full: prompt, read: 0, written: 0 };
}

/** The Messages API: the usage the endpoint's cache reported, as patchbay counted it. */
async function messagesFigures(promptCaching: boolean): Promise<Figures> {
  const provider = nativeProvider(promptCaching);
  const stats = (await session(provider, messagesTurn)).snapshot().session;
  provider.close();
  return {
    requests: stats.requests,
    prompt: stats.promptTokens,
    full: stats.promptTokens - stats.cacheReadTokens - stats.cacheWriteTokens,
    read: stats.cacheReadTokens,
    written: stats.cacheWriteTokens,
  };
}

// The figures, from one session of each path (the caching path first meets an empty cache).
const rows: [string, Figures][] = [
  ["OpenAI-compatible layer (today)", await openAiFigures()],
  ["Messages API, prompt_caching false", await messagesFigures(false)],
  ["Messages API, prompt caching", await messagesFigures(true)],
];

Deno.bench("10-turn session, 40 tools, OpenAI-compatible path", async () => {
  await session(openAiProvider, openAiTurn);
});
for (const promptCaching of [false, true]) {
  Deno.bench(
    `10-turn session, 40 tools, Messages API, prompt_caching ${promptCaching}`,
    async () => {
      const provider = nativeProvider(promptCaching);
      await session(provider, messagesTurn);
      provider.close();
    },
  );
}

globalThis.addEventListener("unload", () => {
  const n = (value: number) => Math.round(value).toLocaleString("en-US");
  console.log(
    `\nInput tokens over a ${TURNS}-turn session with ${TOOLS} tools (two requests a turn):`,
  );
  console.log(
    "  path                                requests  prompt    full price  cache read  " +
      "cache write  input cost (full-price equivalent, $ at $3/M)",
  );
  for (const [label, f] of rows) {
    const cost = f.full + f.read * 0.1 + f.written * 1.25;
    console.log(
      `  ${label.padEnd(36)}${String(f.requests).padStart(8)}  ${n(f.prompt).padStart(8)}  ` +
        `${n(f.full).padStart(10)}  ${n(f.read).padStart(10)}  ${n(f.written).padStart(11)}  ` +
        `${n(cost)} ($${(cost * INPUT_USD_PER_MILLION / 1e6).toFixed(4)})`,
    );
  }
  openAiProvider.close();
  void openAi.close();
  void messages.close();
});
