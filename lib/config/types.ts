/**
 * The configuration as the rest of patchbay sees it: validated, variables expanded,
 * defaults applied, durations still in seconds (as written) and named so.
 *
 * @module
 */

import type { ConfigProblem } from "../errors.ts";
import type { PricePerMillionTokens } from "../llm/prices.ts";
import type { ProviderName } from "../providers.ts";

export type TransportType = "stdio" | "streamable_http" | "sse";

/**
 * Which file a configuration (or a server's entry) comes from: the user's
 * (`~/.config/patchbay/servers_config.json`), the project's (`./servers_config.json`), the
 * administrator's policy (`settings`), the one file `--config` names (`explicit`), or the
 * example standing in for none.
 */
export type ConfigScope = "user" | "project" | "managed" | "explicit" | "example";

/**
 * An entry's `protocol`: `auto` (negotiate), `legacy` (the 2025 handshake only), or one
 * revision (e.g. `2026-07-28`), the only one accepted.
 */
export type ProtocolSetting = string;

export interface LlmConfig {
  provider: ProviderName;
  model: string;
  maxTokens: number;
  /** `undefined`: not sent; the provider's default applies. */
  temperature?: number;
  maxContextLength: number;
  /** Explicit base URL (overrides the preset). */
  baseUrl?: string;
  /** Azure OpenAI resource endpoint. */
  endpoint?: string;
  /** Azure OpenAI deployment (defaults to the model). */
  deployment?: string;
  /** Azure OpenAI API version. */
  apiVersion?: string;
  systemPrompt?: string;
  timeoutSeconds: number;
  maxRetries: number;
  /**
   * Whether images go to the model as image parts (`auto`: by provider and model name).
   * @default DEFAULTS.llm.vision (the loader always sets it)
   */
  vision?: boolean | "auto";
  /**
   * Anthropic: cache breakpoints on each request's stable prefix (`LLM.prompt_caching`).
   * @default DEFAULTS.llm.promptCaching (true)
   */
  promptCaching?: boolean;
  /** `LLM.price`: replaces the price table's entry for the session's cost estimate. */
  price?: PricePerMillionTokens;
}

/** How patchbay obtains tokens: a person in a browser, or the client's own credentials. */
export type OAuthGrant = "authorization_code" | "client_credentials";

/** JWS algorithms for `private_key_jwt` client assertions (asymmetric only). */
export const CLIENT_ASSERTION_ALGS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
] as const;

export interface OAuthSettings {
  method: "oauth";
  /** @default DEFAULTS.oauth.grant ("authorization_code") */
  grant?: OAuthGrant;
  clientId?: string;
  clientSecret?: string;
  /**
   * The client's private key for `private_key_jwt` (PEM PKCS#8 or a JWK as JSON), read from
   * `auth.private_key` or the file `auth.private_key_file` when the entry is loaded.
   */
  privateKey?: string;
  /** Where {@linkcode privateKey} came from, for messages: `auth.private_key_file (<path>)`. */
  privateKeySource?: string;
  /** The absolute path of `auth.private_key_file`, when the key came from a file. */
  privateKeyFile?: string;
  /** @default DEFAULTS.oauth.privateKeyAlg ("RS256") */
  privateKeyAlg?: (typeof CLIENT_ASSERTION_ALGS)[number];
  /** DPoP-bound tokens (RFC 9449). @default DEFAULTS.oauth.dpop (false) */
  dpop?: boolean;
  scopes?: string[];
  clientMetadataUrl?: string;
  /**
   * Hosts whose OAuth endpoints may be on a non-public address although the server is not
   * (lib/oauth/endpoint_policy.ts). @default none
   */
  allowInternalHosts?: string[];
}

interface ServerCommon {
  name: string;
  /** Seconds to connect and to answer one request. */
  timeoutSeconds: number;
  /** Tools run without asking. */
  trusted: boolean;
  sampling: "ask" | "allow" | "deny";
  disabled: boolean;
  /**
   * Absolute folders offered to the server as MCP roots; `undefined`: the roots capability
   * is not declared to this server at all.
   */
  roots?: string[];
  /** transport_type was not written and was inferred from the other fields. */
  transportInferred: boolean;
  /**
   * Why patchbay chose `transport` for a `url` when the entry does not say (`config check`
   * and `/connections` show it); absent when `transport_type` is written, and for a command.
   */
  transportReason?: string;
  /** Which protocol revision to speak (`protocol`). @default "auto" */
  protocol?: ProtocolSetting;
  /** `include_tools`: patterns of the tools offered. @default every tool */
  includeTools?: string[];
  /** `exclude_tools`: patterns of the tools never offered. @default none */
  excludeTools?: string[];
  /** `disabled` was switched for this session (`/mcp`), not read from the file. */
  switchedForSession?: boolean;
  /** Which file the entry comes from, when several make the configuration. */
  scope?: ConfigScope;
  /**
   * The administrator's policy refuses the server (docs/policy.md): it is `disabled` too,
   * so nothing starts it nor grants it anything, and every surface says why.
   */
  refused?: PolicyRefusal;
  /** The server's tools the policy's `denied_tools` refuse. */
  deniedTools?: DeniedTools;
}

