/**
 * Builds the agent the way the client does: real provider (against the scripted model
 * server), real MCP servers behind patchbay's connection manager, a scripted UI, shared
 * statistics.
 *
 * @module
 */

import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { ConnectionManager } from "../../lib/connections/manager.ts";
import { openConnections } from "../../lib/connections/open.ts";
import type { ServerStatus, ToolHost } from "../../lib/connections/types.ts";
import { parseConfig } from "../../lib/config/load.ts";
import type {
  AgentLimits,
  Config,
  LlmConfig,
  ServerConfig,
  StdioServerConfig,
} from "../../lib/config/types.ts";
import { createEnvironment } from "../../lib/env.ts";
import { Logger } from "../../lib/log/log.ts";
import { Agent } from "../../lib/agent/agent.ts";
import { ApprovalPolicy } from "../../lib/agent/approval.ts";
import { ScriptedUi, type ScriptedUiOptions } from "./scripted_ui.ts";
import { UsageStats } from "../../lib/agent/stats.ts";
import { createSamplingHandler } from "../../lib/agent/sampling.ts";
import { createOpenAiProvider } from "../../lib/llm/openai_provider.ts";
import type { ModelProvider } from "../../lib/llm/provider.ts";
import type { StoredMessage } from "../../lib/memory/types.ts";
import { createModelSession, type ModelSession } from "../../lib/agent/model_session.ts";
import { filesystemEntry, NODE } from "./deps.ts";
import { stdioEntry } from "./servers.ts";

/**
 * server-filesystem over stdio, named `fs`, allowed `dir`. As root, the file-permission
 * capabilities are dropped (setpriv) so the server meets the same refusals a normal user
 * would: root bypasses file modes otherwise.
 */
export function filesystemServer(dir: string): StdioServerConfig {
  if (Deno.uid() === 0) {
    return stdioEntry("fs", "setpriv", [
      "--bounding-set=-dac_override,-dac_read_search",
      NODE,
      filesystemEntry(),
      dir,
    ]);
  }
  return stdioEntry("fs", NODE, [filesystemEntry(), dir]);
}

/**
 * patchbay's connection manager over `servers`, started; fails unless every one connected.
 * `await using` closes it (server processes included).
 */
export async function connectServers(servers: ServerConfig[]): Promise<ConnectionManager> {
  const manager = new ConnectionManager({ servers });
  const failure = notConnected(await manager.start());
  if (failure) {
    await manager.close();
    throw failure;
  }
  return manager;
}

/** An error naming the servers that did not connect, and why; `undefined` if all did. */
function notConnected(states: readonly ServerStatus[]): Error | undefined {
  const failed = states.filter((s) => s.state !== "connected");
  if (failed.length === 0) return undefined;
  return new Error(
    `servers did not connect: ${
      failed.map((s) => `${s.name} ${s.state} (${s.error?.reason})`).join("; ")
    }`,
  );
}

/** A stdio entry whose server's input is copied to a file, and what it was sent. */
export interface TappedEntry {
  entry: StdioServerConfig;
  /** Every JSON-RPC message patchbay wrote to the server so far. */
  sent(): Promise<JSONRPCMessage[]>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * `entry` behind a `tee` that copies what patchbay writes to the server's stdin to a file.
 * Some servers do not show what they receive (server-everything ignores
 * `notifications/cancelled`), and the connection manager keeps its transport to itself;
 * the copy shows what really went over the wire.
 */
export async function tapped(entry: StdioServerConfig): Promise<TappedEntry> {
  const file = await Deno.makeTempFile({ prefix: "patchbay-tap-" });
  return {
    entry: {
      ...entry,
      command: "sh",
      args: ["-c", 'tee "$0" | exec "$@"', file, entry.command, ...entry.args],
    },
    sent: async () =>
      (await Deno.readTextFile(file)).split("\n").filter((line) => line !== "").map((line) =>
        JSON.parse(line)
      ),
    [Symbol.asyncDispose]: () => Deno.remove(file),
  };
}

/**
 * A servers_config.json for the scripted model at `baseUrl`, read by patchbay's own
 * configuration loader. `file` adds to it or replaces its sections.
 */
export function scriptedConfig(baseUrl: string, file: Record<string, unknown> = {}): Config {
  return parseConfig(
    JSON.stringify({
      LLM: {
        provider: "openai-compatible",
        model: "scripted-model",
        base_url: baseUrl,
        max_tokens: 256,
      },
      mcpServers: {},
      AgentConfig: { tool_call_timeout: 10, max_steps: 8 },
      ...file,
    }),
    "servers_config.json",
    createEnvironment({}),
  );
}

/** A session wired by {@linkcode wireSession}. */
export interface WiredSession {
  model: ModelSession;
  agent: Agent;
  ui: ScriptedUi;
  /** What `onMessage` received, in order. */
  stored: StoredMessage[];
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * The model side and the servers of `config`, wired as the interactive client wires them
 * (`ClientSession`): the model session first, its sampling handler handed to
 * `openConnections` before any server connects, then an agent over the connection manager.
 * Fails unless every server connected.
 */
export async function wireSession(
  config: Config,
  ui = new ScriptedUi(),
  env = createEnvironment({}),
): Promise<WiredSession> {
  const model = createModelSession({ config, env, ui });
  let manager: ConnectionManager;
  try {
    ({ manager } = await openConnections(
      { ...config, env, logger: new Logger() },
      { handlers: { sampling: model.sampling } },
    ));
  } catch (error) {
    model.close();
    throw error;
  }
  const close = async () => {
    await manager.close();
    model.close();
  };
  const failure = notConnected(manager.states());
  if (failure) {
    await close();
    throw failure;
  }
  const stored: StoredMessage[] = [];
  const agent = model.createAgent(manager, { onMessage: (message) => stored.push(message) });
  return { model, agent, ui, stored, [Symbol.asyncDispose]: close };
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

/**
 * An agent without tools whose answers may be 4096 tokens long, under `total_tokens_limit`
 * `totalTokensLimit`: where the token limit, not the answer size, decides.
 */
export function tokenLimitedAgent(baseUrl: string, totalTokensLimit: number): AgentFixture {
  return buildAgent({
    baseUrl,
    host: noTools,
    llm: { maxTokens: 4096 },
    limits: { totalTokensLimit },
  });
}

/**
 * The session's sampling handler over a fixture's provider, UI and statistics, for tests
 * that give it to a connection manager themselves.
 */
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
