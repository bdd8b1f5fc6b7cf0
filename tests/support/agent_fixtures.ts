/**
 * Builds the agent the way the REPL will: real provider (against the scripted model
 * server), real MCP servers behind a ToolHost, a scripted UI, shared statistics.
 *
 * @module
 */

import type { ToolHost } from "../../lib/connections/types.ts";
import type { AgentLimits, LlmConfig } from "../../lib/config/types.ts";
import { createEnvironment } from "../../lib/env.ts";
import { Agent } from "../../lib/agent/agent.ts";
import { ApprovalPolicy } from "../../lib/agent/approval.ts";
import { ScriptedUi, type ScriptedUiOptions } from "./scripted_ui.ts";
import { UsageStats } from "../../lib/agent/stats.ts";
import { createSamplingHandler } from "../../lib/agent/sampling.ts";
import { createOpenAiProvider } from "../../lib/llm/openai_provider.ts";
import type { ModelProvider } from "../../lib/llm/provider.ts";
import type { StoredMessage } from "../../lib/memory/types.ts";
import { everythingEntry, filesystemEntry, NODE } from "./deps.ts";
import type { StdioServerSpec } from "./sdk_tool_host.ts";

/** server-everything over stdio, named `everything`. */
export function everythingServer(): StdioServerSpec {
  return { name: "everything", command: NODE, args: [everythingEntry(), "stdio"] };
}

/**
 * server-filesystem over stdio, named `fs`, allowed `dir`. As root, the file-permission
 * capabilities are dropped (setpriv) so the server meets the same refusals a normal user
 * would: root bypasses file modes otherwise.
 */
export function filesystemServer(dir: string): StdioServerSpec {
  if (Deno.uid() === 0) {
    return {
      name: "fs",
      command: "setpriv",
      args: ["--bounding-set=-dac_override,-dac_read_search", NODE, filesystemEntry(), dir],
    };
  }
  return { name: "fs", command: NODE, args: [filesystemEntry(), dir] };
}

/** Default limits for tests: generous, so each test names the one it exercises. */
export function testLimits(overrides: Partial<AgentLimits> = {}): AgentLimits {
  return { toolCallTimeoutSeconds: 10, maxSteps: 8, ...overrides };
}

/** A model configuration for the scripted server. */
export function testLlm(baseUrl: string, overrides: Partial<LlmConfig> = {}): LlmConfig {
  return {
    provider: "openai-compatible",
    model: "scripted-model",
    maxTokens: 256,
    maxContextLength: 100_000,
    timeoutSeconds: 10,
    maxRetries: 2,
    baseUrl,
    ...overrides,
  };
}

/** Options of {@linkcode buildAgent}. */
export interface AgentFixtureOptions {
  baseUrl: string;
  host: ToolHost;
  ui?: ScriptedUi;
  uiOptions?: ScriptedUiOptions;
  llm?: Partial<LlmConfig>;
  limits?: Partial<AgentLimits>;
  /** Servers' trust (default: none trusted). */
  trusted?: string[];
  stats?: UsageStats;
  provider?: ModelProvider;
}

/** An agent and everything around it. */
export interface AgentFixture {
  agent: Agent;
  ui: ScriptedUi;
  stats: UsageStats;
  provider: ModelProvider;
  /** What `onMessage` received, in order. */
  stored: StoredMessage[];
  [Symbol.dispose](): void;
}

/** Builds an agent over `host` and the scripted model server at `baseUrl`. */
export function buildAgent(options: AgentFixtureOptions): AgentFixture {
  const llm = testLlm(options.baseUrl, options.llm);
  const limits = testLimits(options.limits);
  const ui = options.ui ?? new ScriptedUi(options.uiOptions);
  const stats = options.stats ?? new UsageStats(limits);
  const provider = options.provider ??
    createOpenAiProvider({ llm, env: createEnvironment({}), random: () => 0 });
  const stored: StoredMessage[] = [];
  const trusted = new Set(options.trusted ?? []);
  const agent = new Agent({
    provider,
    tools: options.host,
    ui,
    llm,
    limits,
    stats,
    approval: new ApprovalPolicy(
      options.host.tools().map((t) => ({ name: t.server, trusted: trusted.has(t.server) })),
    ),
    onMessage: (message) => stored.push(message),
  });
  return {
    agent,
    ui,
    stats,
    provider,
    stored,
    [Symbol.dispose]: () => provider.close(),
  };
}

/** A sampling handler wired like the REPL will wire it. */
export function buildSamplingHandler(
  fixture: Pick<AgentFixture, "ui" | "stats" | "provider">,
  sampling: Record<string, "ask" | "allow" | "deny">,
  limits: AgentLimits = testLimits(),
) {
  return createSamplingHandler({
    provider: fixture.provider,
    ui: fixture.ui,
    stats: fixture.stats,
    limits,
    llm: { maxTokens: 256 },
    servers: Object.entries(sampling).map(([name, setting]) => ({ name, sampling: setting })),
  });
}

/** A ToolHost with no servers. */
export const noTools: ToolHost = {
  tools: () => [],
  callTool: () => Promise.reject(new Error("no tools")),
};

/** The roles of a history, for compact assertions. */
export function roles(messages: readonly StoredMessage[]): string[] {
  return messages.map((m) =>
    m.role === "assistant" && m.toolCalls?.length
      ? `assistant(${m.toolCalls.length} calls)`
      : m.role
  );
}

/** Checks every assistant tool call is followed by exactly its results. */
export function assertConsistent(messages: readonly StoredMessage[]): void {
  for (let i = 0; i < messages.length; i++) {
    const calls = messages[i].toolCalls ?? [];
    if (calls.length === 0) continue;
    const results = messages.slice(i + 1, i + 1 + calls.length);
    const ids = results.map((m) => m.role === "tool" ? m.toolCallId : `(${m.role})`);
    if (JSON.stringify(ids) !== JSON.stringify(calls.map((c) => c.id))) {
      throw new Error(
        `tool calls ${calls.map((c) => c.id).join(",")} answered by ${ids.join(",")}`,
      );
    }
  }
}
