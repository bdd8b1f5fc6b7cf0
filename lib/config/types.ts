/**
 * The configuration as the rest of patchbay sees it: validated, variables expanded,
 * defaults applied, durations still in seconds (as written) and named so.
 *
 * @module
 */

import type { ConfigProblem } from "../errors.ts";
import type { PricePerMillionTokens } from "../llm/prices.ts";
import type { HooksConfig } from "../hooks/types.ts";
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

/**
 * A program patchbay runs for a secret (`headers_helper`, `LLM.api_key_helper`;
 * docs/secrets.md): started like a stdio server's command (no shell), in the
 * configuration's folder, with a minimal environment plus its own `env`.
 */
export interface HelperCommand {
  /** A name looked up on PATH, or an absolute path (a relative one is made so at load). */
  command: string;
  args: string[];
  /** Variables of its own, over the minimal environment it inherits. */
  env: Record<string, string>;
  /** The configuration file's folder: where it runs. */
  cwd: string;
}

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
  /** `LLM.api_key_helper`: prints the key, instead of LLM_API_KEY (docs/secrets.md). */
  apiKeyHelper?: HelperCommand;
  /**
   * Seconds the helper's key is used before it runs again (`LLM.api_key_helper_ttl`).
   * @default DEFAULTS.secrets.apiKeyHelperTtlSeconds
   */
  apiKeyHelperTtlSeconds?: number;
}

/**
 * How patchbay obtains tokens: a person in a browser, the client's own credentials, a
 * workload's JWT (RFC 7523), or the person's ID token exchanged at the organisation's
 * identity provider (RFC 8693, then RFC 7523).
 */
export const OAUTH_GRANTS = [
  "authorization_code",
  "client_credentials",
  "jwt_bearer",
  "token_exchange",
] as const;

/** One of {@linkcode OAUTH_GRANTS}. */
export type OAuthGrant = (typeof OAUTH_GRANTS)[number];

/**
 * A credential patchbay reads when it needs one (never kept): a file read again each time,
 * or a command (program and arguments, no shell) whose stdout is the credential.
 */
export interface CredentialSource {
  /** The configuration field it was written in, for messages (`auth.assertion_file`). */
  field: string;
  /** Absolute path of the file. */
  file?: string;
  /** The command line. */
  command?: string[];
}

/** `auth.idp`: the identity provider of grant `token_exchange`. */
export interface IdpSettings {
  /** The issuer URL (the token endpoint is discovered from its metadata). */
  issuer?: string;
  /** The token endpoint, when given instead of (or as well as) the issuer. */
  tokenEndpoint?: string;
  clientId?: string;
  clientSecret?: string;
  /** Where the person's ID token comes from. */
  subjectToken?: CredentialSource;
}

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
  /** Grant `jwt_bearer`: where the workload's JWT comes from. */
  assertion?: CredentialSource;
  /** Grant `token_exchange`: the identity provider. */
  idp?: IdpSettings;
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
  /**
   * When tools that allow it (`execution.taskSupport: "optional"`) run as MCP tasks
   * (`tasks`); tools that require it always do. @default DEFAULTS.server.tasks
   */
  tasks?: "auto" | "always" | "never";
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
  /** `headers_helper`: prints headers sent over `headers` (docs/secrets.md). */
  headersHelper?: HelperCommand;
  /**
   * Seconds its headers are used before it runs again (`headers_helper_ttl`).
   * @default DEFAULTS.secrets.headersHelperTtlSeconds (until a 401 or the next connection)
   */
  headersHelperTtlSeconds?: number;
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

/** The `Telemetry` section (docs/telemetry.md). */
export interface TelemetrySettings {
  /** The collector's OTLP/HTTP address, expanded and checked. */
  endpoint?: string;
  protocol?: "http/protobuf" | "http/json";
  /** Header name to value as written: `${VAR}`s unexpanded (the launcher expands them). */
  headers: Record<string, string>;
  serviceName?: string;
  captureContent: boolean;
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
  /** The `Hooks` section (docs/hooks.md); absent: no hooks. */
  hooks?: HooksConfig;
  /** Telemetry asked for in the file (`Telemetry`). */
  telemetry?: TelemetrySettings;
  /** Things worth saying that do not stop the client. */
  warnings: ConfigProblem[];
  /**
   * Values `${VAR}`s put into headers, server environments, arguments and URLs: secrets,
   * masked wherever patchbay shows or passes on text (docs/security-hostile-servers.md).
   */
  secretValues?: readonly string[];
  /**
   * The `${keychain:NAME}` entries the file uses, by NAME, once each: their values are in
   * the fields when the keychain was read (`loadConfig`'s `keychain`), else the references
   * stay as written.
   */
  keychainEntries?: readonly string[];
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
