/**
 * The schema of servers_config.json (CONTRACT.md section 2), as written in the file.
 *
 * This zod schema is the single source: the loader validates with it and
 * `scripts/gen_schema.ts` turns it into `servers_config.schema.json` for editors
 * (a test keeps the two in step). Rules that span fields (which fields each transport
 * needs) are checked by the loader, which can word them better than a schema can.
 *
 * @module
 */

import { z } from "zod";
import { DEFAULTS } from "../defaults.ts";
import { PROVIDER_NAMES } from "../providers.ts";
import { PROTOCOL_MODES, PROTOCOL_REVISIONS } from "../revisions.ts";
import { CLIENT_ASSERTION_ALGS } from "./types.ts";

/**
 * Longest duration a configuration may give a wait (timeouts), in seconds: one day. No
 * request should take longer, and it keeps every timer far from the 2^31 ms (24.8 days)
 * beyond which timers fire at once instead (`lib/async/timers.ts`).
 */
export const MAX_DURATION_SECONDS = 86_400;

/** Longest `Memory.ttl_seconds`: ten years (365-day years), a bound for date arithmetic. */
export const MAX_TTL_SECONDS = 10 * 365 * 86_400;

const seconds = (what: string, fallback?: number) =>
  z.number().positive().max(MAX_DURATION_SECONDS).describe(
    `${what}, in seconds${
      fallback === undefined ? "" : ` (default ${fallback})`
    }; at most ${MAX_DURATION_SECONDS} (one day)`,
  );

/** Fields whose value is a duration in seconds (for messages that name the unit). */
export const DURATION_FIELDS: ReadonlySet<string> = new Set([
  "timeout",
  "sse_read_timeout",
  "tool_call_timeout",
  "ttl_seconds",
]);

const positiveInt = (what: string) => z.number().int().positive().describe(what);

/** Longest `AgentConfig.connect_wait`: a message should not wait on servers for long. */
export const MAX_CONNECT_WAIT_SECONDS = 300;
/** Longest `ping_interval`: a dead server is noticed within the hour at worst. */
export const MAX_PING_INTERVAL_SECONDS = 3600;

export const TRANSPORT_TYPES = ["stdio", "streamable_http", "sse"] as const;

export const LlmSchema = z.strictObject({
  provider: z.string().min(1).describe(
    `Model provider: ${PROVIDER_NAMES.join(", ")}`,
  ),
  model: z.string().min(1).describe("Model identifier, e.g. gpt-4o-mini"),
  max_tokens: positiveInt(
    `Cap on the tokens of one response (default ${DEFAULTS.llm.maxTokens})`,
  ).optional(),
  temperature: z.number().min(0).max(2).describe(
    "Sampling temperature; lower is more focused (default: the provider's)",
  ).optional(),
  max_context_length: positiveInt(
    `Tokens of conversation history kept (default ${DEFAULTS.llm.maxContextLength})`,
  ).optional(),
  base_url: z.string().min(1).describe(
    "OpenAI-compatible API address; overrides the provider's preset",
  ).optional(),
  endpoint: z.string().min(1).describe(
    "Azure only: the resource endpoint, https://<resource>.openai.azure.com",
  ).optional(),
  deployment: z.string().min(1).describe("Azure only: deployment name (default: model)")
    .optional(),
  api_version: z.string().min(1).describe("Azure only: API version, e.g. 2024-10-21")
    .optional(),
  system_prompt: z.string().describe("Replaces patchbay's system prompt").optional(),
  timeout: seconds("Time one model request may take", DEFAULTS.llm.timeoutSeconds).optional(),
  max_retries: z.number().int().min(0).max(10).describe(
    `Retries of a failed model request (default ${DEFAULTS.llm.maxRetries})`,
  ).optional(),
}).describe("Model settings");

