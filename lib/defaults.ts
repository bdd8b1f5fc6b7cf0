/**
 * Every default patchbay applies, in one place. docs/configuration.md mirrors this file;
 * `tests/project/docs_test.ts` keeps the two in step.
 *
 * Units: every duration in configuration is in seconds.
 *
 * @module
 */

export const DEFAULTS = {
  /** Looked up in the working directory when `--config` is not given. */
  configFile: "servers_config.json",
  /** Used, with a notice, when neither `--config` nor ./servers_config.json exists. */
  exampleConfigFile: "servers_config.example.json",
  /** Looked up in the working directory when `--env-file` is not given. */
  envFile: ".env",

  llm: {
    /** Cap on the tokens of one model response. */
    maxTokens: 4096,
    /** `undefined`: not sent, so the provider's own default applies (some models reject it). */
    temperature: undefined as number | undefined,
    /** Tokens of conversation kept when trimming history (system prompt always kept). */
    maxContextLength: 128_000,
    /** Seconds one model request may take before it is abandoned. */
    timeoutSeconds: 120,
    /** Retries of a failed model request (429, 5xx, dropped connection), with backoff. */
    maxRetries: 2,
    /**
     * `auto`: images go to the model as image parts when the provider and model name say it
     * takes them (`visionByModel` in lib/providers.ts); `true` always, `false` never.
     */
    vision: "auto" as boolean | "auto",
    /**
     * Anthropic's Messages API: `cache_control` breakpoints on the stable prefix (tools,
     * system prompt, the conversation so far), read back at a tenth of the input price.
     */
    promptCaching: true,
  },

  server: {
    /** Seconds to connect (start-up handshake) and to answer one request. */
    timeoutSeconds: 30,
    /** Seconds an SSE / streamable HTTP event stream may stay silent before it is reopened. */
    sseReadTimeoutSeconds: 300,
    /**
     * Seconds within which a streamable HTTP / SSE server that died is noticed: one that
     * has sent nothing for half of it gets an MCP ping, answered within the other half.
     * `0` turns the pings off.
     */
    pingIntervalSeconds: 30,
    /** Tools need the user's approval unless the entry is trusted. */
    trusted: false,
    /** `ask`: server sampling requests need the user's approval. */
    sampling: "ask" as "ask" | "allow" | "deny",
    /**
     * No roots: the roots capability is not declared, so a server keeps the folders it was
     * given (server-filesystem's arguments) instead of being handed the working directory.
     */
    roots: undefined as string[] | undefined,
    /**
     * `auto`: probe for the 2026-07-28 revision (`server/discover`), else speak the 2025
     * protocol (`initialize`) on the same connection.
     */
    protocol: "auto" as const,
    /**
     * `auto`: tools that require it run as MCP tasks, and tools that allow it once a plain
     * call of them came close to `tool_call_timeout` (docs/tasks.md); `always`: every tool
     * that allows it; `never`: only those that require it.
     */
    tasks: "auto" as "auto" | "always" | "never",
  },

  agent: {
    /** Seconds one tool call may run (docs/configuration.md). */
    toolCallTimeoutSeconds: 30,
    /**
     * Seconds a message sent while servers are still connecting waits for them before it
     * goes to the model with the tools of the servers that are connected.
     */
    connectWaitSeconds: 5,
    /** Model requests in one turn (each tool round is one step). */
    maxSteps: 20,
    /** Model requests in the session; `undefined` is unlimited. */
    requestLimit: undefined as number | undefined,
    /** Tokens (prompt + completion) in the session; `undefined` is unlimited. */
    totalTokensLimit: undefined as number | undefined,
    /**
     * Tool search: `auto` offers the model a search tool instead of every definition once
     * the servers' tools exceed `maxTools` tools or `maxTokens` estimated tokens; `always`
     * and `never` do so regardless.
     */
    toolSearch: {
      mode: "auto" as "auto" | "always" | "never",
      maxTools: 40,
      maxTokens: 10_000,
    },
    /**
     * Servers' sampling requests answered in the session. Bounded by default: with
     * `"sampling": "allow"` or `--yes` nobody watches them, and one tool call was seen to
     * make thousands.
     */
    samplingRequestLimit: 100,
    /** Sampling requests a server may make while one tool call of it runs. */
    samplingPerToolCall: 10,
  },

  memory: {
    /**
     * `auto`: Redis when REDIS_URL or REDIS_HOST is set (or Memory.sentinels /
     * Memory.cluster_nodes), else the embedded store.
     */
    backend: "auto" as "auto" | "redis" | "file" | "off",
    /** Seconds a stored conversation lives; `undefined` keeps it forever. */
    ttlSeconds: undefined as number | undefined,
    /** Prefix of every Redis key patchbay writes. */
    keyPrefix: "patchbay",
  },

  hooks: {
    /** Seconds one hook command may run before it is ended (Claude Code's default too). */
    timeoutSeconds: 60,
  },

  redis: {
    host: "localhost",
    port: 6379,
    db: 0,
  },

  oauth: {
    /** A person logs in in the browser unless the entry says otherwise. */
    grant: "authorization_code",
    /** The most widely accepted `private_key_jwt` algorithm (RFC 7518 §3.1 "recommended"). */
    privateKeyAlg: "RS256",
    /**
     * Tokens are bearer tokens unless the entry asks for DPoP: a DPoP-bound token works
     * only at an MCP server that accepts the DPoP scheme, which the authorization server's
     * metadata does not promise.
     */
    dpop: false,
  },

  /** The OAuth callback address is fixed (docs/authentication.md). */
  oauthCallback: {
    host: "localhost",
    port: 3000,
    path: "/callback",
    /** Seconds a browser login may take before patchbay stops waiting for its callback. */
    timeoutSeconds: 300,
  },

  log: {
    /**
     * The log is rotated whenever it passes this many bytes, at start-up and while running:
     * `patchbay.log` becomes `patchbay.log.1`, which becomes `patchbay.log.2`, and so on.
     */
    rotateBytes: 10 * 1024 * 1024,
    /** Files kept, the current one included: at most `rotateBytes` × `files` on disk. */
    files: 3,
    /**
     * Lines one source (a server's stderr, a server's log notifications) may log per
     * second; the rest are dropped and counted in one "N lines dropped" line.
     */
    linesPerSecond: 200,
  },

  /** Secrets from helper programs and the keychain (docs/secrets.md). */
  secrets: {
    /**
     * Seconds a helper (`headers_helper`, `LLM.api_key_helper`) may run; then it is ended
     * with its process group.
     */
    helperTimeoutSeconds: 30,
    /** Largest output a helper may print; more is refused (headers or a key are small). */
    helperMaxOutputBytes: 64 * 1024,
    /** Seconds a headers helper's headers are used; `undefined`: until a 401 or reconnect. */
    headersHelperTtlSeconds: undefined as number | undefined,
    /** Seconds the key `LLM.api_key_helper` printed is used (Claude Code's five minutes). */
    apiKeyHelperTtlSeconds: 300,
    /** Seconds the keychain's tool may take: an unlock prompt waits for a person. */
    keychainTimeoutSeconds: 60,
    /** The keychain service every `${keychain:NAME}` entry is stored under. */
    keychainService: "patchbay",
  },

  trace: {
    /**
     * The wire trace is rotated whenever it passes this many bytes: `trace.jsonl` becomes
     * `trace.jsonl.1`, and so on (docs/trace.md).
     */
    rotateBytes: 50 * 1024 * 1024,
    /** Trace files kept, the current one included: at most `rotateBytes` × `files` on disk. */
    files: 3,
    /** A message longer than this (characters of its JSON) is kept up to it, the cut marked. */
    maxMessageChars: 64 * 1024,
    /** Trace lines kept in memory for `/trace show`. */
    recentLines: 500,
  },

  telemetry: {
    /** Where Deno's exporter sends OTLP without an endpoint named (Deno's own default). */
    endpoint: "http://localhost:4318",
    /** OTLP over HTTP with protobuf bodies (Deno's default); `http/json` is the other. */
    protocol: "http/protobuf",
    /** `service.name` of every span and metric. */
    serviceName: "patchbay",
    /** Prompts, answers, tool arguments and results stay out of spans unless asked for. */
    captureContent: false,
    /** A captured prompt, answer, argument or result is cut to this many characters. */
    maxContentChars: 16 * 1024,
    /** MCP requests awaiting their answer per server; the oldest go past this bound. */
    maxPendingRequests: 1000,
    /**
     * How long Deno's exporter waits for the collector on each export (unless
     * OTEL_EXPORTER_OTLP_TIMEOUT says): a collector that never answers delays patchbay's
     * exit by about this much, not by the OTLP default of 10 s.
     */
    exportTimeoutSeconds: 3,
  },
} as const;
