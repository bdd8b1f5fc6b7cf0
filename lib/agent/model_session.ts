/**
 * Wires the model side of a session from the configuration: the provider, the usage
 * statistics, the approval policy and the sampling handler, shared by every agent of the
 * session.
 *
 * The order matters and is why this exists: the sampling handler must be handed to the
 * connection manager before it connects, while agents need the manager's tools. So the
 * REPL creates the session first (which also checks LLM_API_KEY before any server is
 * started), gives `session.sampling` to the connection manager, then calls
 * `session.createAgent(manager)`.
 *
 * @module
 */

import type { SkillSource } from "./skill_tool.ts";
import type { Surface } from "./tool_failure.ts";
import type { ServerRequestHandlers, ToolHost } from "../connections/types.ts";
import type { Config, ServerConfig } from "../config/types.ts";
import type { Environment } from "../env.ts";
import { createProvider } from "../llm/create_provider.ts";
import { maskedProvider } from "../llm/masked_provider.ts";
import { tracedProvider } from "../telemetry/model_span.ts";
import type { ModelProvider } from "../llm/provider.ts";
import { type Log, silentLog } from "../log/log.ts";
import type { StoredMessage } from "../memory/types.ts";
import { type Redactor, sessionRedactor } from "../redact/redact.ts";
import { Agent } from "./agent.ts";
import { ApprovalPolicy, type RememberedApprovals } from "./approval.ts";
import { createSamplingHandler } from "./sampling.ts";
import { formatStats, UsageStats } from "./stats.ts";
import type { AgentUi } from "./ui.ts";
import type { Hooks } from "../hooks/hooks.ts";

/** Options of {@linkcode createModelSession}. */
export interface ModelSessionOptions {
  config: Pick<Config, "llm" | "agent" | "servers">;
  env: Environment;
  ui: AgentUi;
  /** Receives LLM_API_KEY, so that no log line or error shows it. */
  redactor?: Redactor;
  /** @default silent */
  log?: Log;
  /** Supplies the provider (tests). @default the provider for `config.llm` (`create_provider.ts`) */
  provider?: ModelProvider;
  /** Approvals remembered for the project folder, and where to keep new ones. */
  remembered?: RememberedApprovals;
}

/** Options of {@linkcode ModelSession.createAgent}. */
export interface CreateAgentOptions {
  /** A stored conversation to continue. */
  history?: readonly StoredMessage[];
  /** Receives each new message of the conversation, in order. */
  onMessage?: (message: StoredMessage) => void;
  /** Where tool failures are shown, which decides the commands remedies name. @default "repl" */
  surface?: Surface;
  /** The connected servers' skills, offered to the model. @default none */
  skills?: SkillSource;
  /** The conversation's id, kept with the tasks its tool calls start. */
  conversation?: () => string | undefined;
  /** The session's hooks (docs/hooks.md). @default none */
  hooks?: Hooks;
}

/** The model side of one session. */
export interface ModelSession {
  readonly provider: ModelProvider;
  readonly stats: UsageStats;
  readonly approval: ApprovalPolicy;
  /** Give this to the connection manager as `ServerRequestHandlers.sampling`. */
  readonly sampling: NonNullable<ServerRequestHandlers["sampling"]>;
  /** A conversation over `tools` (the connection manager). */
  createAgent(tools: ToolHost, options?: CreateAgentOptions): Agent;
  /**
   * The server entries as `/refresh` read them again: their `trusted` and `sampling`
   * apply from the next call or request on.
   */
  setServers(servers: readonly ServerConfig[]): void;
  /** The `/api_stats` text. */
  formatStats(): string;
  /** Releases the provider's HTTP client. */
  close(): void;
}

/**
 * Builds the session. Throws `InvalidApiKeyError` (before any request) when LLM_API_KEY is
 * missing or cannot be a key of the configured provider.
 */
export function createModelSession(options: ModelSessionOptions): ModelSession {
  const { config, ui } = options;
  const log = options.log ?? silentLog;
  const created = options.provider ?? createProvider({
    llm: config.llm,
    env: options.env,
    redactor: options.redactor,
    log: log.child("llm"),
  });
  // The model's output is untrusted: masked where it enters, as a server's is.
  // Each request's span is made around the provider itself (lib/telemetry/model_span.ts).
  const provider = maskedProvider(tracedProvider(created), options.redactor ?? sessionRedactor);
  const stats = new UsageStats(config.agent, new Date(), config.llm.price);
  const approval = new ApprovalPolicy(config.servers, options.remembered);
  let servers: readonly ServerConfig[] = config.servers;
  const sampling = createSamplingHandler({
    provider,
    ui,
    stats,
    limits: config.agent,
    llm: config.llm,
    servers: () => servers,
    log: log.child("sampling"),
  });
  return {
    provider,
    stats,
    approval,
    sampling,
    setServers: (next) => {
      servers = next;
      approval.setServers(next);
    },
    createAgent: (tools, agentOptions = {}) =>
      new Agent({
        provider,
        tools,
        ui,
        llm: config.llm,
        limits: config.agent,
        stats,
        approval,
        history: agentOptions.history,
        onMessage: agentOptions.onMessage,
        surface: agentOptions.surface,
        skills: agentOptions.skills,
        conversation: agentOptions.conversation,
        hooks: agentOptions.hooks,
        log: log.child("agent"),
      }),
    formatStats: () => formatStats(stats.snapshot()),
    close: () => provider.close(),
  };
}
