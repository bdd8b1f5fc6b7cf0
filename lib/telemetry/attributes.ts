/**
 * Every name patchbay's telemetry uses, in one place: span names, attribute keys and metric
 * names. They follow the OpenTelemetry semantic conventions for generative AI (`gen_ai.*`,
 * https://opentelemetry.io/docs/specs/semconv/gen-ai/) and for MCP (`mcp.*`), and the
 * general ones (`error.type`, `server.address`, `network.transport`); what those do not
 * cover is `patchbay.*`. Another part of patchbay that knows more about a span (a task id,
 * cached tokens) sets it under the name given here.
 *
 * @module
 */

/** Attribute keys. */
export const ATTR = {
  // GenAI (gen-ai-spans.md, gen-ai-agent-spans.md)
  operationName: "gen_ai.operation.name",
  providerName: "gen_ai.provider.name",
  agentName: "gen_ai.agent.name",
  conversationId: "gen_ai.conversation.id",
  requestModel: "gen_ai.request.model",
  requestMaxTokens: "gen_ai.request.max_tokens",
  requestTemperature: "gen_ai.request.temperature",
  responseModel: "gen_ai.response.model",
  finishReasons: "gen_ai.response.finish_reasons",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  /** Prompt tokens the provider served from its cache (a provider that reports them). */
  cacheReadInputTokens: "gen_ai.usage.cache_read.input_tokens",
  tokenType: "gen_ai.token.type",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  promptName: "gen_ai.prompt.name",
  // Opt-in content (Telemetry.capture_content): what was said and done.
  inputMessages: "gen_ai.input.messages",
  outputMessages: "gen_ai.output.messages",
  toolCallArguments: "gen_ai.tool.call.arguments",
  toolCallResult: "gen_ai.tool.call.result",
  // MCP (mcp.md)
  mcpMethod: "mcp.method.name",
  mcpSessionId: "mcp.session.id",
  mcpProtocolVersion: "mcp.protocol.version",
  jsonrpcRequestId: "jsonrpc.request.id",
  rpcStatusCode: "rpc.response.status_code",
  // General
  errorType: "error.type",
  serverAddress: "server.address",
  serverPort: "server.port",
  networkTransport: "network.transport",
  // patchbay's own
  /** The server's name in the configuration (`mcpServers` key). */
  server: "patchbay.mcp.server",
  /** How a tool call ended: ok, error (the tool said so), timeout, cancelled, failed. */
  toolOutcome: "patchbay.tool.outcome",
  /** The MCP task a tool call runs as, when it runs as one (the Tasks extension). */
  taskId: "patchbay.task.id",
  /** The row of lib/failure_table.ts a failure belongs to (`timeout`, `network`, …). */
  failureKind: "patchbay.failure.kind",
  /** What failed: a model request, a tool call, a connection attempt. */
  failureDuring: "patchbay.failure.during",
  /** Usage was estimated by patchbay: the provider reported none. */
  usageEstimated: "patchbay.usage.estimated",
  retries: "patchbay.retries",
  steps: "patchbay.turn.steps",
  toolCalls: "patchbay.turn.tool_calls",
  /** Tools the server listed when the connection was made. */
  tools: "patchbay.mcp.tools",
} as const;

/** Values of {@linkcode ATTR.operationName}. */
export const OPERATION = {
  chat: "chat",
  agent: "invoke_agent",
  tool: "execute_tool",
} as const;

/** The agent's name on turn spans. */
export const AGENT_NAME = "patchbay";

/** The instrumentation scope of every span and metric. */
export const SCOPE = "patchbay";

/** Metric names. */
export const METRIC = {
  /** Histogram of tokens per model request, by `gen_ai.token.type` (input, output). */
  tokenUsage: "gen_ai.client.token.usage",
  /** Histogram of model request durations, seconds. */
  operationDuration: "gen_ai.client.operation.duration",
  /** Histogram of MCP request durations, seconds, by `mcp.method.name`. */
  mcpDuration: "mcp.client.operation.duration",
  /** Counter of model requests, by model and outcome. */
  modelRequests: "patchbay.model.requests",
  /** Counter of tool calls, by server, tool and outcome. */
  toolCalls: "patchbay.tool.calls",
  /** Counter of failures, by row of the failure table and what failed. */
  failures: "patchbay.failures",
} as const;

/**
 * Buckets of the MCP duration histogram, seconds, as the MCP conventions advise; the GenAI
 * one's are its own advice too.
 */
export const MCP_DURATION_BUCKETS = [
  0.01,
  0.02,
  0.05,
  0.1,
  0.2,
  0.5,
  1,
  2,
  5,
  10,
  30,
  60,
  120,
  300,
] as const;
export const GENAI_DURATION_BUCKETS = [
  0.01,
  0.02,
  0.04,
  0.08,
  0.16,
  0.32,
  0.64,
  1.28,
  2.56,
  5.12,
  10.24,
  20.48,
  40.96,
  81.92,
] as const;
export const TOKEN_BUCKETS = [
  1,
  4,
  16,
  64,
  256,
  1024,
  4096,
  16384,
  65536,
  262144,
  1048576,
  4194304,
  16777216,
  67108864,
] as const;

/** `gen_ai.provider.name` of each preset (the conventions' well-known values where one fits). */
export const GENAI_PROVIDERS: Readonly<Record<string, string>> = {
  openai: "openai",
  anthropic: "anthropic",
  gemini: "gcp.gemini",
  groq: "groq",
  deepseek: "deepseek",
  mistral: "mistral_ai",
  xai: "x_ai",
  azure: "azure.ai.openai",
};