/** Why the administrator's policy refuses a server. */
export interface PolicyRefusal {
  /** The policy file. */
  file: string;
  /** The rule that decided, in words: `denied_servers[0] {"name": "x*"} matches it`. */
  reason: string;
}

/** The `denied_tools` patterns of the administrator's policy that apply to one server. */
export interface DeniedTools {
  /** The policy file. */
  file: string;
  /** Each pattern as written (`github.delete_*`) and its tool part (`delete_*`). */
  patterns: readonly { written: string; tool: string }[];
}

export interface StdioServerConfig extends ServerCommon {
  transport: "stdio";
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Absolute working directory, if one was configured. */
  cwd?: string;
}

export interface HttpServerConfig extends ServerCommon {
  transport: "streamable_http" | "sse";
  url: string;
  headers: Record<string, string>;
  auth?: OAuthSettings;
  sseReadTimeoutSeconds: number;
  /**
   * Seconds within which a server that died is noticed (keep-alive pings); 0: off.
   * @default DEFAULTS.server.pingIntervalSeconds (the loader always sets it)
   */
  pingIntervalSeconds?: number;
}

export type ServerConfig = StdioServerConfig | HttpServerConfig;

export interface AgentLimits {
  toolCallTimeoutSeconds: number;
  /**
   * Seconds a message waits for servers still connecting.
   * @default DEFAULTS.agent.connectWaitSeconds (the loader always sets it)
   */
  connectWaitSeconds?: number;
  maxSteps: number;
  /** `undefined`: unlimited. */
  requestLimit?: number;
  /** `undefined`: unlimited. */
  totalTokensLimit?: number;
  /** @default DEFAULTS.agent.toolSearch (the loader always sets it) */
  toolSearch?: ToolSearchSettings;
  /** Servers' sampling requests per session. @default DEFAULTS.agent.samplingRequestLimit */
  samplingRequestLimit?: number;
  /** Sampling requests during one tool call. @default DEFAULTS.agent.samplingPerToolCall */
  samplingPerToolCall?: number;
}

/** When the model finds tools by search instead of receiving every definition. */
export interface ToolSearchSettings {
  mode: "auto" | "always" | "never";
  /** `auto` searches above this many tools. */
  maxTools: number;
  /** `auto` searches above this many estimated tokens of tool definitions. */
  maxTokens: number;
}

export interface MemorySettings {
  backend: "auto" | "redis" | "file" | "off";
  ttlSeconds?: number;
  keyPrefix: string;
  sentinels?: string[];
  sentinelName?: string;
  clusterNodes?: string[];
}

/** The `Trace` section (docs/trace.md). */
export interface TraceSettings {
  /** As written: relative to the configuration file's folder. */
  file: string;
  model: boolean;
  modelBodies: boolean;
}

export interface Config {
  /** Path of the file it was read from. */
  file: string;
  llm: LlmConfig;
  /** In file order. */
  servers: ServerConfig[];
  agent: AgentLimits;
  memory: MemorySettings;
  /** The wire trace asked for in the file (`Trace`), as written there. */
  trace?: TraceSettings;
  /** Things worth saying that do not stop the client. */
  warnings: ConfigProblem[];
  /**
   * Values `${VAR}`s put into headers, server environments, arguments and URLs: secrets,
   * masked wherever patchbay shows or passes on text (docs/security-hostile-servers.md).
   */
  secretValues?: readonly string[];
  /**
   * The files the configuration was read from, lowest precedence first (docs/
   * configuration.md, "Scopes"); the administrator's policy file last when there is one.
   */
  sources?: readonly ConfigSource[];
  /** The administrator's policy in effect, when there is one (docs/policy.md). */
  policy?: AppliedPolicy;
  /** What to tell the person about how the files were read together (an entry replaced). */
  notices?: readonly string[];
}

/** One file a configuration was read from. */
export interface ConfigSource {
  scope: ConfigScope;
  path: string;
}

/** What the administrator's policy does to this configuration. */
export interface AppliedPolicy {
  file: string;
  /** `require_approval`: every tool call and sampling request asks a person. */
  requireApproval: boolean;
  /** Its `settings`' top-level blocks and fields forced over the user's and project's. */
  forced: readonly string[];
}
