/**
 * Tokens per model request with many tools, with and without tool search.
 *
 * One turn through the real agent and model client against the scripted model server: the
 * model calls one tool (with search: first `find_tools`, then the tool it found) and
 * answers. The tools are generated, shaped like a typical MCP server's (a paragraph of
 * description, four to six parameters with descriptions, two required), since no
 * installed server offers two hundred. Tokens are estimated from each request body as the
 * scripted server received it (4 bytes a token, `lib/llm/tokens.ts`), for 5 and for 200
 * tools, with search `never` and `always`; the table is printed when the run ends, and
 * `Deno.bench` times a whole turn of each.
 *
 * Run: `deno task bench` (or `deno bench --allow-all bench/context_bench.ts`).
 */

import type { CallToolResult } from "@modelcontextprotocol/client";
import { Agent } from "../lib/agent/agent.ts";
import { ApprovalPolicy } from "../lib/agent/approval.ts";
import { UsageStats } from "../lib/agent/stats.ts";
import type { ToolSearchSettings } from "../lib/config/types.ts";
import type { CatalogueTool, ToolHost } from "../lib/connections/types.ts";
import { createEnvironment } from "../lib/env.ts";
import { createOpenAiProvider } from "../lib/llm/openai_provider.ts";
import { estimateTextTokens } from "../lib/llm/tokens.ts";
import { testLimits, testLlm } from "../tests/support/agent_fixtures.ts";
import { type ScriptedReply, startScriptedLlm } from "../tests/support/scripted_llm.ts";
import { ScriptedUi } from "../tests/support/scripted_ui.ts";

const VERBS = ["create", "list", "get", "update", "delete", "search", "merge", "archive"];
const NOUNS = [
  "issue",
  "pull_request",
  "branch",
  "release",
  "comment",
  "label",
  "milestone",
  "workflow",
  "deployment",
  "secret",
  "webhook",
  "team",
  "project",
  "discussion",
  "package",
  "gist",
  "commit",
  "tag",
  "runner",
  "environment",
  "invitation",
  "reaction",
  "review",
  "artifact",
  "check",
];

/** `count` tools over servers of 25 tools each. */
function catalogue(count: number): CatalogueTool[] {
  return Array.from({ length: count }, (_, i) => {
    const verb = VERBS[i % VERBS.length];
    const noun = NOUNS[Math.floor(i / VERBS.length) % NOUNS.length];
    const server = `server${Math.floor(i / 25) + 1}`;
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
          ...(i % 2 === 0 ? { state: { type: "string", enum: ["open", "closed", "all"] } } : {}),
        },
        required: ["owner", "repo"],
      },
    };
  });
}

function host(tools: CatalogueTool[]): ToolHost {
  return {
    tools: () => tools,
    callTool: (): Promise<CallToolResult> =>
      Promise.resolve({ content: [{ type: "text", text: '{"id": 1, "state": "open"}' }] }),
  };
}

const llm = await startScriptedLlm();
const config = testLlm(llm.baseUrl);
const provider = createOpenAiProvider({ llm: config, env: createEnvironment({}) });
const figures = new Map<string, number[]>();

async function turn(count: number, mode: ToolSearchSettings["mode"]): Promise<void> {
  const tools = catalogue(count);
  const target = tools[Math.min(3, count - 1)];
  const limits = { ...testLimits(), toolSearch: { mode, maxTools: 40, maxTokens: 10_000 } };
  const agent = new Agent({
    provider,
    tools: host(tools),
    ui: new ScriptedUi(),
    llm: config,
    limits,
    stats: new UsageStats(limits),
    approval: new ApprovalPolicy(tools.map((t) => ({ name: t.server, trusted: true }))),
  });
  const call: ScriptedReply = {
    toolCalls: [{ name: target.name, arguments: { owner: "o", repo: "r" } }],
  };
  const replies: ScriptedReply[] = mode === "never" ? [call, { text: "Done." }] : [
    { toolCalls: [{ name: "find_tools", arguments: { query: target.originalName } }] },
    call,
    { text: "Done." },
  ];
  const first = llm.requests.length;
  llm.enqueue(...replies);
  await agent.runTurn(`please ${target.originalName.replace("_", " ")}`);
  const tokens = llm.requests.slice(first).map((r) => estimateTextTokens(JSON.stringify(r.body)));
  figures.set(`${count} tools, search ${mode}`, tokens);
}

for (const count of [5, 200]) {
  for (const mode of ["never", "always"] as const) {
    Deno.bench(`one turn, ${count} tools, tool search ${mode}`, async () => {
      await turn(count, mode);
    });
  }
}

globalThis.addEventListener("unload", () => {
  console.log("\nEstimated tokens per request (each request of one turn, then the total):");
  for (const [label, tokens] of figures) {
    const total = tokens.reduce((a, b) => a + b, 0);
    console.log(`  ${label.padEnd(26)} ${tokens.join(" + ")} = ${total}`);
  }
  provider.close();
  void llm.close();
});
