/**
 * Names people write instead of the configuration's own, for did-you-mean hints.
 *
 * @module
 */

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
  headershelper: "headers_helper",
  apikeyhelper: "api_key_helper",
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