export const AuthSchema = z.strictObject({
  method: z.literal("oauth").describe('"oauth" turns on OAuth for this server'),
  client_id: z.string().min(1).describe("Pre-registered OAuth client id").optional(),
  grant: z.enum(["authorization_code", "client_credentials"]).describe(
    '"authorization_code": a person logs in in the browser (default); "client_credentials": ' +
      "patchbay authenticates as the client itself, with client_secret or a private key, " +
      "for CI and hosts without a browser",
  ).optional(),
  client_secret: z.string().min(1).describe("Pre-registered OAuth client secret").optional(),
  private_key: z.string().min(1).describe(
    "The client's private key for private_key_jwt client authentication: PEM (PKCS#8) or a " +
      "JWK as JSON; write ${VARIABLE} to take it from .env or the environment",
  ).optional(),
  private_key_file: z.string().min(1).describe(
    "File holding the client's private key (PEM PKCS#8 or JWK JSON) for private_key_jwt; " +
      "relative to this file's folder",
  ).optional(),
  private_key_alg: z.enum(CLIENT_ASSERTION_ALGS).describe(
    `JWS algorithm of the private_key_jwt assertion (default ${DEFAULTS.oauth.privateKeyAlg})`,
  ).optional(),
  dpop: z.boolean().describe(
    `Ask for DPoP-bound tokens (RFC 9449) and sign every request with a proof key ` +
      `(default ${DEFAULTS.oauth.dpop})`,
  ).optional(),
  scopes: z.array(z.string().min(1)).describe("Scopes to request (default: the server's)")
    .optional(),
  client_metadata_url: z.string().min(1).describe(
    "HTTPS URL of a client ID metadata document to use as client_id",
  ).optional(),
  allow_internal_hosts: z.array(
    z.string().regex(
      /^(?:[^\s/:@?#[\]]+|\[?[0-9A-Fa-f:.]+\]?)$/,
      "a host name or IP address alone, without scheme, port or path (e.g. sso.corp.internal)",
    ),
  ).describe(
    "Hosts this server's OAuth endpoints may use on a private, loopback or link-local " +
      "address although the server itself is not on one (your own network's authorization " +
      "server); default none",
  ).optional(),
}).describe("Authentication; omit it and use headers for a bearer token");

export const ServerSchema = z.strictObject({
  transport_type: z.enum(TRANSPORT_TYPES).describe(
    "How to reach the server; inferred from command (stdio) or url (streamable_http) " +
      "when omitted",
  ).optional(),
  command: z.string().min(1).describe("stdio: executable that starts the server").optional(),
  args: z.array(z.string()).describe("stdio: arguments for the command").optional(),
  env: z.record(z.string(), z.string()).describe(
    "stdio: extra environment variables for the server process",
  ).optional(),
  cwd: z.string().min(1).describe(
    "stdio: working directory (relative to this file's folder)",
  ).optional(),
  url: z.string().min(1).describe("streamable_http / sse: http(s)://<host>:<port>/<path>")
    .optional(),
  headers: z.record(z.string(), z.string()).describe(
    "streamable_http / sse: extra request headers, e.g. Authorization: Bearer <token>",
  ).optional(),
  auth: AuthSchema.optional(),
  timeout: seconds(
    "Time to connect and to answer one request",
    DEFAULTS.server.timeoutSeconds,
  ).optional(),
  sse_read_timeout: seconds(
    "Time an event stream may stay silent before it is reopened",
    DEFAULTS.server.sseReadTimeoutSeconds,
  ).optional(),
  ping_interval: z.number().min(0).max(MAX_PING_INTERVAL_SECONDS).describe(
    "streamable_http / sse: a server that died is noticed within this many seconds " +
      "(an MCP ping after half of it without a word from the server, answered within the " +
      `other half); 0 turns the pings off (default ${DEFAULTS.server.pingIntervalSeconds}, ` +
      `at most ${MAX_PING_INTERVAL_SECONDS})`,
  ).optional(),
  roots: z.array(z.string().min(1)).min(1).describe(
    "Folders offered to the server as MCP roots (paths; relative ones against this file's " +
      "folder). Without it the server is not offered roots and keeps its own settings",
  ).optional(),
  trusted: z.boolean().describe("Run this server's tools without asking (default false)")
    .optional(),
  sampling: z.enum(["ask", "allow", "deny"]).describe(
    "Model requests from the server (sampling): ask, allow or deny (default ask)",
  ).optional(),
  disabled: z.boolean().describe("Keep the entry but do not connect (default false)")
    .optional(),
  protocol: z.enum([...PROTOCOL_MODES, ...PROTOCOL_REVISIONS]).describe(
    `MCP protocol revision: auto (default ${DEFAULTS.server.protocol}: probe for ` +
      `${PROTOCOL_REVISIONS[0]} with server/discover, else the 2025 initialize handshake), ` +
      "legacy (the 2025 handshake, no probe), or one revision to require",
  ).optional(),
}).describe("One MCP server");

export const AgentSchema = z.strictObject({
  tool_call_timeout: seconds(
    "Limit for one tool call",
    DEFAULTS.agent.toolCallTimeoutSeconds,
  ).optional(),
  connect_wait: z.number().min(0).max(MAX_CONNECT_WAIT_SECONDS).describe(
    "Seconds a message sent while servers are still connecting waits for them, then goes " +
      "with the tools of the servers that are connected " +
      `(default ${DEFAULTS.agent.connectWaitSeconds}, at most ${MAX_CONNECT_WAIT_SECONDS})`,
  ).optional(),
  request_limit: positiveInt("Model requests per session (default unlimited)").optional(),
  total_tokens_limit: positiveInt("Tokens per session (default unlimited)").optional(),
  max_steps: positiveInt(
    `Model requests per turn (default ${DEFAULTS.agent.maxSteps})`,
  ).optional(),
}).describe("Runtime limits");

export const MemorySchema = z.strictObject({
  backend: z.enum(["auto", "redis", "file", "off"]).describe(
    "auto (Redis when REDIS_URL or REDIS_HOST is set, or sentinels or cluster_nodes, else " +
      "the embedded store in the data directory), redis, file or off (nothing saved; " +
      "/memory turns it on)",
  ).optional(),
  ttl_seconds: z.number().int().positive().max(MAX_TTL_SECONDS).describe(
    "Seconds a conversation is kept after its last message (default: forever); at most " +
      `${MAX_TTL_SECONDS} (ten years)`,
  ).optional(),
  key_prefix: z.string().min(1).regex(
    /^[^\s{}]+$/,
    "no spaces or braces (braces would break Redis Cluster hash tags)",
  ).describe(
    `Prefix of Redis keys (default ${DEFAULTS.memory.keyPrefix}); keeps deployments apart`,
  ).optional(),
  sentinels: z.array(z.string().min(1)).describe(
    "Redis Sentinel addresses host:port; connects to the master named by sentinel_name",
  ).optional(),
  sentinel_name: z.string().min(1).describe("Redis Sentinel master group name").optional(),
  cluster_nodes: z.array(z.string().min(1)).describe(
    "Redis Cluster seed nodes host:port",
  ).optional(),
}).describe("Conversation memory store");

export const ConfigFileSchema = z.strictObject({
  $schema: z.string().describe("JSON Schema reference for editors").optional(),
  LLM: LlmSchema,
  mcpServers: z.record(z.string(), ServerSchema).describe(
    "Server name to server entry; may be empty {}",
  ),
  AgentConfig: AgentSchema.optional(),
  Memory: MemorySchema.optional(),
}).describe("patchbay configuration (servers_config.json)");

export type ConfigFile = z.infer<typeof ConfigFileSchema>;
export type ServerEntry = z.infer<typeof ServerSchema>;

/** Field names people write instead of the real ones, for did-you-mean hints. */
export const FIELD_ALIASES: Readonly<Record<string, string>> = {
  type: "transport_type",
  transport: "transport_type",
  transporttype: "transport_type",
  cmd: "command",
  arguments: "args",
  argv: "args",
  environment: "env",
  workdir: "cwd",
  root: "roots",
  folders: "roots",
  directories: "roots",
  working_directory: "cwd",
  serverurl: "url",
  endpoint: "url",
  uri: "url",
  header: "headers",
  authentication: "auth",
  timeout_seconds: "timeout",
  keepalive: "ping_interval",
  keep_alive: "ping_interval",
  keepalive_interval: "ping_interval",
  heartbeat: "ping_interval",
  readtimeout: "sse_read_timeout",
  protocol_version: "protocol",
  protocolversion: "protocol",
  llm: "LLM",
  servers: "mcpServers",
  mcp_servers: "mcpServers",
  mcpservers: "mcpServers",
  agent: "AgentConfig",
  agentconfig: "AgentConfig",
  agent_config: "AgentConfig",
  memory: "Memory",
  maxtokens: "max_tokens",
  max_output_tokens: "max_tokens",
  context_length: "max_context_length",
  max_context: "max_context_length",
  baseurl: "base_url",
  api_base: "base_url",
  api_base_url: "base_url",
  timeout: "tool_call_timeout",
  max_requests: "request_limit",
  token_limit: "total_tokens_limit",
  max_iterations: "max_steps",
};

/** Values people write for transport_type, mapped to the real ones. */
export const TRANSPORT_ALIASES: Readonly<Record<string, string>> = {
  http: "streamable_http",
  "streamable-http": "streamable_http",
  streamablehttp: "streamable_http",
  streamable: "streamable_http",
  https: "streamable_http",
  "server-sent-events": "sse",
  process: "stdio",
  local: "stdio",
};
